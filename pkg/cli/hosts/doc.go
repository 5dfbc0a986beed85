// Package hosts is `ledgerctl hosts`: the per-host politeness evidence of
// every crawl and direct capture together.
package hosts
