package web_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/config"
)

// served is a whole `serve` (the API, the console, replay origins and the
// workers) built from settings as `ledgerctl serve` builds it, on a free
// loopback port, with the dev identity unless tweak changes it.
type served struct {
	URL    string
	Port   int
	Env    *apptest.Env
	Server *app.Server
}

// startServe builds and runs serve for the test; it stops when the test
// ends.
func startServe(t testing.TB, tweak func(*config.Settings)) *served {
	t.Helper()
	port := freePort(t)
	env := apptest.NewWith(t, func(s *config.Settings) {
		s.APIPort = port
		s.DevIdentity = true
		s.DrainInterval = 100 * time.Millisecond
		s.ReplayKey = strings.Repeat("k", 48)
		s.CaptureEngine = "http"
		s.SearchDir = t.TempDir()
		if tweak != nil {
			tweak(s)
		}
	})
	ctx, stop := context.WithCancel(context.Background())
	srv, err := env.App.Server(ctx, app.ServeOptions{Version: "test"})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	if _, err := srv.Listen(); err != nil {
		stop()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &served{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Port: port, Env: env, Server: srv}
}

// freePort is a loopback port free when asked.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// get fetches u with headers (name, value pairs).
func get(t *testing.T, u string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}
