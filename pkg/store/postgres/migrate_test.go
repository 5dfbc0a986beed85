package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

func TestMigrateUpDownUpAndConstraints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.EmptyDatabase(t)
	m, err := postgres.NewMigrator(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	latest := postgres.Available()[len(postgres.Available())-1]

	if err := m.Up(); err != nil {
		t.Fatal(err)
	}
	if err := m.Up(); err != nil { // idempotent
		t.Fatalf("second up: %v", err)
	}
	st, err := m.Status()
	if err != nil || st.Current != latest || st.Dirty || st.Pending() != 0 {
		t.Fatalf("after up: %+v %v", st, err)
	}
	for st.Current > 0 {
		if err := m.Down(); err != nil {
			t.Fatal(err)
		}
		if st, err = m.Status(); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Down(); err == nil {
		t.Error("down at version 0 must say there is nothing to revert")
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var tables int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema='public' AND table_name <> 'schema_migrations'`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Fatalf("%d tables left after down to zero", tables)
	}
	if err := m.Up(); err != nil {
		t.Fatal(err)
	}

	for _, table := range []string{"runs", "scripts"} {
		var exists bool
		_ = conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&exists)
		if exists {
			t.Errorf("historical table %s exists", table)
		}
	}

	exec := func(sql string, args ...any) error { _, err := conn.Exec(ctx, sql, args...); return err }
	crawl := `INSERT INTO crawls (id, seeds, max_depth, max_pages, per_host_delay_ms, host_parallelism, org_id, requested_by, state)
	          VALUES ($1, $2, 2, 30, 0, 1, 'acme', 'alice', $3)`
	ok := []struct {
		name, sql string
		args      []any
	}{
		{"archive", `INSERT INTO archives (task_id, bucket, object_key, source_url, captured_at) VALUES (gen_random_uuid(), 'b', 'k', 'https://e/', now())`, nil},
		{"running crawl", crawl, []any{"11111111-1111-4111-8111-111111111111", []string{"https://e/"}, "running"}},
		{"second running crawl", crawl, []any{"44444444-4444-4444-8444-444444444444", []string{"https://e/"}, "running"}},
		{"finished crawl alongside", crawl, []any{"22222222-2222-4222-8222-222222222222", []string{"https://e/"}, "succeeded"}},
		{"page", `INSERT INTO crawl_pages (crawl_id, url, depth, host) VALUES ('11111111-1111-4111-8111-111111111111', 'https://e/a', 0, 'e')`, nil},
		{"target", `INSERT INTO capture_targets (org_id, url) VALUES ('acme', 'HTTPS://e/')`, nil},
		{"decision", `INSERT INTO crawl_decisions (crawl_id, depth, rule, action, hostname, links) VALUES ('11111111-1111-4111-8111-111111111111', 1, 0, 'skip', 'e', 3)`, nil},
	}
	for _, c := range ok {
		if err := exec(c.sql, c.args...); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	rejected := []struct {
		name, sql string
		args      []any
	}{
		{"empty seeds array", crawl, []any{"33333333-3333-4333-8333-333333333333", []string{}, "succeeded"}},
		{"host capture ending before it started", `INSERT INTO host_captures (host, holder, kind, org_id, url, started_at, ended_at, expires_at, delay_ms, delay_source) VALUES ('e', gen_random_uuid(), 'crawl', 'acme', 'https://e/', now(), now() - interval '1 second', now(), 0, 'setting')`, nil},
		{"host capture of an unknown kind", `INSERT INTO host_captures (host, holder, kind, org_id, url, started_at, expires_at, delay_ms, delay_source) VALUES ('e', gen_random_uuid(), 'replica', 'acme', 'https://e/', now(), now(), 0, 'setting')`, nil},
		{"duplicate bucket/object_key", `INSERT INTO archives (task_id, bucket, object_key, source_url, captured_at) VALUES (gen_random_uuid(), 'b', 'k', 'https://e/2', now())`, nil},
		{"duplicate crawl_id/url_hash", `INSERT INTO crawl_pages (crawl_id, url, depth, host) VALUES ('11111111-1111-4111-8111-111111111111', 'https://e/a', 1, 'e')`, nil},
		{"non-http capture target", `INSERT INTO capture_targets (org_id, url) VALUES ('acme', 'ftp://e/')`, nil},
		{"duplicate target in one org", `INSERT INTO capture_targets (org_id, url) VALUES ('acme', 'HTTPS://e/')`, nil},
		{"untrimmed page url", `INSERT INTO crawl_pages (crawl_id, url, depth, host) VALUES ('11111111-1111-4111-8111-111111111111', ' https://e/b', 0, 'e')`, nil},
		{"unknown crawl state", crawl, []any{"55555555-5555-4555-8555-555555555555", []string{"https://e/"}, "paused"}},
		{"outbox both delivered and dead", `INSERT INTO fga_outbox (payload, processed_at, dead_at) VALUES ('{}', now(), now())`, nil},
		{"decision with unknown action", `INSERT INTO crawl_decisions (crawl_id, depth, rule, action, hostname, links) VALUES ('11111111-1111-4111-8111-111111111111', 1, 1, 'maybe', 'f', 1)`, nil},
	}
	for _, c := range rejected {
		t.Run(c.name, func(t *testing.T) {
			if err := exec(c.sql, c.args...); err == nil {
				t.Errorf("accepted a bad row")
			}
		})
	}
	if err := exec(`INSERT INTO capture_targets (org_id, url) VALUES ('other', 'HTTPS://e/')`); err != nil {
		t.Errorf("the same target in another org must be allowed: %v", err)
	}
	// url_hash really is sha256(url).
	var same bool
	if err := conn.QueryRow(ctx, `SELECT url_hash = digest(url, 'sha256') FROM crawl_pages LIMIT 1`).Scan(&same); err != nil || !same {
		t.Errorf("url_hash is not digest(url,'sha256'): %v", err)
	}
	// Several crawls run at once (the bound is per organization, kept by
	// the start, not by an index).
	if err := exec(crawl, "66666666-6666-4666-8666-666666666666", []string{"https://e/"}, "running"); err != nil {
		t.Errorf("second running crawl: %v", err)
	}
}
