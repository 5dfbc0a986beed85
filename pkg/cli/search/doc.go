// Package search is `ledgerctl search`: a full-text query as a person, and
// the index's status and reindex.
package search
