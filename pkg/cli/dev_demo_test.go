package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
)

// syncBuffer is a bytes.Buffer the command writes from its goroutine while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDevDemo: `dev demo` serves the bundled site, grants the dev user,
// starts the crawl with mixed rules and runs serve, whose embedded runner
// (http engine) crawls the site to its end; the picker's API then lists
// the archives to the dev user, and the crawl's decisions explain what was
// left out.
func TestDevDemo(t *testing.T) {
	t.Parallel()
	dir, env := deployedStack(t)
	env["CAPTURE_LEDGER_CAPTURE_ENGINE"] = "http"
	env["CAPTURE_LEDGER_API_HOST"], env["CAPTURE_LEDGER_API_PORT"] = "127.0.0.1", fmt.Sprint(freePort(t))
	env["CAPTURE_LEDGER_DEV_IDENTITY"] = "1"

	// Loopback stays refused unless allowed.
	if _, errs, code := run(t, dir, env, "dev", "demo", "--as", "alice"); code != ExitUsage || !strings.Contains(errs, "CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE=1") {
		t.Fatalf("without ALLOW_PRIVATE: exit %d %s", code, errs)
	}
	env["CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE"] = "1"

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		_, _, code := runCtx(ctx, t, dir, env, func(f *Factory) { f.Streams.Out, f.Streams.Err = out, io.Discard }, "dev", "demo", "--as", "alice")
		done <- code
	}()

	watch := regexp.MustCompile(`ledgerctl crawl status ([0-9a-f-]{36}) --as alice --org demo --watch`)
	picker := regexp.MustCompile(`Picker +(http://127\.0\.0\.1:\d+/)`)
	var id, base string
	for deadline := time.Now().Add(60 * time.Second); id == ""; {
		if m := watch.FindStringSubmatch(out.String()); m != nil {
			id = m[1]
			if p := picker.FindStringSubmatch(out.String()); p != nil {
				base = p[1]
			}
		}
		select {
		case code := <-done:
			t.Fatalf("dev demo exited %d before printing the watch command: %s", code, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no watch command printed: %s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if base == "" || !strings.Contains(out.String(), "alice may now start crawls for demo") {
		t.Fatalf("the demo's summary: %s", out)
	}

	f := NewFactory(Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
	f.Dir = dir
	f.Env = func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	t.Cleanup(f.close)
	svc, err := (&CrawlOptions{f: f}).service(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	alice := crawl.Caller{Subject: "alice", Orgs: []string{"demo"}}
	var v crawl.CrawlView
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if v, err = svc.Get(context.Background(), alice, id); err != nil {
			t.Fatal(err)
		}
		if v.State != crawl.StateRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo crawl still runs after two minutes: %+v", v)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// www: /, /ja, /about (not /private/notes: robots.txt; not /login:
	// nofollow); blog: its index and /2026/hello (found from /ja), not
	// /2026/kyoto (only linked from the blog, whose links are not
	// followed); ads: nothing (skip rule).
	if v.State != crawl.StateSucceeded || v.PagesCaptured != 5 {
		t.Errorf("demo crawl: %s with %d captured, want succeeded with 5", v.State, v.PagesCaptured)
	}

	// The picker's API, as the newcomer typing alice / demo: the archives
	// appear once serve's drain has written their tuples to OpenFGA.
	var got []string
	for deadline := time.Now().Add(time.Minute); ; {
		got = demoArchivePaths(t, base)
		if len(got) >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if want := []string{"/", "/", "/2026/hello", "/about", "/ja"}; !slices.Equal(got, want) {
		t.Errorf("archives' paths %q, want %q", got, want)
	}

	dec, err := svc.Decisions(context.Background(), alice, id)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(dec)
	for _, want := range []string{`"robots":[{`, "/private/notes", `"action":"skip"`, site(out.String(), "ads")} {
		if !strings.Contains(string(b), want) {
			t.Errorf("decisions do not mention %q: %s", want, b)
		}
	}

	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("dev demo exited %d after Ctrl-C", code)
	}
}

// demoArchivePaths is the sorted paths of the archives GET /api/archives
// lists to alice of demo.
func demoArchivePaths(t *testing.T, base string) []string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"api/archives", nil)
	req.Header.Set("X-Capture-ledger-Subject", "alice")
	req.Header.Set("X-Capture-ledger-Organizations", "demo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Archives []struct {
			SourceURL string `json:"sourceUrl"`
		} `json:"archives"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/archives: %d %v", resp.StatusCode, err)
	}
	var got []string
	for _, a := range list.Archives {
		u, err := url.Parse(a.SourceURL)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, u.Path)
	}
	slices.Sort(got)
	return got
}

// site is the address the demo's summary gives the named host.
func site(summary, host string) string {
	m := regexp.MustCompile(host + ` +(http://` + host + `\.demo\.localhost:\d+/)`).FindStringSubmatch(summary)
	if m == nil {
		return "no " + host + " address in the summary"
	}
	return m[1]
}
