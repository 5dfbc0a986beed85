// Package migrations embeds the ledger's SQL migrations (golang-migrate
// format, NNNNNN_name.up.sql / .down.sql) so the binary carries its schema.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
