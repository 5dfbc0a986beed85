package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// A cluster is what several `ledgerctl serve` processes share: one ledger
// database, one bucket, one OpenFGA datastore (each serve embeds its own
// OpenFGA server on it) with the model deployed by `ledgerctl fga deploy`,
// whose ids the working directory's .env.local pins for every process.
type cluster struct {
	t      *testing.T
	dir    string
	env    map[string]string
	dsn    string
	bucket string
	db     *pgxpool.Pool
}

func newCluster(t *testing.T, settings map[string]string) *cluster {
	t.Helper()
	dsn := testenv.Database(t)
	_, bucket, s3 := testenv.Bucket(t)
	c := &cluster{t: t, dir: t.TempDir(), dsn: dsn, bucket: bucket, env: map[string]string{
		"DATABASE_URL":                         dsn,
		"CAPTURE_LEDGER_S3_ENDPOINT":           s3.Endpoint,
		"CAPTURE_LEDGER_S3_BUCKET":             bucket,
		"CAPTURE_LEDGER_S3_ACCESS_KEY_ID":      s3.AccessKeyID,
		"CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY":  s3.SecretAccessKey,
		"CAPTURE_LEDGER_S3_REGION":             "us-east-1",
		"CAPTURE_LEDGER_S3_FORCE_PATH_STYLE":   "true",
		"CAPTURE_LEDGER_FGA_DATASTORE_URI":     testenv.EmptyDatabase(t),
		"CAPTURE_LEDGER_DEV_IDENTITY":          "1",
		"CAPTURE_LEDGER_API_HOST":              "127.0.0.1",
		"CAPTURE_LEDGER_CAPTURE_ENGINE":        "http",
		"CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE": "1",
		"CAPTURE_LEDGER_DRAIN_INTERVAL_MS":     "200",
		"CAPTURE_LEDGER_LOG_FORMAT":            "json",
		"CAPTURE_LEDGER_SEARCH_DIR":            filepath.Join(t.TempDir(), "search"),
	}}
	for k, v := range settings {
		c.env[k] = v
	}
	pool, err := postgres.Open(context.Background(), dsn, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	c.db = pool
	if out, errs, code := c.ledgerctl("fga", "deploy", "--json"); code != 0 {
		t.Fatalf("fga deploy: exit %d: %s %s", code, out, errs)
	}
	return c
}

// environ is the child's environment: the test's own minus every ledgerctl
// setting, plus the cluster's and extra (KEY=VALUE).
func (c *cluster) environ(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "CAPTURE_LEDGER_") || name == "DATABASE_URL" || name == "LOG_LEVEL" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, runMain+"=1")
	for k, v := range c.env {
		env = append(env, k+"="+v)
	}
	return append(env, extra...)
}

// ledgerctl runs one command to its end in a child process.
func (c *cluster) ledgerctl(args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Dir, cmd.Env = c.dir, c.environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("ledgerctl %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), 0
}

// grant lets subject start crawls for org (`ledgerctl fga grant`).
func (c *cluster) grant(subject, org string) {
	c.t.Helper()
	if out, errs, code := c.ledgerctl("fga", "grant", "submitter", subject, org); code != 0 {
		c.t.Fatalf("fga grant submitter %s %s: exit %d: %s %s", subject, org, code, out, errs)
	}
}

// serveProc is one `ledgerctl serve` child process.
type serveProc struct {
	name string
	base string
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan struct{}
}

// serve starts `ledgerctl serve` named name (its PostgreSQL
// application_name) on a port, search index and admin socket of its own;
// ready waits for it.
func (c *cluster) serve(name string) *serveProc {
	c.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	sep := "?"
	if strings.Contains(c.dsn, "?") {
		sep = "&"
	}
	p := &serveProc{name: name, base: fmt.Sprintf("http://127.0.0.1:%d", port), log: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "serve")
	p.cmd.Dir = c.dir
	p.cmd.Env = c.environ("CAPTURE_LEDGER_API_PORT="+fmt.Sprint(port), "CAPTURE_LEDGER_SEARCH_DIR="+filepath.Join(c.t.TempDir(), "search"),
		"DATABASE_URL="+c.dsn+sep+"application_name="+name)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	c.t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if c.t.Failed() {
			c.t.Logf("%s's log:\n%s", name, p.log.String())
		}
	})
	return p
}

