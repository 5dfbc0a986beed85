package postgres_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestListSourcesBackfill: migration 8 gives the archives a ledger admitted
// before it the grantees their queued admission tuples name (delivered,
// pending or dead outbox rows alike), job-wide; other tuples grant nothing.
func TestListSourcesBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.EmptyDatabase(t)
	m, err := postgres.NewMigrator(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Up(); err != nil {
		t.Fatal(err)
	}
	for st, _ := m.Status(); st.Current > 7; st, _ = m.Status() { // back to 7: no sources yet
		if err := m.Down(); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	alice := "alice"
	taskA, taskB := uuid.NewString(), uuid.NewString()
	insert := func(task, key string, p ledger.OutboxPayload, processed bool) string {
		t.Helper()
		var id string
		if err := conn.QueryRow(ctx, `INSERT INTO archives (task_id, bucket, object_key, source_url, captured_at)
			VALUES ($1, 'b', $2, 'https://e/', now()) RETURNING id::text`, task, key).Scan(&id); err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(p)
		if _, err := conn.Exec(ctx, `INSERT INTO fga_outbox (payload, processed_at) VALUES ($1::jsonb, CASE WHEN $2 THEN now() END)`, string(data), processed); err != nil {
			t.Fatal(err)
		}
		return id
	}
	a1 := insert(taskA, "k1", ledger.AdmissionTuples("x", taskA, "acme", &alice), true)
	// The same job admitted again for another organization, still pending.
	a2 := insert(taskA, "k2", ledger.AdmissionTuples("y", taskA, "contoso", nil), false)
	// A share's tuple and a job tuple of a relation that grants nothing.
	b1 := insert(taskB, "k3", ledger.OutboxPayload{Writes: []ledger.Tuple{
		{User: "user:mallory", Relation: "viewer", Object: "archive:" + uuid.NewString()},
		{User: "user:mallory", Relation: "member", Object: "capture_job:" + taskB},
	}}, true)

	if err := m.Up(); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	rows, err := conn.Query(ctx, `SELECT archive_id::text, kind || ':' || principal FROM archive_sources ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, s string
		if err := rows.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		got[id] = append(got[id], s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"organization:acme", "organization:contoso", "owner:alice"}
	if !slices.Equal(got[a1], want) || !slices.Equal(got[a2], want) || len(got[b1]) != 0 || len(got) != 2 {
		t.Fatalf("backfilled sources %v, want %v on both archives of the job and none on %s", got, want, b1)
	}

	// After the migration the admission path records them itself, job-wide.
	pool, err := postgres.Open(ctx, dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st := &postgres.Store{Pool: pool}
	bob := "bob"
	a3, ok, err := st.InsertArchive(ctx, ledger.NewArchive{TaskID: taskA, Bucket: "b", ObjectKey: "k4", SourceURL: "https://e/", CapturedAt: time.Now()},
		func(id string) ledger.OutboxPayload { return ledger.AdmissionTuples(id, taskA, "initech", &bob) })
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM archive_sources WHERE archive_id = ANY($1::uuid[]) AND principal IN ('initech', 'bob')`,
		[]string{a1, a2, a3}).Scan(&n); err != nil || n != 6 {
		t.Fatalf("the new grantees reach %d of 6 (archive, grantee) pairs: %v", n, err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM archive_sources WHERE archive_id = $1`, a3).Scan(&n); err != nil || n != 5 {
		t.Fatalf("the new archive has %d grantees, want its job's 5: %v", n, err)
	}
}

// TestRecordedFor: which archives search may ask OpenFGA about for a
// caller: those of its organizations, those it owns, those shared with it
// or one of its organizations and not ended (more than a minute ago), by id;
// never a revoked share's, another caller's, or an id that is not a UUID.
func TestRecordedFor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.Database(t)
	pool, err := postgres.Open(ctx, dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st := &postgres.Store{Pool: pool}
	now := time.Now().UTC()
	add := func(org string, owner *string) string {
		t.Helper()
		task := uuid.NewString()
		id, ok, err := st.InsertArchive(ctx, ledger.NewArchive{TaskID: task, Bucket: "b", ObjectKey: task, SourceURL: "https://e/", CapturedAt: now},
			func(id string) ledger.OutboxPayload { return ledger.AdmissionTuples(id, task, org, owner) })
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		return id
	}
	share := func(archive, typ, grantee string, expires time.Time, revoked bool) {
		t.Helper()
		granted := expires.Add(-time.Hour)
		q := `INSERT INTO shares (archive_id, grantee_type, grantee, granted_by, granted_at, duration_s, expires_at) VALUES ($1, $2, $3, 'x', $4, 3600, $5)`
		if revoked {
			q = `INSERT INTO shares (archive_id, grantee_type, grantee, granted_by, granted_at, duration_s, expires_at, revoked_at, revoked_by, revoke_reason)
				VALUES ($1, $2, $3, 'x', $4, 3600, $5, $4, 'x', 'revoked')`
		}
		if _, err := pool.Exec(ctx, q, archive, typ, grantee, granted, expires); err != nil {
			t.Fatal(err)
		}
	}
	bob := "bob"
	ofAcme := add("acme", nil)
	bobs := add("contoso", &bob)
	toBob := add("contoso", nil)
	share(toBob, "user", "bob", now.Add(time.Hour), false)
	toPartner := add("contoso", nil)
	share(toPartner, "organization", "partner", now.Add(time.Hour), false)
	justEnded := add("contoso", nil)
	share(justEnded, "user", "bob", now.Add(-30*time.Second), false)
	ended := add("contoso", nil)
	share(ended, "user", "bob", now.Add(-2*time.Minute), false)
	revoked := add("contoso", nil)
	share(revoked, "user", "bob", now.Add(time.Hour), true)
	toCarol := add("contoso", nil)
	share(toCarol, "user", "carol", now.Add(time.Hour), false)

	ids := []string{ofAcme, bobs, toBob, toPartner, justEnded, ended, revoked, toCarol, "not-a-uuid"}
	got, err := st.RecordedFor(ctx, ledger.Viewer{Subject: "bob", Orgs: []string{"acme", "partner"}}, ids, now)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{ofAcme: true, bobs: true, toBob: true, toPartner: true, justEnded: true}
	if len(got) != len(want) {
		t.Errorf("recorded %d archives, want %d", len(got), len(want))
	}
	for _, id := range ids {
		if got[id] != want[id] {
			t.Errorf("archive %s: recorded %v, want %v", id, got[id], want[id])
		}
	}
	if got, err := st.RecordedFor(ctx, ledger.Viewer{Subject: "mallory"}, ids, now); err != nil || len(got) != 0 {
		t.Errorf("an outsider: %v %v", got, err)
	}
}
