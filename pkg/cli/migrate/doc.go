// Package migrate is `ledgerctl migrate`: the ledger's schema migrations.
package migrate
