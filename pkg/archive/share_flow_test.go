package archive_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// testClock is the server's clock, settable: shares are granted at it and
// checks evaluate their condition at it.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// managed is one test's ledger with archives owned by alice in acme, and the
// share, delete and access use-cases on one clock.
type managed struct {
	env    *apptest.Env
	st     *postgres.Store
	clock  *testClock
	shares *archive.Shares
	del    *archive.Deleter
	access *archive.Access
}

func newManaged(t *testing.T) *managed {
	t.Helper()
	ctx := context.Background()
	env := apptest.New(t)
	st, err := env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clock := &testClock{t: time.Now().UTC()}
	m := &managed{env: env, st: st, clock: clock}
	m.shares = &archive.Shares{Perms: authz.Managers{Client: env.FGA}, Store: st, Now: clock.Now}
	m.del = &archive.Deleter{Perms: authz.Managers{Client: env.FGA}, Store: st, Objects: env.Blob, Bucket: env.Bucket, Now: clock.Now}
	m.access = &archive.Access{Perms: app.Permissions{Client: env.FGA, Now: clock.Now}, Catalog: st, Signer: env.Blob}
	return m
}

// captureKeys are the objects BrowserHive leaves for one capture.
type captureKeys struct{ wacz, manifest, links string }

// add puts a capture (WACZ, manifest, links file) into the bucket, registers
// it with `archives add`'s use-case for alice in acme, drains the outbox,
// and returns the archive id.
func (m *managed) add(t *testing.T) (string, captureKeys) {
	t.Helper()
	ctx := context.Background()
	task := uuid.NewString()
	stem := "bh/" + task + "_c0ffee00"
	k := captureKeys{stem + ".wacz", stem + ".result.json", stem + ".links.json"}
	for key, body := range map[string][]byte{
		k.wacz:     []byte("PK\x03\x04 " + task),
		k.manifest: apptest.Manifest(task, "success", "https://example.com/"+task, m.env.Bucket, k.wacz, time.Now().Add(-time.Hour)),
		k.links:    []byte(`{"links":[]}`),
	} {
		if err := m.env.Blob.Put(ctx, m.env.Bucket, key, "application/octet-stream", body); err != nil {
			t.Fatal(err)
		}
	}
	adder := &archive.Adder{Store: m.st, Objects: m.env.Blob, Bucket: m.env.Bucket}
	res, err := adder.Add(ctx, archive.AddRequest{Keys: []string{k.manifest}, Org: "acme", SubmittedBy: "alice"})
	if err != nil || res.Registered != 1 {
		t.Fatalf("add: %+v %v", res, err)
	}
	m.drain(t)
	return res.Results[0].ArchiveID, k
}

