package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestPostCaptures: POST /api/captures checks its body (400, before
// identity), then the identity (401), then can_submit on the organization
// (404, the body of every denial); a submitter's capture is registered
// for the organization and listed for its members once drained.
func TestPostCaptures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t)
	var hits atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><head><title>記録</title></head><body><p>東京の朝</p></body></html>")
	}))
	defer site.Close()
	cfg := capture.Defaults()
	cfg.AllowPrivate = true
	eng := capture.NewHTTP(cfg)
	defer eng.Close()
	st, err := env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	perms := app.Permissions{Client: env.FGA}
	svc := &archive.Captures{
		Capturer:    app.BuiltinCapturer{Engine: eng, Uploader: blob.Uploader{Client: env.Blob, Bucket: env.Bucket}, Software: "ledgerctl test"},
		Adder:       &archive.Adder{Store: st, Objects: env.Blob, Bucket: env.Bucket},
		Permissions: perms,
	}
	s := &api.Server{
		Access:   &archive.Access{Perms: perms, Catalog: st, Signer: env.Blob},
		Identity: identity.Headers{}, Submitters: perms, Captures: svc,
	}
	srv := serve(t, s)
	if err := env.FGA.Write(ctx, []authz.Tuple{{User: "user:alice", Relation: "submitter", Object: "organization:acme"}}, nil); err != nil {
		t.Fatal(err)
	}
	post := func(subject, orgs, body string) (int, string) {
		t.Helper()
		a := send(t, "POST", srv.URL+"/api/captures", subject, orgs, body)
		return a.status, strings.TrimSpace(string(a.body))
	}

	before := testenv.TakeSnapshot(t, env.DSN)
	good := fmt.Sprintf(`{"urls":[%q],"organization":"acme"}`, site.URL+"/")
	for _, tc := range []struct {
		name, subject, body string
		status              int
		want                string
	}{
		{"empty list", "alice", `{"urls":[],"organization":"acme"}`, 400, "body/urls must name at least one URL"},
		{"not http", "alice", `{"urls":["ftp://x.example/"],"organization":"acme"}`, 400, "body/urls/0 must be an http or https URL"},
		{"NUL", "alice", `{"urls":["http://x.example/\u0000"],"organization":"acme"}`, 400, "body/urls/0"},
		{"invalid UTF-8", "alice", "{\"urls\":[\"http://x.example/\xff\"],\"organization\":\"acme\"}", 400, "body/urls/0 must be valid UTF-8"},
		{"lone surrogate in a URL", "alice", `{"urls":["http://x.example/\ud800"],"organization":"acme"}`, 400, "body/urls/0 must be valid UTF-8"},
		{"lone surrogate in the organization", "alice", `{"urls":["http://x.example/"],"organization":"a\udfffb"}`, 400, "body/organization must be valid UTF-8"},
		{"urls twice, the last valid", "alice", `{"urls":null,"urls":["http://x.example/"],"organization":"acme"}`, 400, "body/urls must NOT appear more than once"},
		{"unknown key", "alice", `{"urls":["http://x.example/"],"organization":"acme","priority":"x"}`, 400, "body must be"},
		{"unknown engine", "alice", `{"urls":["http://x.example/"],"organization":"acme","engine":"x"}`, 400, "body/engine must be one of http, browser"},
		{"engine not a string", "alice", `{"urls":["http://x.example/"],"organization":"acme","engine":1}`, 400, "body/engine must be a string"},
		{"wrong type", "alice", `{"urls":"http://x.example/","organization":"acme"}`, 400, "body/urls must be an array of strings"},
		{"no organization", "alice", `{"urls":["http://x.example/"]}`, 400, "organization"},
		{"reserved characters", "alice", `{"urls":["http://x.example/"],"organization":"acme#member"}`, 400, "body/organization"},
		{"no identity", "", good, 401, `{"error":"unauthenticated"}`},
		{"not a submitter", "mallory", good, 404, `{"error":"not found"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(tc.subject, "acme", tc.body)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("%d %s, want %d containing %s", status, body, tc.status, tc.want)
			}
		})
	}
	testenv.Unchanged(t, env.DSN, before)
	if hits.Load() != 0 {
		t.Fatalf("refused requests fetched %d pages", hits.Load())
	}

	status, body := post("alice", "acme", good)
	var res archive.CaptureResult
	if status != 200 || json.Unmarshal([]byte(body), &res) != nil || len(res.Pages) != 1 || res.Pages[0].Status != archive.Captured || res.Pages[0].ArchiveID == "" {
		t.Fatalf("capture: %d %s", status, body)
	}
	drainOutbox(t, env, -1)
	for _, who := range []struct {
		subject, orgs string
		sees          bool
	}{{"bob", "acme", true}, {"carol", "contoso", false}} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/archives", nil)
		req.Header.Set("X-Capture-ledger-Subject", who.subject)
		req.Header.Set("X-Capture-ledger-Organizations", who.orgs)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var page archive.PageBody
		err = json.NewDecoder(r.Body).Decode(&page)
		r.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := len(page.Archives) == 1 && page.Archives[0].ID == res.Pages[0].ArchiveID; got != who.sees {
			t.Errorf("%s in %s sees %+v", who.subject, who.orgs, page.Archives)
		}
	}
}
