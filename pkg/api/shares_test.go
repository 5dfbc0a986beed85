package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// switchRemover is the real S3 client whose deletes fail while failing is
// set (S3 unreachable for a while).
type switchRemover struct {
	real    *blob.Client
	failing atomic.Bool
}

func (r *switchRemover) Delete(ctx context.Context, bucket, key string) error {
	if r.failing.Load() {
		return errors.New("injected: S3 did not answer")
	}
	return r.real.Delete(ctx, bucket, key)
}

// shareFixture serves the API with shares and deletion on one settable
// clock, over an archive alice (the job's owner) captured for acme.
type shareFixture struct {
	env     *apptest.Env
	srv     *httptest.Server
	clock   *clock
	remover *switchRemover
	id      string
	wacz    []byte
	keys    []string // the WACZ, its manifest, its links file
}

func newShareFixture(t *testing.T) *shareFixture {
	t.Helper()
	return newShareFixtureOn(t, nil)
}

// newShareFixtureOn is newShareFixture on another OpenFGA (e.g. on a
// PostgreSQL datastore), bound to a store holding the model; nil is the
// environment's own.
func newShareFixtureOn(t *testing.T, fgaClient authz.Client) *shareFixture {
	t.Helper()
	ctx := context.Background()
	env := apptest.New(t)
	if fgaClient != nil {
		env.FGA = fgaClient
		env.App.SetAuthz(fgaClient)
	}
	f := &shareFixture{env: env, clock: &clock{t: time.Now().UTC()}, remover: &switchRemover{real: env.Blob}}
	task := uuid.NewString()
	stem := "bh/" + task + "_c0ffee00"
	f.keys = []string{stem + ".wacz", stem + ".result.json", stem + ".links.json"}
	f.wacz = []byte("PK\x03\x04 evidence for the reviewer")
	for i, body := range [][]byte{f.wacz, apptest.Manifest(task, "success", "https://example.com/evidence", env.Bucket, f.keys[0], time.Now().Add(-time.Hour)), []byte(`{"links":[]}`)} {
		if err := env.Blob.Put(ctx, env.Bucket, f.keys[i], "application/octet-stream", body); err != nil {
			t.Fatal(err)
		}
	}
	st, err := env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&archive.Adder{Store: st, Objects: env.Blob, Bucket: env.Bucket}).Add(ctx, archive.AddRequest{Keys: []string{f.keys[1]}, Org: "acme", SubmittedBy: "alice"})
	if err != nil || res.Registered != 1 {
		t.Fatalf("add: %+v %v", res, err)
	}
	f.id = res.Results[0].ArchiveID
	f.drain(t)
	managers := authz.Managers{Client: env.FGA}
	s := &api.Server{
		Access:   &archive.Access{Perms: app.Permissions{Client: env.FGA, Now: f.clock.Now}, Catalog: st, Signer: env.Blob, Now: f.clock.Now},
		Shares:   &archive.Shares{Perms: managers, Store: st, Now: f.clock.Now},
		Deleter:  &archive.Deleter{Perms: managers, Store: st, Objects: f.remover, Bucket: env.Bucket, Now: f.clock.Now},
		Identity: identity.Headers{},
	}
	f.srv = serve(t, s)
	return f
}

func (f *shareFixture) drain(t *testing.T) {
	t.Helper()
	drainOutbox(t, f.env, -1)
}

func (f *shareFixture) do(t *testing.T, method, path, subject, orgs, body string) resp {
	t.Helper()
	a := send(t, method, f.srv.URL+path, subject, orgs, body)
	return resp{a.status, strings.TrimSpace(string(a.body))}
}

// mint asks for a URL as subject and, when one is handed out, downloads it.
func (f *shareFixture) mint(t *testing.T, subject, orgs string) int {
	t.Helper()
	r := f.do(t, "POST", "/api/archives/"+f.id+"/url", subject, orgs, "")
	if r.status != 200 {
		if r.body != notFound {
			t.Errorf("refusal body %s", r.body)
		}
		return r.status
	}
	var u archive.SignedURL
	if err := json.Unmarshal([]byte(r.body), &u); err != nil {
		t.Fatal(err)
	}
	if st, b := fetch(t, u.URL); st != 200 || string(b) != string(f.wacz) {
		t.Errorf("download as %s: %d %q", subject, st, b)
	}
	return 200
}

