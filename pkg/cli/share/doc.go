// Package share is `ledgerctl share`: grant, list and revoke the time-bound
// shares of an archive.
package share
