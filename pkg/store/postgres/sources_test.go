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
	for { // back to 7: no sources yet
		st, err := m.Status()
		if err != nil {
			t.Fatal(err)
		}
		if st.Current <= 7 {
			break
		}
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

// TestSearchScope: the archive ids a search names beside its grantee keys
// (active shares as RecordedFor counts them, and archives recorded for the
// caller that wait to be indexed), the bounds that send a search back to
// narrowing after the index, the grantee keys the indexer writes, and an
// indexed archive that gains a grantee being indexed again.
func TestSearchScope(t *testing.T) {
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
	add := func(task, org string, owner *string) string {
		t.Helper()
		id, ok, err := st.InsertArchive(ctx, ledger.NewArchive{TaskID: task, Bucket: "b", ObjectKey: uuid.NewString(), SourceURL: "https://e/", CapturedAt: now},
			func(id string) ledger.OutboxPayload { return ledger.AdmissionTuples(id, task, org, owner) })
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		return id
	}
	share := func(archive, typ, grantee string, revoked bool) {
		t.Helper()
		q := `INSERT INTO shares (archive_id, grantee_type, grantee, granted_by, granted_at, duration_s, expires_at) VALUES ($1, $2, $3, 'x', $4::timestamptz, 3600, $4::timestamptz + interval '1 hour')`
		if revoked {
			q = `INSERT INTO shares (archive_id, grantee_type, grantee, granted_by, granted_at, duration_s, expires_at, revoked_at, revoked_by, revoke_reason)
				VALUES ($1, $2, $3, 'x', $4::timestamptz, 3600, $4::timestamptz + interval '1 hour', $4::timestamptz, 'x', 'revoked')`
		}
		if _, err := pool.Exec(ctx, q, archive, typ, grantee, now); err != nil {
			t.Fatal(err)
		}
	}
	// Names of this test's own, so other tests' archives do not count.
	org, other, user := "scope-"+uuid.NewString()[:8], "scope-"+uuid.NewString()[:8], "u-"+uuid.NewString()[:8]
	taskA := uuid.NewString()
	mine := add(taskA, org, &user)
	theirs := add(uuid.NewString(), other, nil)
	toMe := add(uuid.NewString(), other, nil)
	share(toMe, "user", user, false)
	revoked := add(uuid.NewString(), other, nil)
	share(revoked, "user", user, true)

	g, err := st.ArchiveGrantees(ctx, []string{mine, theirs, "not-a-uuid"})
	if err != nil || !slices.Equal(g[mine], []string{"org:" + org, "user:" + user}) || !slices.Equal(g[theirs], []string{"org:" + other}) || len(g) != 2 {
		t.Fatalf("grantees %v %v", g, err)
	}
	v := ledger.Viewer{Subject: user, Orgs: []string{org}}
	scope := func(max int) ([]string, bool) {
		t.Helper()
		ids, ok, err := st.SearchScope(ctx, v, now, max)
		if err != nil {
			t.Fatal(err)
		}
		return ids, ok
	}
	// Other tests' archives are never recorded for this test's names; the
	// bound is set past how many of theirs may be waiting.
	if err := st.MarkIndexed(ctx, []string{mine, theirs, toMe, revoked}); err != nil {
		t.Fatal(err)
	}
	if ids, ok := scope(1000000); !ok || !slices.Equal(ids, []string{toMe}) {
		t.Fatalf("everything indexed: %v %v, want the shared one", ids, ok)
	}
	// Waiting to be indexed: mine is named (its pages may lack my key),
	// theirs is not.
	if err := st.MarkUnindexed(ctx, []string{mine, theirs}); err != nil {
		t.Fatal(err)
	}
	want := []string{mine, toMe}
	slices.Sort(want)
	if ids, ok := scope(1000000); !ok || !slices.Equal(ids, want) {
		t.Fatalf("two waiting: %v %v, want %v", ids, ok, want)
	}
	if _, ok := scope(1); ok {
		t.Fatal("more waiting than the bound: the scope must give up")
	}
	if err := st.MarkIndexed(ctx, []string{mine, theirs}); err != nil {
		t.Fatal(err)
	}
	// An outsider's scope is empty.
	if ids, ok, err := st.SearchScope(ctx, ledger.Viewer{Subject: "mallory-" + user}, now, 1000000); err != nil || !ok || len(ids) != 0 {
		t.Fatalf("outsider: %v %v %v", ids, ok, err)
	}

	// The job of mine gains an organization through a second archive:
	// mine is to be indexed again, with the new key.
	newOrg := "scope-" + uuid.NewString()[:8]
	second := add(taskA, newOrg, nil)
	var unindexed bool
	if err := pool.QueryRow(ctx, `SELECT indexed_at IS NULL FROM archives WHERE id = $1`, mine).Scan(&unindexed); err != nil || !unindexed {
		t.Fatalf("an indexed archive that gained a grantee: unindexed %v (%v)", unindexed, err)
	}
	if g, err := st.ArchiveGrantees(ctx, []string{mine, second}); err != nil || !slices.Contains(g[mine], "org:"+newOrg) || !slices.Equal(g[mine], g[second]) {
		t.Fatalf("grantees after the job gained one: %v %v", g, err)
	}
	// theirs gained nothing and stays indexed.
	if err := pool.QueryRow(ctx, `SELECT indexed_at IS NULL FROM archives WHERE id = $1`, theirs).Scan(&unindexed); err != nil || unindexed {
		t.Fatalf("an archive that gained nothing: unindexed %v (%v)", unindexed, err)
	}
}

// TestNewArchiveWrittenOnce: an archive's grantees are recorded in the
// transaction that registers it without writing its row a second time (a
// new archive waits to be indexed already; marking it so again only left
// a dead row version and six index entries behind per archive), while an
// older archive of the same job that gains a grantee is still marked to be
// indexed again. Each archive's row version is read by its place in the
// table (ctid), in a database of its own: a row written twice has moved.
func TestNewArchiveWrittenOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := postgres.Open(ctx, testenv.Database(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st := &postgres.Store{Pool: pool}
	task, alice := uuid.NewString(), "alice"
	add := func(key, org string) string {
		t.Helper()
		id, ok, err := st.InsertArchive(ctx, ledger.NewArchive{TaskID: task, Bucket: "b", ObjectKey: key, SourceURL: "https://e/", CapturedAt: time.Now()},
			func(id string) ledger.OutboxPayload { return ledger.AdmissionTuples(id, task, org, &alice) })
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		return id
	}
	row := func(id string) (ctid string, indexed bool, sources []string) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT a.ctid::text, a.indexed_at IS NOT NULL,
			(SELECT array_agg(s.kind || ':' || s.principal ORDER BY s.kind, s.principal) FROM archive_sources s WHERE s.archive_id = a.id)
			FROM archives a WHERE a.id = $1`, id).Scan(&ctid, &indexed, &sources); err != nil {
			t.Fatal(err)
		}
		return
	}
	first := add("k1", "acme")
	if ctid, indexed, sources := row(first); ctid != "(0,1)" || indexed || !slices.Equal(sources, []string{"organization:acme", "owner:alice"}) {
		t.Fatalf("the first archive: row at %s (want (0,1): written once), indexed %v, sources %v", ctid, indexed, sources)
	}
	if _, err := pool.Exec(ctx, `UPDATE archives SET indexed_at = now() WHERE id = $1`, first); err != nil { // (0,2)
		t.Fatal(err)
	}
	// The same job admitted for another organization: the new archive is
	// written once, the first one gains contoso and waits to be indexed.
	second := add("k2", "contoso")
	if ctid, indexed, sources := row(second); ctid != "(0,3)" || indexed ||
		!slices.Equal(sources, []string{"organization:acme", "organization:contoso", "owner:alice"}) {
		t.Errorf("the second archive: row at %s (want (0,3): written once), indexed %v, sources %v", ctid, indexed, sources)
	}
	if _, indexed, sources := row(first); indexed || !slices.Equal(sources, []string{"organization:acme", "organization:contoso", "owner:alice"}) {
		t.Errorf("the first archive after its job gained contoso: indexed %v (want waiting to be indexed again), sources %v", indexed, sources)
	}
}
