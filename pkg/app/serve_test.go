package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

func get(t *testing.T, url string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestServerFromSettings builds serve from an App's settings the way
// `ledgerctl serve` does and drives it over HTTP: /readyz finds the
// dependencies, the dev identity the settings select is the one the routes
// use, the crawl routes are served without the Windmill webhook, the drain worker
// delivers a queued tuple (alice becomes a submitter of acme without any
// drain being called), and cancelling the context stops the server and its
// workers.
func TestServerFromSettings(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	s := env.App.Settings
	s.APIPort = 0
	s.DevIdentity = true
	s.DrainInterval = 100 * time.Millisecond
	s.ReplayKey = strings.Repeat("k", 48)
	s.WebhookURL = ""
	s.CaptureEngine = "http"
	s.SearchDir = t.TempDir() // never the default, relative to the source folder
	a := app.New(s, nil)
	a.SetAuthz(env.FGA)
	t.Cleanup(a.Close)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	srv, err := a.Server(ctx, app.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Mode != identity.ModeHeader || srv.ReplayKeyEphemeral {
		t.Errorf("server %+v: want header identity and the configured replay key", srv)
	}
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	var listening bool
	for _, n := range srv.StartupNotes(addr) {
		listening = listening || strings.Contains(n.Message, fmt.Sprintf("listening on 127.0.0.1:%d", addr.Port))
		// The startup line says what is true: the embedded runner serves
		// crawls (no webhook), and no level report comes over HTTP.
		for _, at := range n.Attrs {
			if (at.Key == "crawls" && at.Value.Any() != srv.Crawls) || (at.Key == "crawlLevelReports" && at.Value.String() != identity.CrawlReportsOff) {
				t.Errorf("startup line %q: %s=%v (serve's Crawls %v)", n.Message, at.Key, at.Value, srv.Crawls)
			}
		}
	}
	if !listening {
		t.Errorf("no startup note says where serve listens: %+v", srv.StartupNotes(addr))
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	base := "http://" + addr.String()

	if code, body := get(t, base+"/readyz", nil); code != 200 || body != `{"ready":true,"checks":{"postgres":"ok","openfga":"ok","s3":"ok"}}`+"\n" {
		t.Errorf("/readyz: %d %s", code, body)
	}
	// Without the Windmill webhook the crawl routes are still served: the
	// embedded runner runs crawls (here with the http engine, which needs
	// no Chromium).
	code, body := get(t, base+"/api/crawls", map[string]string{"X-Capture-ledger-Subject": "alice"})
	if !srv.Crawls || code != 200 || !strings.Contains(body, `"crawls":`) {
		t.Errorf("/api/crawls without a webhook (Crawls %v): %d %s", srv.Crawls, code, body)
	}

	// With the dev identity, serve answers only for loopback's names: a
	// page on another name resolving here (DNS rebinding) gets nothing.
	for _, host := range []string{"evil.example", "evil.example:" + strconv.Itoa(addr.Port), "127.0.0.1.evil.example", "localhost.evil.example"} {
		req, _ := http.NewRequest("GET", base+"/api/me", nil)
		req.Host = host
		req.Header.Set("X-Capture-ledger-Subject", "alice")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusMisdirectedRequest || strings.Contains(string(b), "alice") {
			t.Errorf("Host %s: %d %s", host, res.StatusCode, b)
		}
	}
	for _, host := range []string{"127.0.0.1", "localhost:" + strconv.Itoa(addr.Port), "[::1]:" + strconv.Itoa(addr.Port), "LOCALHOST"} {
		req, _ := http.NewRequest("GET", base+"/api/me", nil)
		req.Host = host
		req.Header.Set("X-Capture-ledger-Subject", "alice")
		if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusOK {
			t.Errorf("Host %s: %v %v", host, res, err)
		} else {
			res.Body.Close()
		}
	}
	// A replay origin under replay.localhost is served, on serve's own
	// port, and answers nothing of the API.
	if code, body := get(t, "http://"+addr.String()+"/api/me", nil); code != 401 {
		t.Errorf("/api/me without identity: %d %s", code, body)
	}
	label, _ := replay.NewLabel()
	req, _ := http.NewRequest("GET", base+"/api/me", nil)
	req.Host = label + ".replay.localhost:" + strconv.Itoa(addr.Port)
	req.Header.Set("X-Capture-ledger-Subject", "alice")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusNotFound {
		t.Errorf("/api/me on a replay origin: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	var replayNote, oneSite bool
	for _, n := range srv.StartupNotes(addr) {
		replayNote = replayNote || strings.Contains(n.Message, fmt.Sprintf("http://<label>.replay.localhost:%d", addr.Port))
		oneSite = oneSite || strings.Contains(n.Message, "are one site")
	}
	if !replayNote || oneSite {
		t.Errorf("no startup note says where replay origins are, or one says they share the API's site: %+v", srv.StartupNotes(addr))
	}
	// Under the API's own registrable domain, replay origins are the API's
	// site: the viewer keeps cookies (clearing them would sign people out of
	// the console), and serve says so.
	sameSite := s
	sameSite.APIURL, sameSite.ReplayDomain, sameSite.SearchDir = "https://ledger.example.org", "replay.example.org", filepath.Join(t.TempDir(), "search")
	b := app.New(sameSite, nil)
	b.SetAuthz(env.FGA)
	t.Cleanup(b.Close)
	srvB, err := b.Server(ctx, app.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oneSite = false
	for _, n := range srvB.StartupNotes(addr) {
		oneSite = oneSite || strings.Contains(n.Message, "are one site") && n.Level == slog.LevelWarn
	}
	if !oneSite {
		t.Errorf("no startup warning that replay shares the API's site: %+v", srvB.StartupNotes(addr))
	}

	conn := testenv.Connect(t, env.DSN)
	payload, _ := json.Marshal(ledger.OutboxPayload{Writes: []ledger.Tuple{{User: "user:alice", Relation: "submitter", Object: "organization:acme"}}})
	if _, err := conn.Exec(context.Background(), `INSERT INTO fga_outbox (payload) VALUES ($1)`, payload); err != nil {
		t.Fatal(err)
	}
	me := map[string]string{"X-Capture-ledger-Subject": "alice", "X-Capture-ledger-Organizations": "acme"}
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		var code int
		if code, body = get(t, base+"/api/me", me); code == 200 && strings.Contains(body, `"canSubmit":true`) {
			break
		}
	}
	if !strings.Contains(body, `"subject":"alice"`) || !strings.Contains(body, `"canSubmit":true`) {
		t.Errorf("/api/me never saw the drained tuple: %s", body)
	}

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if c, err := net.DialTimeout("tcp", addr.String(), time.Second); err == nil {
		c.Close()
		t.Errorf("something still listens on %s after Run returned", addr)
	}
}

// TestServerRefusesBeforeOpening: settings serve must not run with are a
// *app.RefusedError found before any dependency is opened (the database
// here does not exist, so reaching it would be a different error).
func TestServerRefusesBeforeOpening(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nowhere := fmt.Sprintf("postgres://nobody:nothing@%s/none?sslmode=disable&connect_timeout=2", l.Addr())
	l.Close()
	for _, tc := range []struct {
		name   string
		dev    bool
		host   string
		key    string
		opts   app.ServeOptions
		apiURL string
		domain string
		want   string
		reachA bool // the refusal is lifted: the next error is the database
	}{
		{name: "a replay domain with a path", host: "127.0.0.1", key: strings.Repeat("k", 32), domain: "https://replay.example.org/app", want: `CAPTURE_LEDGER_REPLAY_DOMAIN="https://replay.example.org/app": want a domain`},
		{name: "a replay address", host: "127.0.0.1", key: strings.Repeat("k", 32), domain: "127.0.0.1", want: "an IP address or a bare name cannot have them"},
		{name: "the API under the replay domain", host: "127.0.0.1", key: strings.Repeat("k", 32), apiURL: "http://api.replay.localhost:7070", want: "is a name under CAPTURE_LEDGER_REPLAY_DOMAIN"},
		{name: "dev identity on the network", dev: true, host: "0.0.0.0", want: "listens on loopback only"},
		{name: "no replay key outside dev mode", host: "127.0.0.1", want: "CAPTURE_LEDGER_REPLAY_KEY is not set"},
		{name: "a short replay key", host: "127.0.0.1", key: "short", want: "CAPTURE_LEDGER_REPLAY_KEY"},
		{name: "the flag lifts the network refusal", dev: true, host: "0.0.0.0", opts: app.ServeOptions{DevIdentityOnNetwork: true}, reachA: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := testSettings(nowhere, tc.dev, tc.host, tc.key)
			st.APIURL, st.ReplayDomain = tc.apiURL, tc.domain
			a := app.New(st, nil)
			defer a.Close()
			_, err := a.Server(context.Background(), tc.opts)
			var refused *app.RefusedError
			switch {
			case tc.reachA:
				if errors.As(err, &refused) || !errors.Is(err, ledger.ErrUnreachable) {
					t.Errorf("err %v, want the unreachable database", err)
				}
			case !errors.As(err, &refused) || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ledger.ErrUnreachable):
				t.Errorf("err %v, want a refusal saying %q", err, tc.want)
			}
		})
	}
}

func testSettings(dsn string, dev bool, host, replayKey string) config.Settings {
	return config.Settings{
		DatabaseURL: dsn, FGAStoreID: "01HXXXXXXXXXXXXXXXXXXXXXXX", FGAModelID: "01HXXXXXXXXXXXXXXXXXXXXXXX",
		S3Endpoint: "http://127.0.0.1:1", S3Bucket: "nowhere", S3Region: "us-east-1", S3ForcePathStyle: true,
		DevIdentity: dev, APIHost: host, DrainInterval: time.Second, ReplayKey: replayKey,
	}
}
