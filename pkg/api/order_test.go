package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// refusing is the real outbox writer, except that every write naming one
// of users fails (an injected error, nothing sent).
type refusing struct {
	outbox.Writer
	users map[string]bool
}

func (r refusing) WriteIdempotent(ctx context.Context, w, d []ledger.Tuple) error {
	for _, t := range w {
		if r.users[t.User] {
			return errors.New("injected: write refused")
		}
	}
	return r.Writer.WriteIdempotent(ctx, w, d)
}

// slowRetries: a failed row waits a second before it is due again, long
// enough for a later row to be delivered first.
var slowRetries = outbox.Options{BaseBackoff: time.Second, MaxBackoff: time.Second}

func (f *shareFixture) drainWith(t *testing.T, w outbox.Writer) outbox.Result {
	t.Helper()
	st, _, err := f.env.App.OutboxDeps(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r, err := outbox.Drain(context.Background(), st, w, slowRetries)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// settle drains with the real writer until nothing is pending, past every
// back-off.
func (f *shareFixture) settle(t *testing.T) {
	t.Helper()
	st, w, err := f.env.App.OutboxDeps(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := outbox.Drain(context.Background(), st, w, slowRetries); err != nil {
			t.Fatal(err)
		}
		c, err := st.(*postgres.Store).CountOutbox(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if c.Pending == 0 || i == 10 {
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func (f *shareFixture) grant(t *testing.T, user string) archive.Granted {
	t.Helper()
	r := f.do(t, "POST", "/api/archives/"+f.id+"/shares", "alice", "acme", `{"user":"`+user+`","duration":"72h"}`)
	var g archive.Granted
	if r.status != 201 || json.Unmarshal([]byte(r.body), &g) != nil {
		t.Fatalf("grant %s: %d %s", user, r.status, r.body)
	}
	return g
}

func (f *shareFixture) revoke(t *testing.T, g archive.Granted) {
	t.Helper()
	if r := f.do(t, "DELETE", "/api/archives/"+f.id+"/shares/"+g.ID, "alice", "acme", ""); r.status != 200 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
}

// TestRevokedShareStaysRevokedAfterAFailedWrite: dan's share's write fails
// (an injected error), alice revokes it, OpenFGA recovers and the outbox
// drains again and again: dan's URL is refused (404) every time after.
func TestRevokedShareStaysRevokedAfterAFailedWrite(t *testing.T) {
	t.Parallel()
	f := newShareFixture(t)
	g := f.grant(t, "dan")
	_, w, _ := f.env.App.OutboxDeps(context.Background())
	if r := f.drainWith(t, refusing{Writer: w, users: map[string]bool{"user:dan": true}}); r.Failed != 1 {
		t.Fatalf("the failing drain: %+v", r)
	}
	f.revoke(t, g)
	for i := 0; i < 4; i++ {
		f.drainWith(t, w)
		if code := f.mint(t, "dan", ""); code != 404 {
			t.Fatalf("dan after the revoke, drain %d: %d, want 404 for good", i+1, code)
		}
		time.Sleep(400 * time.Millisecond) // past the failed row's back-off
	}
	if l := f.shares(t, "alice"); len(l.Active) != 0 || len(l.Past) != 1 || l.Past[0].Status != "revoked" {
		t.Errorf("shares: %+v", l)
	}
}

// postgresFGA is an embedded OpenFGA on its own PostgreSQL datastore (with
// the model deployed), and the switch that stops that datastore for real.
func postgresFGA(t *testing.T) (*authz.Embedded, *testenv.Outage) {
	t.Helper()
	ctx := context.Background()
	dsn := testenv.EmptyDatabase(t)
	if err := authz.PreparePostgres(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	c, err := authz.NewPostgres(ctx, dsn, authz.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := authz.Deploy(ctx, c, "outage", fga.Model); err != nil {
		t.Fatal(err)
	}
	return c, testenv.NewOutage(t, dsn)
}

// TestDatastoreOutageIsAnOutage: with OpenFGA's datastore stopped, a share
// grant and a URL mint answer 503 with Retry-After (nothing recorded), the
// drain stops as unreachable without blaming its row, and once it is back
// a share granted before the outage and revoked after it stays revoked:
// dan gets 404, and the outbox has no dead letters and no counted attempt.
func TestDatastoreOutageIsAnOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, outage := postgresFGA(t)
	f := newShareFixtureOn(t, c)
	g := f.grant(t, "dan")

	outage.Stop()
	for _, req := range []struct{ method, path, body string }{
		{"POST", "/api/archives/" + f.id + "/shares", `{"user":"erin","duration":"1h"}`},
		{"POST", "/api/archives/" + f.id + "/url", ""},
	} {
		hr, _ := http.NewRequest(req.method, f.srv.URL+req.path, strings.NewReader(req.body))
		hr.Header.Set("X-Capture-ledger-Subject", "alice")
		hr.Header.Set("X-Capture-ledger-Organizations", "acme")
		res, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s with the datastore down: %d, Retry-After %q; want 503 with Retry-After", req.method, req.path, res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
	_, w, _ := f.env.App.OutboxDeps(ctx)
	if r := f.drainWith(t, w); r.Unreachable == "" || r.Failed+r.Dead != 0 {
		t.Errorf("drain with the datastore down: %+v, want stopped as unreachable, nothing blamed", r)
	}
	outage.Start()

	f.revoke(t, g)
	f.settle(t)
	time.Sleep(1100 * time.Millisecond)
	f.settle(t)
	if code := f.mint(t, "dan", ""); code != 404 {
		t.Errorf("dan after the revoke: %d, want 404", code)
	}
	if l := f.shares(t, "alice"); len(l.Active) != 0 || len(l.Past) != 1 {
		t.Errorf("shares: %+v (erin's grant during the outage must not be recorded)", l)
	}
	st, _ := f.env.App.Store(ctx)
	var dead, attempted int
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE dead_at IS NOT NULL), count(*) FILTER (WHERE attempts > 0) FROM fga_outbox`).Scan(&dead, &attempted); err != nil {
		t.Fatal(err)
	}
	status, err := f.env.App.OutboxStatus(ctx, 10)
	if err != nil || status.Counts.Dead != 0 || len(status.Dead) != 0 || dead != 0 || attempted != 0 {
		t.Errorf("drain status after the outage: %+v %v; %d dead, %d rows with attempts counted", status, err, dead, attempted)
	}
}
