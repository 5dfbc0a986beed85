// Package capture is `ledgerctl capture`: the built-in capturer run from the
// command line, its archives registered and their permissions delivered.
package capture
