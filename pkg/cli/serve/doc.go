// Package serve is `ledgerctl serve`: the HTTP API, the console, the replay
// origins and the background workers, after a check of the API port.
package serve
