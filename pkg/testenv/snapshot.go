package testenv

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Snapshot is every table of a database's public schema with its row count
// and a checksum of its rows: two equal snapshots mean nothing was written.
type Snapshot map[string]string

// TakeSnapshot reads the snapshot of the database at dsn.
func TakeSnapshot(t testing.TB, dsn string) Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("snapshot: connect: %v", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`)
	if err != nil {
		t.Fatalf("snapshot: list tables: %v", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("snapshot: list tables: %v", err)
	}
	snap := make(Snapshot, len(tables))
	for _, tbl := range tables {
		var n int64
		var sum *string
		q := fmt.Sprintf(`SELECT count(*), md5(string_agg(r::text, E'\n' ORDER BY r::text)) FROM %s r`, pgx.Identifier{tbl}.Sanitize())
		if err := conn.QueryRow(ctx, q).Scan(&n, &sum); err != nil {
			t.Fatalf("snapshot: %s: %v", tbl, err)
		}
		s := "-"
		if sum != nil {
			s = *sum
		}
		snap[tbl] = fmt.Sprintf("%d rows, md5 %s", n, s)
	}
	return snap
}

// Diff lists the tables whose rows differ between a and b ("" when none).
func (a Snapshot) Diff(b Snapshot) string {
	names := map[string]bool{}
	for k := range a {
		names[k] = true
	}
	for k := range b {
		names[k] = true
	}
	var out []string
	for k := range names {
		if a[k] != b[k] {
			out = append(out, fmt.Sprintf("%s: %s -> %s", k, a[k], b[k]))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// Unchanged fails the test when the database at dsn differs from before.
func Unchanged(t testing.TB, dsn string, before Snapshot) {
	t.Helper()
	if d := before.Diff(TakeSnapshot(t, dsn)); d != "" {
		t.Errorf("the database changed: %s", d)
	}
}

// Connect opens one connection to dsn, closed when the test ends.
func Connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}