func (f *shareFixture) shares(t *testing.T, subject string) archive.ShareList {
	t.Helper()
	r := f.do(t, "GET", "/api/archives/"+f.id+"/shares", subject, "acme", "")
	var l archive.ShareList
	if r.status != 200 || json.Unmarshal([]byte(r.body), &l) != nil {
		t.Fatalf("list as %s: %d %s", subject, r.status, r.body)
	}
	return l
}

const notFound = `{"error":"not found"}`

// TestShareLifecycleEndToEnd is the whole life of a share, on the real stack
// (PostgreSQL, versitygw, in-process OpenFGA) through HTTP: bob, outside
// acme, gets 404; alice (the owner) shares with him for an hour; once the
// outbox drains bob mints a URL and downloads the WACZ; when the server's
// clock passes the hour he gets 404 again with nobody revoking. An early
// revoke of carol's share takes effect once the outbox drains; the audit
// trail lists both. A member of acme who is neither admin nor owner can
// neither share nor see the shares; an admin can.
func TestShareLifecycleEndToEnd(t *testing.T) {
	t.Parallel()
	f := newShareFixture(t)
	unknown := "/api/archives/" + uuid.NewString() + "/shares"
	absent := f.do(t, "POST", unknown, "alice", "acme", `{"user":"bob","duration":"1h"}`)
	if absent.status != 404 || absent.body != notFound {
		t.Fatalf("unknown archive: %+v", absent)
	}

	if code := f.mint(t, "bob", "partner"); code != 404 {
		t.Fatalf("bob before any share: %d", code)
	}
	// Who may not share gets exactly what an unknown archive gets, and
	// cannot see the shares either.
	shares := "/api/archives/" + f.id + "/shares"
	for _, who := range []struct{ subject, orgs string }{{"bob", "partner"}, {"dave", "acme"}} {
		if r := f.do(t, "POST", shares, who.subject, who.orgs, `{"user":"bob","duration":"1h"}`); r != absent {
			t.Errorf("%s shares: %+v", who.subject, r)
		}
		if r, u := f.do(t, "GET", shares, who.subject, who.orgs, ""), f.do(t, "GET", unknown, who.subject, who.orgs, ""); r != u || r.body != notFound {
			t.Errorf("%s lists shares: %+v (unknown archive: %+v)", who.subject, r, u)
		}
	}

	// alice shares with bob for an hour.
	granted := f.clock.Now().Truncate(time.Second)
	r := f.do(t, "POST", shares, "alice", "acme", `{"user":"bob","duration":"1h"}`)
	var bobShare archive.Granted
	if r.status != 201 || json.Unmarshal([]byte(r.body), &bobShare) != nil || bobShare.Status != "active" || *bobShare.User != "bob" ||
		bobShare.Organization != nil || !bobShare.GrantedAt.Equal(granted) || !bobShare.ExpiresAt.Equal(granted.Add(time.Hour)) ||
		bobShare.GrantedBy != "alice" || bobShare.Duration != "1h" {
		t.Fatalf("grant: %d %s", r.status, r.body)
	}
	if code := f.mint(t, "bob", "partner"); code != 404 {
		t.Errorf("bob before the outbox drained: %d", code)
	}
	f.drain(t)
	if code := f.mint(t, "bob", "partner"); code != 200 {
		t.Fatalf("bob inside the share: %d", code)
	}
	f.clock.Set(granted.Add(59 * time.Minute))
	if code := f.mint(t, "bob", ""); code != 200 {
		t.Errorf("bob a minute before the end: %d", code)
	}
	// The hour passes: nobody revokes, bob is refused.
	f.clock.Set(granted.Add(time.Hour))
	if code := f.mint(t, "bob", "partner"); code != 404 {
		t.Errorf("bob after the hour: %d", code)
	}
	if l := f.shares(t, "alice"); len(l.Active) != 0 || len(l.Past) != 1 || l.Past[0].Status != "expired" || l.Past[0].RevokedAt != nil {
		t.Errorf("after the hour: %+v", l)
	}

	// carol gets three days, and loses them early.
	r = f.do(t, "POST", shares, "alice", "acme", `{"user":"carol","duration":"72h"}`)
	var carolShare archive.Granted
	if r.status != 201 || json.Unmarshal([]byte(r.body), &carolShare) != nil {
		t.Fatalf("grant carol: %d %s", r.status, r.body)
	}
	f.drain(t)
	if code := f.mint(t, "carol", ""); code != 200 {
		t.Fatalf("carol inside her share: %d", code)
	}
	// Not for someone else's path, and not by a member.
	if r := f.do(t, "DELETE", unknown+"/"+carolShare.ID, "alice", "acme", ""); r.status != 404 || r.body != notFound {
		t.Errorf("revoke under another archive: %+v", r)
	}
	if r := f.do(t, "DELETE", shares+"/"+carolShare.ID, "dave", "acme", ""); r.status != 404 || r.body != notFound {
		t.Errorf("revoke by a member: %+v", r)
	}
	f.clock.Set(granted.Add(2 * time.Hour))
	r = f.do(t, "DELETE", shares+"/"+carolShare.ID, "alice", "acme", "")
	var revoked archive.Share
	if r.status != 200 || json.Unmarshal([]byte(r.body), &revoked) != nil || revoked.Status != "revoked" || *revoked.RevokedBy != "alice" ||
		!revoked.RevokedAt.Equal(granted.Add(2*time.Hour)) {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	if code := f.mint(t, "carol", ""); code != 200 {
		t.Errorf("carol before the revoke drained: %d", code)
	}
	f.drain(t)
	if code := f.mint(t, "carol", ""); code != 404 {
		t.Errorf("carol after the revoke drained: %d", code)
	}

	// The audit trail lists both, past, newest first; erin, an admin of
	// acme, may read it too.
	if err := f.env.FGA.Write(context.Background(), []authz.Tuple{{User: "user:erin", Relation: "admin", Object: "organization:acme"}}, nil); err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"alice", "erin"} {
		l := f.shares(t, who)
		if l.ArchiveID != f.id || len(l.Active) != 0 || len(l.Past) != 2 ||
			l.Past[0].ID != carolShare.ID || l.Past[0].Status != "revoked" ||
			l.Past[1].ID != bobShare.ID || l.Past[1].Status != "expired" {
			t.Errorf("%s's trail: %+v", who, l)
		}
	}

	// An organization's members: erin shares with reviewers for two hours.
	r = f.do(t, "POST", shares, "erin", "acme", `{"organization":"reviewers","duration":"2h"}`)
	if r.status != 201 || !strings.Contains(r.body, `"organization":"reviewers"`) || !strings.Contains(r.body, `"user":null`) {
		t.Fatalf("organization share: %d %s", r.status, r.body)
	}
	f.drain(t)
	if f.mint(t, "frank", "reviewers") != 200 || f.mint(t, "frank", "other") != 404 {
		t.Error("the organization share does not follow membership")
	}
	f.clock.Set(granted.Add(4 * time.Hour))
	if f.mint(t, "frank", "reviewers") != 404 {
		t.Error("the organization share outlived its window")
	}
}

