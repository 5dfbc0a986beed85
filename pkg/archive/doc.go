// Package archive holds the use-cases of archives, one file (or a few)
// each, over the same ports (Catalog, Permissions and the stores each
// declares) and the same rules (denied and absent are one 404, the
// outbox carries every OpenFGA write):
//
//   - Admission (archive.go): a BrowserHive manifest becomes an archives
//     row plus its queued OpenFGA tuples, in one transaction; and reconcile,
//     which registers captures whose level report recorded a manifest key
//     but whose archive never reached the ledger.
//   - Adding from the bucket (add.go): `ledgerctl archives add` admits
//     manifests named by key or prefix.
//   - The permission-filtered list and minting URLs (access.go, page.go,
//     cursor.go): Access pages through package visible and signs GETs.
//   - One archive's page (detail.go, thumbnail.go): its fields, why the
//     caller sees it, what it may do, and its picture.
//   - Shares (share.go): grant, list and revoke direct shares.
//   - Deletion (delete.go): a persisted state machine from the row to the
//     objects and the tuples.
//   - Direct captures (capture.go, quota.go, slots.go): capture pages now,
//     bounded per caller and per organization.
//
// They stay one package because they share those ports, the stand-in for
// an absent id and the error types; docs/architecture.md says why.
package archive
