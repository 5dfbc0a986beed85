package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/manifest"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
)

// The set-ups the package's tests share: an archive admitted from a
// manifest in the test's bucket, the outbox drained into OpenFGA, a server
// on a local port, and one request as a caller of the dev identity. Each
// test file builds its own api.Server from these (the routes it needs).

// testArchive is an archive to admit: its WACZ bytes at Key, captured
// from SourceURL an hour ago, for Org by Owner.
type testArchive struct {
	Key, ContentType, SourceURL, Org, Owner string
	Body                                    []byte
	// Age is how long ago it was captured (an hour when zero).
	Age time.Duration
}

// admitArchive puts a.Body in the environment's bucket at a.Key ("<task>"
// in it is replaced by a fresh capture task id), admits its manifest, and
// returns the archive's id and the task. Its tuples wait in the outbox
// (drainOutbox).
func admitArchive(tb testing.TB, env *apptest.Env, a testArchive) (id, task string) {
	tb.Helper()
	ctx := context.Background()
	task = uuid.NewString()
	key := strings.ReplaceAll(a.Key, "<task>", task)
	if a.ContentType == "" {
		a.ContentType = "application/wacz"
	}
	if a.Age == 0 {
		a.Age = time.Hour
	}
	if err := env.Blob.Put(ctx, env.Bucket, key, a.ContentType, a.Body); err != nil {
		tb.Fatal(err)
	}
	m, err := manifest.Decode(apptest.Manifest(task, "success", a.SourceURL, env.Bucket, key, time.Now().Add(-a.Age)))
	if err != nil {
		tb.Fatal(err)
	}
	adm, err := env.App.Admitter(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	owner := a.Owner
	id, outcome, err := adm.Admit(ctx, m, a.Org, &owner)
	if err != nil || outcome != archive.Registered {
		tb.Fatalf("admit: %v %v", outcome, err)
	}
	return id, task
}

// drainOutbox delivers the tuples waiting in the outbox to OpenFGA. want
// is how many must be delivered (any number when negative); a failed or
// dead-lettered tuple fails the test.
func drainOutbox(tb testing.TB, env *apptest.Env, want int) {
	tb.Helper()
	ctx := context.Background()
	st, w, err := env.App.OutboxDeps(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := outbox.Drain(ctx, st, w, outbox.Options{})
	if err != nil || r.Failed+r.Dead > 0 || (want >= 0 && r.Delivered != want) {
		tb.Fatalf("drain: %+v %v (want %d delivered)", r, err, want)
	}
}

// serve answers s's routes on a local port (127.0.0.1) until the test
// ends.
func serve(tb testing.TB, s *api.Server) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(s.Handler())
	tb.Cleanup(srv.Close)
	return srv
}

// answer is what a request got back.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// send makes one request to url as subject, a member of orgs (a
// comma-separated list), through the dev identity's headers; no subject
// sends none. A body cut short is returned as far as it came.
func send(tb testing.TB, method, url, subject, orgs, body string) answer {
	tb.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if subject != "" {
		req.Header.Set(identity.SubjectHeader, subject)
		req.Header.Set(identity.OrganizationsHeader, orgs)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{res.StatusCode, res.Header, b}
}
