// Package drain is `ledgerctl drain`: delivers the OpenFGA tuples queued in
// the outbox, or shows its state (--status).
package drain