// TestShareBadInputAnswers400: each refused grant names its field, comes
// before identity, and writes nothing; hostile strings are a 400, not a 500.
func TestShareBadInputAnswers400(t *testing.T) {
	t.Parallel()
	f := newShareFixture(t)
	before := testenv.TakeSnapshot(t, f.env.DSN)
	shares := "/api/archives/" + f.id + "/shares"
	for _, tc := range []struct {
		name, path, body string
		want             string
	}{
		{"zero", shares, `{"user":"carol","duration":"0s"}`, "body/duration must be positive"},
		{"negative", shares, `{"user":"carol","duration":"-1h"}`, "body/duration must be positive"},
		{"over the cap", shares, `{"user":"carol","duration":"91d"}`, "body/duration is longer than the maximum of 90 days"},
		{"unparsable", shares, `{"user":"carol","duration":"soon"}`, "body/duration is not a duration"},
		{"no duration", shares, `{"user":"carol"}`, "body/duration is required"},
		{"number", shares, `{"user":"carol","duration":3600}`, "body/duration must be string"},
		{"empty user", shares, `{"user":"","duration":"1h"}`, "body/user is empty"},
		{"invalid user", shares, `{"user":"user:carol","duration":"1h"}`, `body/user contains ':'`},
		{"NUL in user", shares, `{"user":"car\u0000ol","duration":"1h"}`, "body/user must NOT contain U+0000 (NUL)"},
		{"invalid UTF-8", shares, "{\"user\":\"car\xffol\",\"duration\":\"1h\"}", "body/user must be valid UTF-8"},
		{"lone surrogate in user", shares, `{"user":"car\ud800ol","duration":"1h"}`, "body/user must be valid UTF-8"},
		{"lone surrogate in organization", shares, `{"organization":"\udc00","duration":"1h"}`, "body/organization must be valid UTF-8"},
		{"user twice, the last valid", shares, `{"user":null,"user":"carol","duration":"1h"}`, "body/user must NOT appear more than once"},
		{"nobody", shares, `{"duration":"1h"}`, "body/user is required"},
		{"both", shares, `{"user":"carol","organization":"partner","duration":"1h"}`, "body/user and organization are both given"},
		{"bad organization", shares, `{"organization":"partner#member","duration":"1h"}`, `body/organization contains '#'`},
		{"unknown key", shares, `{"user":"carol","duration":"1h","admin":true}`, "must NOT have additional properties"},
		{"not an object", shares, `["carol"]`, "body must be object"},
		{"two objects", shares, `{"user":"carol","duration":"1h"}{}`, "body must be one JSON object"},
		{"bad id", "/api/archives/nope/shares", `{"user":"carol","duration":"1h"}`, `params/id must match format \"uuid\"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Anonymous: validation answers before identity.
			r := f.do(t, "POST", tc.path, "", "", tc.body)
			if r.status != 400 || !strings.Contains(r.body, tc.want) {
				t.Errorf("%d %s, want 400 saying %q", r.status, r.body, tc.want)
			}
			if r2 := f.do(t, "POST", tc.path, "alice", "acme", tc.body); r2 != r {
				t.Errorf("as alice: %+v, anonymous: %+v", r2, r)
			}
		})
	}
	if r := f.do(t, "POST", shares, "", "", `{"user":"carol","duration":"1h"}`); r.status != 401 {
		t.Errorf("no identity: %+v", r)
	}
	if r := f.do(t, "POST", shares, "alice", "acme", strings.Repeat(" ", 5000)); r.status != 413 {
		t.Errorf("a large body: %+v", r)
	}
	testenv.Unchanged(t, f.env.DSN, before)
}

// TestDeleteArchiveEndToEnd: only the owner deletes (404 for anyone else, as
// for an unknown id); the archive, its objects and, once the outbox drains,
// its tuples are gone; a removal S3 fails is a 202 the next call finishes.
func TestDeleteArchiveEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newShareFixture(t)
	path := "/api/archives/" + f.id
	if r := f.do(t, "POST", path+"/shares", "alice", "acme", `{"user":"carol","duration":"72h"}`); r.status != 201 {
		t.Fatalf("share: %+v", r)
	}
	if err := f.env.FGA.Write(ctx, []authz.Tuple{{User: "user:erin", Relation: "admin", Object: "organization:acme"}}, nil); err != nil {
		t.Fatal(err)
	}
	f.drain(t)
	before := testenv.TakeSnapshot(t, f.env.DSN)
	unknown := f.do(t, "DELETE", "/api/archives/"+uuid.NewString(), "alice", "acme", "")
	if unknown.status != 404 || unknown.body != notFound {
		t.Fatalf("unknown id: %+v", unknown)
	}
	for _, who := range []struct{ subject, orgs string }{{"bob", "acme"}, {"erin", "acme"}, {"carol", ""}, {"mallory", "contoso"}} {
		if r := f.do(t, "DELETE", path, who.subject, who.orgs, ""); r != unknown {
			t.Errorf("%s deletes: %+v", who.subject, r)
		}
	}
	for _, tc := range []struct{ path, body string }{{"/api/archives/nope", ""}, {path, `{"force":true}`}} {
		if r := f.do(t, "DELETE", tc.path, "alice", "acme", tc.body); r.status != 400 {
			t.Errorf("DELETE %s %s: %+v", tc.path, tc.body, r)
		}
	}
	if r := f.do(t, "DELETE", path, "", "", ""); r.status != 401 {
		t.Errorf("anonymous: %+v", r)
	}
	testenv.Unchanged(t, f.env.DSN, before)

	// S3 does not answer: the ledger entry is gone (202), the objects stay.
	f.remover.failing.Store(true)
	r := f.do(t, "DELETE", path, "alice", "acme", "")
	var d archive.Deletion
	if r.status != 202 || json.Unmarshal([]byte(r.body), &d) != nil || d.ObjectsDeleted || d.Pending == nil || d.DeletedBy != "alice" || len(d.Objects) != 3 {
		t.Fatalf("delete with S3 down: %d %s", r.status, r.body)
	}
	if f.mint(t, "alice", "acme") != 404 || f.mint(t, "carol", "") != 404 {
		t.Error("the deleted archive still hands out URLs")
	}
	for _, k := range f.keys {
		if _, err := f.env.Blob.Get(ctx, f.env.Bucket, k); err != nil {
			t.Errorf("%s before the objects were removed: %v", k, err)
		}
	}
	// The same call again finishes it.
	f.remover.failing.Store(false)
	r = f.do(t, "DELETE", path, "alice", "acme", "")
	if r.status != 200 || json.Unmarshal([]byte(r.body), &d) != nil || !d.ObjectsDeleted || d.Pending != nil {
		t.Fatalf("delete again: %d %s", r.status, r.body)
	}
	for _, k := range f.keys {
		if _, err := f.env.Blob.Get(ctx, f.env.Bucket, k); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("%s after the delete: %v", k, err)
		}
	}
	f.drain(t)
	for _, tu := range []authz.Tuple{
		{User: "user:carol", Relation: "viewer", Object: "archive:" + f.id},
		{User: "user:alice", Relation: "owner", Object: "capture_job:" + strings.Split(strings.TrimPrefix(f.keys[0], "bh/"), "_")[0]},
	} {
		if ok, err := f.env.FGA.ReadTuple(ctx, tu); err != nil || ok {
			t.Errorf("%s after the drain: %v %v", tu, ok, err)
		}
	}
	if r := f.do(t, "DELETE", path, "alice", "acme", ""); r != unknown {
		t.Errorf("deleting a deleted archive: %+v", r)
	}
	if r := f.do(t, "GET", path+"/shares", "alice", "acme", ""); r.status != 404 {
		t.Errorf("shares of a deleted archive: %+v", r)
	}
}

// FuzzParseShareBody: any body is either refused with a 400 or read into a
// request whose values, once ShareRequest.Parse accepts them, are what
// OpenFGA can hold (the identity rules) and a duration within the cap.
func FuzzParseShareBody(f *testing.F) {
	for _, s := range []string{
		`{"user":"carol","duration":"72h"}`, `{"organization":"partner","duration":"7d"}`, `{}`, ``, `[]`, `{"user":null}`,
		`{"user":"car\u0000ol","duration":"1h"}`, "{\"user\":\"\xff\"}", `{"user":"a","organization":"b","duration":"1h"}`,
		`{"user":"carol","duration":"1h"}{}`, `{"user":"carol","duration":3600}`, `{"user":"carol","duration":"1h","x":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := api.ParseShareBody(data)
		if err != nil {
			var bad *api.BadRequest
			if !errors.As(err, &bad) || !strings.HasPrefix(bad.Message, "body") {
				t.Fatalf("%q: %v is not a 400 about the body", data, err)
			}
			return
		}
		g, d, err := req.Parse(archive.MaxShareDuration)
		if err != nil {
			return
		}
		if identity.CheckSubject(g.ID) != nil && identity.CheckOrganization(g.ID) != nil {
			t.Fatalf("%q: accepted grantee %q", data, g.ID)
		}
		if d <= 0 || d > archive.MaxShareDuration {
			t.Fatalf("%q: accepted duration %v", data, d)
		}
	})
}
