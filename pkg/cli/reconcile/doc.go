// Package reconcile is `ledgerctl reconcile`: registers captures whose
// level report never reached the ledger.
package reconcile
