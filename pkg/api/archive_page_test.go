package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
)

// archivePageServer is the share fixture's archive behind a server that
// also answers GET /api/archives/{id} and the download routes (replay
// reads re-checked on every read).
func archivePageServer(t *testing.T, f *shareFixture) *httptest.Server {
	t.Helper()
	ctx := context.Background()
	st, err := f.env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	details, err := f.env.App.Details(ctx)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := f.env.App.Replay(ctx, bytes.Repeat([]byte("k"), 48))
	if err != nil {
		t.Fatal(err)
	}
	svc.CheckCache = -1
	origins, err := replay.ParseDomain("", 7070)
	if err != nil {
		t.Fatal(err)
	}
	managers := authz.Managers{Client: f.env.FGA}
	s := &api.Server{
		Details:  details,
		Replay:   &api.Replay{Service: svc, Origins: origins},
		Shares:   &archive.Shares{Perms: managers, Store: st, Now: f.clock.Now},
		Deleter:  &archive.Deleter{Perms: managers, Store: st, Objects: f.remover, Bucket: f.env.Bucket, Now: f.clock.Now},
		Identity: identity.Headers{},
	}
	return serve(t, s)
}

func pageCall(t *testing.T, method, u, subject, orgs, body string) (int, http.Header, []byte) {
	t.Helper()
	a := send(t, method, u, subject, orgs, body)
	return a.status, a.header, a.body
}

// TestArchiveDetailSaysWhatTheCallerMay: the owner reads the archive, its
// organization, why (owner, member) and may do everything; a stranger and
// an absent id read the same 404; a user it is shared with may open and
// download but not share or delete, and is told it is shared; a bad id
// is a 400 naming it.
func TestArchiveDetailSaysWhatTheCallerMay(t *testing.T) {
	t.Parallel()
	f := newShareFixture(t)
	srv := archivePageServer(t, f)
	type detail struct {
		ID, SourceURL, Organization string
		Why                         []struct{ Kind, Organization string }
		May                         archive.May
	}
	read := func(subject, orgs, id string) (int, detail, string) {
		code, _, b := pageCall(t, "GET", srv.URL+"/api/archives/"+id, subject, orgs, "")
		var d detail
		if code == 200 {
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
		}
		return code, d, string(b)
	}
	code, d, body := read("alice", "acme", f.id)
	if code != 200 || d.ID != f.id || d.Organization != "acme" || d.SourceURL != "https://example.com/evidence" ||
		d.May != (archive.May{Open: true, Download: true, Share: true, Delete: true}) || len(d.Why) != 2 {
		t.Fatalf("alice: %d %s", code, body)
	}
	codeBob, _, bodyBob := read("bob", "partner", f.id)
	codeAbsent, _, bodyAbsent := read("bob", "partner", "00000000-0000-4000-8000-000000000000")
	if codeBob != 404 || codeAbsent != 404 || bodyBob != bodyAbsent {
		t.Fatalf("denied %d %s, absent %d %s: must be the same 404", codeBob, bodyBob, codeAbsent, bodyAbsent)
	}
	if code, _, body := read("bob", "partner", "not-a-uuid"); code != 400 || !strings.Contains(body, "params/id") {
		t.Fatalf("bad id: %d %s", code, body)
	}
	if code, _, body := read("", "", f.id); code != 401 {
		t.Fatalf("nobody: %d %s", code, body)
	}
	if code, _, b := pageCall(t, "POST", srv.URL+"/api/archives/"+f.id+"/shares", "alice", "acme", `{"user":"bob","duration":"1d"}`); code != 201 {
		t.Fatalf("share: %d %s", code, b)
	}
	f.drain(t)
	code, d, body = read("bob", "partner", f.id)
	if code != 200 || d.May != (archive.May{Open: true, Download: true}) || len(d.Why) != 1 || d.Why[0].Kind != "share" {
		t.Fatalf("bob with a share: %d %s", code, body)
	}
}

// TestDownloadIsTheExactBytesThroughABoundLink: the link is on the API's
// origin (no bucket URL), answers the object's exact bytes as an
// octet-stream attachment, nosniff and sandboxed; a changed token, the
// token on another archive's path, a caller who may not view, and a link
// whose caller lost access are 404.
func TestDownloadIsTheExactBytesThroughABoundLink(t *testing.T) {
	t.Parallel()
	f := newShareFixture(t)
	srv := archivePageServer(t, f)
	if code, _, b := pageCall(t, "POST", srv.URL+"/api/archives/"+f.id+"/shares", "alice", "acme", `{"user":"bob","duration":"1d"}`); code != 201 {
		t.Fatalf("share: %d %s", code, b)
	}
	f.drain(t)
	link := func(subject, orgs string) (int, api.DownloadLink) {
		code, _, b := pageCall(t, "POST", srv.URL+"/api/archives/"+f.id+"/download", subject, orgs, "")
		var l api.DownloadLink
		if code == 200 {
			if err := json.Unmarshal(b, &l); err != nil {
				t.Fatal(err)
			}
		}
		return code, l
	}
	code, l := link("bob", "partner")
	if code != 200 || !strings.HasPrefix(l.URL, "/api/archives/"+f.id+"/wacz?") {
		t.Fatalf("link: %d %+v", code, l)
	}
	code, h, b := pageCall(t, "GET", srv.URL+l.URL, "", "", "")
	if code != 200 || !bytes.Equal(b, f.wacz) {
		t.Fatalf("download: %d %q, want the object's bytes %q", code, b, f.wacz)
	}
	for k, want := range map[string]string{
		"Content-Type": "application/octet-stream", "Content-Disposition": `attachment; filename="` + f.id + `.wacz"`,
		"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox; default-src 'none'; frame-ancestors 'none'",
	} {
		if h.Get(k) != want {
			t.Errorf("%s: %q, want %q", k, h.Get(k), want)
		}
	}
	u, _ := url.Parse(l.URL)
	q := u.Query()
	tok := q.Get("t")
	q.Set("t", tok[:len(tok)-2]+"AA")
	for name, path := range map[string]string{
		"changed token": u.Path + "?" + q.Encode(),
		"other archive": "/api/archives/00000000-0000-4000-8000-000000000000/wacz?" + u.RawQuery,
		"no label":      u.Path + "?t=" + url.QueryEscape(tok),
	} {
		if code, _, b := pageCall(t, "GET", srv.URL+path, "", "", ""); code != 404 {
			t.Errorf("%s: %d %s", name, code, b)
		}
	}
	if code, _ := link("carol", "elsewhere"); code != 404 {
		t.Errorf("a stranger got a link: %d", code)
	}
	// Bob's share ends: the link he holds reads nothing more.
	code, _, b = pageCall(t, "GET", srv.URL+"/api/archives/"+f.id+"/shares", "alice", "acme", "")
	var list archive.ShareList
	if err := json.Unmarshal(b, &list); err != nil || code != 200 || len(list.Active) != 1 {
		t.Fatalf("shares: %d %s", code, b)
	}
	if code, _, b := pageCall(t, "DELETE", srv.URL+"/api/archives/"+f.id+"/shares/"+list.Active[0].ID, "alice", "acme", ""); code != 200 {
		t.Fatalf("revoke: %d %s", code, b)
	}
	f.drain(t)
	if code, _, b := pageCall(t, "GET", srv.URL+l.URL, "", "", ""); code != 404 {
		t.Fatalf("a revoked caller's link still reads: %d %q", code, b)
	}
}
