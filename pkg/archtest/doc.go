// Package archtest holds the import-direction test: every package of the
// module sits in one layer, and an import is allowed only along an arrow of
// the table in archtest_test.go (docs/architecture.md shows the same table).
// The package has no code; `go test ./pkg/archtest` runs `go list` over the
// module and fails on any import that points the wrong way.
package archtest