// ready waits until /readyz says PostgreSQL, OpenFGA and S3 answer.
func (p *serveProc) ready(t *testing.T) {
	t.Helper()
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-p.done:
			t.Fatalf("%s exited at start:\n%s", p.name, p.log.String())
		default:
		}
		if res, err := http.Get(p.base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(end) {
			t.Fatalf("%s not ready within 60 s:\n%s", p.name, p.log.String())
		}
	}
}

// kill ends the process with SIGKILL: no shutdown, no lease released.
func (p *serveProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

// call makes one API request as subject of org and decodes the JSON answer
// into out (when not nil); it returns the status.
func (p *serveProc) call(t *testing.T, method, path, subject, org string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Capture-ledger-Subject", subject)
	req.Header.Set("X-Capture-ledger-Organizations", org)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s on %s: %v", method, path, p.name, err)
		return 0
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Errorf("%s %s on %s: %v: %s", method, path, p.name, err, data)
		}
	} else if res.StatusCode >= 300 {
		t.Logf("%s %s on %s: %d %s", method, path, p.name, res.StatusCode, data)
	}
	return res.StatusCode
}

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

// site is one loopback web host (its own port: its own host) that keeps,
// as the site's owner would see it, when each page request arrived and
// when its answer was written, and when it last answered 429.
type site struct {
	*httptest.Server
	name string

	mu    sync.Mutex
	pages map[string]http.HandlerFunc
	seen  []visit
}

// visit is one page request as the site saw it.
type visit struct {
	path       string
	start, end time.Time
	status     int
}

func newSite(t *testing.T) *site {
	s := &site{pages: map[string]http.HandlerFunc{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.mu.Lock()
		fn := s.pages[r.URL.Path]
		s.mu.Unlock()
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		if fn == nil {
			http.NotFound(rec, r)
		} else {
			fn(rec, r)
		}
		if r.URL.Path == "/robots.txt" {
			return // not a capture
		}
		s.mu.Lock()
		s.seen = append(s.seen, visit{path: r.URL.Path, start: start, end: time.Now(), status: rec.status})
		s.mu.Unlock()
	}))
	s.name = strings.TrimPrefix(s.URL, "http://")
	t.Cleanup(s.Close)
	return s
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// page serves a small HTML page at path.
func (s *site) page(path, body string) {
	s.handle(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", path, body)
	})
}

func (s *site) handle(path string, fn http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path] = fn
}

// visits are the page requests in the order they arrived.
func (s *site) visits() []visit {
	s.mu.Lock()
	v := append([]visit(nil), s.seen...)
	s.mu.Unlock()
	sort.Slice(v, func(i, j int) bool { return v[i].start.Before(v[j].start) })
	return v
}

// sitePoliteness checks the site's own view of its visitors: no request
// arrived while another was being answered, none sooner than least after
// the previous answer, and none sooner than afterRefusal after a 429.
func sitePoliteness(s *site, least, afterRefusal time.Duration) (overlaps, short int, minGap time.Duration) {
	v := s.visits() // in arrival order
	minGap = time.Hour
	for i := 1; i < len(v); i++ {
		var prevEnd time.Time
		var refused bool
		for _, p := range v[:i] {
			if p.end.After(prevEnd) {
				prevEnd, refused = p.end, p.status == http.StatusTooManyRequests
			}
		}
		gap := v[i].start.Sub(prevEnd)
		minGap = min(minGap, gap)
		switch {
		case gap < 0:
			overlaps++
		case gap < least, refused && gap < afterRefusal:
			short++
		}
	}
	return overlaps, short, minGap
}
