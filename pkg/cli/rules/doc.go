// Package rules is `ledgerctl rules check`: a crawl's rules evaluated for
// URLs, as the API's endpoint does, without I/O.
package rules