func (m *managed) drain(t *testing.T) outbox.Result {
	t.Helper()
	st, w, err := m.env.App.OutboxDeps(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r, err := outbox.Drain(context.Background(), st, w, outbox.Options{})
	if err != nil || r.Failed+r.Dead > 0 {
		t.Fatalf("drain: %+v %v", r, err)
	}
	return r
}

// canView is the mint path's question, at the clock.
func (m *managed) canView(t *testing.T, subject string, orgs []string, id string) bool {
	t.Helper()
	_, err := m.access.URL(context.Background(), subject, orgs, id)
	if err != nil && !errors.Is(err, ledger.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// TestShareReplacesTheGranteesTuple: a second share to the same grantee —
// while the first is active, and after it expired (its tuple is still in
// OpenFGA) — replaces the first: the ledger queues the old tuple's delete
// before the new one's write, OpenFGA ends with the new condition, and the
// trail shows the first as replaced.
func TestShareReplacesTheGranteesTuple(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newManaged(t)
	id, _ := m.add(t)
	carol := "carol"
	first, err := m.shares.Grant(ctx, "alice", id, archive.ShareRequest{User: &carol, Duration: "1h"})
	if err != nil || first.Status != archive.ShareActive || len(first.Replaced) != 0 {
		t.Fatalf("first: %+v %v", first, err)
	}
	m.drain(t)
	// A longer window while the first is active.
	m.clock.Add(10 * time.Minute)
	second, err := m.shares.Grant(ctx, "alice", id, archive.ShareRequest{User: &carol, Duration: "2h"})
	if err != nil || len(second.Replaced) != 1 || second.Replaced[0].ID != first.ID || second.Replaced[0].Status != archive.ShareReplaced ||
		*second.Replaced[0].ReplacedBy != second.ID {
		t.Fatalf("second: %+v %v", second, err)
	}
	m.drain(t)
	m.clock.Add(90 * time.Minute) // past the first window, inside the second
	if !m.canView(t, "carol", nil, id) {
		t.Error("carol cannot view inside the replacing share")
	}
	// After the second expired, a third: the expired tuple is replaced.
	m.clock.Add(2 * time.Hour)
	if m.canView(t, "carol", nil, id) {
		t.Fatal("carol can view after the share expired")
	}
	third, err := m.shares.Grant(ctx, "alice", id, archive.ShareRequest{User: &carol, Duration: "30m"})
	if err != nil || len(third.Replaced) != 1 || third.Replaced[0].Status != archive.ShareExpired {
		t.Fatalf("third: %+v %v", third, err)
	}
	m.drain(t)
	if !m.canView(t, "carol", nil, id) {
		t.Error("carol cannot view inside the third share")
	}
	// OpenFGA holds exactly the third share's tuple.
	var stored []authz.Tuple
	for next := ""; ; {
		page, n, err := m.env.FGA.ReadTuples(ctx, next)
		if err != nil {
			t.Fatal(err)
		}
		for _, tu := range page {
			if tu.User == "user:carol" {
				stored = append(stored, tu)
			}
		}
		if next = n; next == "" {
			break
		}
	}
	if len(stored) != 1 || stored[0].Condition == nil ||
		stored[0].Condition.Context["grant_duration"] != "1800s" ||
		stored[0].Condition.Context["grant_time"] != third.GrantedAt.Format(time.RFC3339) {
		t.Errorf("stored tuples for carol: %+v", stored)
	}
	l, err := m.shares.List(ctx, "alice", id)
	// The second was replaced once it had expired: it shows as expired.
	if err != nil || len(l.Active) != 1 || l.Active[0].ID != third.ID || len(l.Past) != 2 ||
		l.Past[0].ID != second.ID || l.Past[0].Status != archive.ShareExpired ||
		l.Past[1].ID != first.ID || l.Past[1].Status != archive.ShareReplaced {
		t.Errorf("list: %+v %v", l, err)
	}
}

// TestSharesConcurrentGrants: grants to the same grantee at the same time
// end with one tuple-holding share, whatever the interleaving (the archive's
// row is the lock), and every other one replaced.
func TestSharesConcurrentGrants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newManaged(t)
	id, _ := m.add(t)
	dave := "dave"
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := m.shares.Grant(ctx, "alice", id, archive.ShareRequest{User: &dave, Duration: "1h"})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	l, err := m.shares.List(ctx, "alice", id)
	if err != nil || len(l.Active) != 1 || len(l.Past) != 7 {
		t.Fatalf("list: %d active, %d past, %v", len(l.Active), len(l.Past), err)
	}
	m.drain(t)
	if !m.canView(t, "dave", nil, id) {
		t.Error("dave cannot view after concurrent grants")
	}
}

// TestRevokeAndListAll: revoke is idempotent (a second revoke changes
// nothing), needs can_share on the share's archive, and must name the
// share's own archive on the API path; ListAll shows only the shares of
// archives the caller may share.
func TestRevokeAndListAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newManaged(t)
	a1, _ := m.add(t)
	a2, _ := m.add(t)
	carol, partner := "carol", "partner"
	s1, err := m.shares.Grant(ctx, "alice", a1, archive.ShareRequest{User: &carol, Duration: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := m.shares.Grant(ctx, "alice", a2, archive.ShareRequest{Organization: &partner, Duration: "7d"})
	if err != nil || s2.Organization == nil || *s2.Organization != "partner" || s2.User != nil || s2.Duration != "168h" {
		t.Fatalf("org share: %+v %v", s2, err)
	}
	m.drain(t)
	if !m.canView(t, "frank", []string{"partner"}, a2) || m.canView(t, "frank", []string{"other"}, a2) {
		t.Error("the organization share does not follow membership")
	}

	before := testenv.TakeSnapshot(t, m.env.DSN)
	for _, tc := range []struct {
		name, who, archive, share string
	}{
		{"another archive's path", "alice", a2, s1.ID},
		{"an unknown share", "alice", "", uuid.NewString()},
		{"a member of acme", "bob", "", s1.ID},
		{"the grantee", "carol", "", s1.ID},
	} {
		if _, _, err := m.shares.Revoke(ctx, tc.who, tc.archive, tc.share); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("%s: %v, want not found", tc.name, err)
		}
	}
	testenv.Unchanged(t, m.env.DSN, before)

	got, changed, err := m.shares.Revoke(ctx, "alice", a1, s1.ID)
	if err != nil || !changed || got.Status != archive.ShareRevoked || got.RevokedBy == nil || *got.RevokedBy != "alice" {
		t.Fatalf("revoke: %+v %v %v", got, changed, err)
	}
	if !m.canView(t, "carol", nil, a1) {
		t.Error("the revoke took effect before the outbox was drained")
	}
	m.drain(t)
	if m.canView(t, "carol", nil, a1) {
		t.Error("carol can view after the revoke was drained")
	}
	before = testenv.TakeSnapshot(t, m.env.DSN)
	if again, changed, err := m.shares.Revoke(ctx, "alice", "", s1.ID); err != nil || changed || again.Status != archive.ShareRevoked {
		t.Errorf("second revoke: %+v %v %v", again, changed, err)
	}
	testenv.Unchanged(t, m.env.DSN, before)

	// erin, admin of acme, sees both archives' shares; bob, a member, none;
	// an admin of another organization none.
	if err := m.env.FGA.Write(ctx, []authz.Tuple{
		{User: "user:erin", Relation: "admin", Object: "organization:acme"},
		{User: "user:oscar", Relation: "admin", Object: "organization:contoso"},
	}, nil); err != nil {
		t.Fatal(err)
	}
	all, err := m.shares.ListAll(ctx, "erin", 100)
	if err != nil || len(all.Active) != 1 || all.Active[0].ID != s2.ID || len(all.Past) != 1 || all.Past[0].ID != s1.ID || all.Truncated {
		t.Errorf("erin's list: %+v %v", all, err)
	}
	for _, who := range []string{"bob", "oscar", "carol"} {
		if l, err := m.shares.ListAll(ctx, who, 100); err != nil || len(l.Active)+len(l.Past) != 0 {
			t.Errorf("%s's list: %+v %v", who, l, err)
		}
		if _, err := m.shares.List(ctx, who, a1); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("%s lists a1's shares: %v", who, err)
		}
	}
	if l, err := m.shares.ListAll(ctx, "erin", 1); err != nil || len(l.Active)+len(l.Past) != 1 || !l.Truncated {
		t.Errorf("limit 1: %+v %v", l, err)
	}
}

// TestShareBadInputWritesNothing: every refused grant leaves every table as
// it was, and says which field is wrong.
func TestShareBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newManaged(t)
	id, _ := m.add(t)
	before := testenv.TakeSnapshot(t, m.env.DSN)
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name    string
		who, id string
		req     archive.ShareRequest
		field   string // "" for not found
	}{
		{"unknown archive", "alice", uuid.NewString(), archive.ShareRequest{User: str("carol"), Duration: "1h"}, ""},
		{"member may not share", "bob", id, archive.ShareRequest{User: str("carol"), Duration: "1h"}, ""},
		{"zero duration", "alice", id, archive.ShareRequest{User: str("carol"), Duration: "0s"}, "duration"},
		{"negative duration", "alice", id, archive.ShareRequest{User: str("carol"), Duration: "-5m"}, "duration"},
		{"over the cap", "alice", id, archive.ShareRequest{User: str("carol"), Duration: "91d"}, "duration"},
		{"unparsable", "alice", id, archive.ShareRequest{User: str("carol"), Duration: "next week"}, "duration"},
		{"empty user", "alice", id, archive.ShareRequest{User: str(""), Duration: "1h"}, "user"},
		{"invalid user", "alice", id, archive.ShareRequest{User: str("user:carol"), Duration: "1h"}, "user"},
		{"NUL in user", "alice", id, archive.ShareRequest{User: str("ca\x00rol"), Duration: "1h"}, "user"},
	} {
		_, err := m.shares.Grant(ctx, tc.who, tc.id, tc.req)
		var fe *ledger.FieldError
		switch {
		case tc.field == "" && !errors.Is(err, ledger.ErrNotFound):
			t.Errorf("%s: %v, want not found", tc.name, err)
		case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
			t.Errorf("%s: %v, want a %s error", tc.name, err, tc.field)
		}
	}
	testenv.Unchanged(t, m.env.DSN, before)
	if n := m.count(t, `SELECT count(*) FROM shares`); n != 0 {
		t.Errorf("%d shares written", n)
	}
}

