// Package version is `ledgerctl version`.
package version
