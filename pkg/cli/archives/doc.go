// Package archives is `ledgerctl archives`: add (register what a capture
// server wrote), list, url, open (a replay link) and delete.
package archives