func (m *managed) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := m.st.Pool.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(fmt.Errorf("%s: %w", q, err))
	}
	return n
}

// TestListAllIsNotStarvedByOtherTenants: another tenant's shares, more than
// the list examines at most and all newer than acme's, do not push acme's
// out of its admin's list across archives: the list reads only the shares
// of archives of the organizations the caller administers (and the
// caller's own), so erin sees acme's share, whole and not truncated, and
// bob, bobco's owner, sees his and none of acme's.
func TestListAllIsNotStarvedByOtherTenants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newManaged(t)
	a1, _ := m.add(t)
	carol := "carol"
	mine, err := m.shares.Grant(ctx, "alice", a1, archive.ShareRequest{User: &carol, Duration: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	// bobco's archive, owned by bob.
	task := uuid.NewString()
	stem := "bh/" + task + "_b0b"
	for key, body := range map[string][]byte{
		stem + ".wacz":        []byte("PK\x03\x04 " + task),
		stem + ".result.json": apptest.Manifest(task, "success", "https://bobco.example/", m.env.Bucket, stem+".wacz", time.Now().Add(-time.Hour)),
		stem + ".links.json":  []byte(`{"links":[]}`),
	} {
		if err := m.env.Blob.Put(ctx, m.env.Bucket, key, "application/octet-stream", body); err != nil {
			t.Fatal(err)
		}
	}
	adder := &archive.Adder{Store: m.st, Objects: m.env.Blob, Bucket: m.env.Bucket}
	res, err := adder.Add(ctx, archive.AddRequest{Keys: []string{stem + ".result.json"}, Org: "bobco", SubmittedBy: "bob"})
	if err != nil || res.Registered != 1 {
		t.Fatalf("add: %+v %v", res, err)
	}
	bobArchive := res.Results[0].ArchiveID
	m.drain(t)
	// bob shares his archive with 5,050 people, all after acme's share (the
	// rows as Grant writes them; written at once to keep the test short).
	if _, err := m.st.Pool.Exec(ctx, `INSERT INTO shares (archive_id, grantee_type, grantee, granted_by, granted_at, duration_s, expires_at)
		SELECT $1::uuid, 'user', 'guest' || g, 'bob', $2::timestamptz + g * interval '1 second', 3600,
		       $2::timestamptz + g * interval '1 second' + interval '3600 seconds'
		FROM generate_series(1, 5050) g`, bobArchive, mine.GrantedAt); err != nil {
		t.Fatal(err)
	}
	if err := m.env.FGA.Write(ctx, []authz.Tuple{{User: "user:erin", Relation: "admin", Object: "organization:acme"}}, nil); err != nil {
		t.Fatal(err)
	}
	all, err := m.shares.ListAll(ctx, "erin", 100)
	if err != nil || len(all.Active) != 1 || all.Active[0].ID != mine.ID || len(all.Past) != 0 || all.Truncated {
		t.Errorf("erin's list: %d active, %d past, truncated %v, %v; want acme's one share", len(all.Active), len(all.Past), all.Truncated, err)
	}
	bobs, err := m.shares.ListAll(ctx, "bob", 100)
	if err != nil || len(bobs.Active) != 100 || !bobs.Truncated {
		t.Fatalf("bob's list: %d active, truncated %v, %v", len(bobs.Active), bobs.Truncated, err)
	}
	for _, s := range bobs.Active {
		if s.ArchiveID != bobArchive {
			t.Errorf("bob's list shows a share of %s", s.ArchiveID)
		}
	}
}
