package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
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

// TestCaptureFailuresAreCoarse: the caller of POST /api/captures is told a
// failure in coarse words — a closed port and a service that does not speak
// HTTP are both "unreachable", an HTTP error is its status, a refused
// address is "refused by policy" — while the server's log keeps the detail
// (the address and port, the protocol error). Told to the caller, the
// difference would make the capturer a port scanner.
func TestCaptureFailuresAreCoarse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t)
	if err := env.FGA.Write(ctx, []authz.Tuple{{User: "user:alice", Relation: "submitter", Object: "organization:acme"}}, nil); err != nil {
		t.Fatal(err)
	}
	st, err := env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A closed port: listened on, then closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	// A service that is not HTTP: it greets like SSH and hangs up.
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	go func() {
		for {
			c, err := other.Accept()
			if err != nil {
				return
			}
			fmt.Fprint(c, "SSH-2.0-OpenSSH_9.6\r\n")
			c.Close()
		}
	}()
	site := httptest.NewServer(http.NotFoundHandler())
	defer site.Close()

	var logs testenv.SyncBuffer
	server := func(allowPrivate bool) string {
		cfg := capture.Defaults()
		cfg.AllowPrivate = allowPrivate
		eng := capture.NewHTTP(cfg)
		t.Cleanup(func() { _ = eng.Close() })
		perms := app.Permissions{Client: env.FGA}
		s := &api.Server{
			Access:   &archive.Access{Perms: perms, Catalog: st, Signer: env.Blob},
			Identity: identity.Headers{}, Submitters: perms,
			Captures: &archive.Captures{
				Capturer:    app.BuiltinCapturer{Engine: eng, Uploader: blob.Uploader{Client: env.Blob, Bucket: env.Bucket}, Software: "ledgerctl test"},
				Adder:       &archive.Adder{Store: st, Objects: env.Blob, Bucket: env.Bucket},
				Permissions: perms,
				Log:         slog.New(slog.NewTextHandler(&logs, nil)),
			},
		}
		return serve(t, s).URL
	}
	allowing, refusing := server(true), server(false)
	capt := func(base string, urls ...string) []archive.CapturedPage {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"urls": urls, "organization": "acme"})
		a := send(t, "POST", base+"/api/captures", "alice", "acme", string(b))
		var out archive.CaptureResult
		if a.status != 200 || json.Unmarshal(a.body, &out) != nil || len(out.Pages) != len(urls) {
			t.Fatalf("%d %s", a.status, a.body)
		}
		return out.Pages
	}
	pages := capt(allowing, "http://"+closed+"/", "http://"+other.Addr().String()+"/", site.URL+"/missing")
	pages = append(pages, capt(refusing, site.URL+"/")...)
	for i, want := range []string{capture.CoarseUnreachable, capture.CoarseUnreachable, "HTTP 404", capture.CoarseRefused} {
		if p := pages[i]; p.Status != archive.CaptureFailed || p.Error != want {
			t.Errorf("%s: %s %q, want failed %q", p.URL, p.Status, p.Error, want)
		}
	}
	// Nothing of the address, the port or the protocol reaches the caller.
	for _, p := range pages {
		if strings.Contains(p.Error, "127.0.0.1") || strings.Contains(p.Error, "refused") && p.Error != capture.CoarseRefused ||
			strings.Contains(strings.ToLower(p.Error), "malformed") {
			t.Errorf("the caller is told %q", p.Error)
		}
	}
	// The log has the story.
	log := logs.String()
	for _, want := range []string{closed, other.Addr().String()} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not name %s:\n%s", want, log)
		}
	}
}
