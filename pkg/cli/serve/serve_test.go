package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestServeLikeAnOperator drives the binary's commands in order: deploy the
// model, register a capture with reconcile, serve (whose ticker drains the
// outbox), mint a URL as an organisation member and fetch the object, then
// stop the server gracefully.
func TestServeLikeAnOperator(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	port := clitest.FreePort(t)
	s := clitest.DeployStack(t, "CAPTURE_LEDGER_DEV_IDENTITY", "1", "CAPTURE_LEDGER_API_PORT", fmt.Sprint(port), "CAPTURE_LEDGER_DRAIN_INTERVAL_MS", "200")
	dsn, objects, bucket, dir, env := s.DSN, s.Objects, s.Bucket, s.Dir, s.Env
	if !strings.Contains(s.DeployOut, "CAPTURE_LEDGER_FGA_MODEL_ID=") {
		t.Fatalf("deploy printed no model id: %s", s.DeployOut)
	}

	// A capture whose level report "failed": reconcile registers it.
	task := uuid.NewString()
	wacz := []byte("wacz bytes " + task)
	if err := objects.Put(ctx, bucket, "c/"+task+".wacz", "application/wacz", wacz); err != nil {
		t.Fatal(err)
	}
	if err := objects.Put(ctx, bucket, "c/"+task+".result.json", "application/json", apptest.Manifest(task, "success", "https://example.com/", bucket, "c/"+task+".wacz", time.Now())); err != nil {
		t.Fatal(err)
	}
	conn := testenv.Connect(t, dsn)
	if _, err := conn.Exec(ctx, `INSERT INTO capture_submissions (task_id, org_id, submitted_by, manifest_key) VALUES ($1, 'acme', 'alice', $2)`, task, "c/"+task+".result.json"); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := clitest.Run(t, dir, env, "reconcile"); code != 0 {
		t.Fatalf("reconcile: exit %d: %s", code, errs)
	}
	var archiveID string
	if err := conn.QueryRow(ctx, `SELECT id::text FROM archives WHERE task_id = $1`, task).Scan(&archiveID); err != nil {
		t.Fatal(err)
	}

	base, stop := startServe(t, dir, env, port)

	// The drain ticker delivers the tuples within a few intervals.
	var url string
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		req, _ := http.NewRequest("POST", base+"/api/archives/"+archiveID+"/url", nil)
		req.Header.Set("X-Capture-ledger-Subject", "bob")
		req.Header.Set("X-Capture-ledger-Organizations", "acme")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == 200 {
			var u struct{ URL string }
			_ = json.Unmarshal(body, &u)
			url = u.URL
			break
		}
	}
	if url == "" {
		t.Fatal("the member never got a URL: the outbox was not drained by serve")
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(got) != string(wacz) {
		t.Errorf("presigned GET: %d %q", res.StatusCode, got)
	}
	page, err := http.Get(base + "/")
	if err != nil || page.StatusCode != 200 {
		t.Errorf("console: %v", err)
	} else {
		page.Body.Close()
	}

	serveErrs, serveCode := stop()
	if serveCode != 0 {
		t.Errorf("serve exit %d after SIGTERM-like cancel: %s", serveCode, serveErrs)
	}
	for _, want := range []string{"Archive API listening on 127.0.0.1:" + fmt.Sprint(port), "CAPTURE_LEDGER_DEV_IDENTITY=1 — callers are trusted", "shutting down", "config: .env.local (2 names)"} {
		if !strings.Contains(serveErrs, want) {
			t.Errorf("serve's stderr lacks %q", want)
		}
	}

	// The offline equivalents answer what the API answered.
	out, errs, code := clitest.Run(t, dir, env, "archives", "list", "--as", "bob", "--org", "acme", "--json")
	if code != 0 || !strings.Contains(out, archiveID) {
		t.Errorf("archives list as a member: exit %d: %s %s", code, out, errs)
	}
	out, _, code = clitest.Run(t, dir, env, "archives", "list", "--as", "carol", "--org", "contoso", "--json")
	if code != 0 || !strings.Contains(out, `"archives":[]`) {
		t.Errorf("archives list as an outsider: exit %d: %s", code, out)
	}
	out, _, code = clitest.Run(t, dir, env, "archives", "url", archiveID, "--as", "bob", "--org", "acme")
	if code != 0 || !strings.Contains(out, "X-Amz-Signature=") {
		t.Errorf("archives url as a member: exit %d: %s", code, out)
	}
	if _, errs, code := clitest.Run(t, dir, env, "archives", "url", archiveID, "--as", "carol"); code != cmdutil.ExitFailure || !strings.Contains(errs, "not found") {
		t.Errorf("archives url as an outsider: exit %d: %s", code, errs)
	}
	if _, errs, code := clitest.Run(t, dir, env, "archives", "url", "nope", "--as", "carol"); code != cmdutil.ExitUsage {
		t.Errorf("archives url with a bad id: exit %d: %s", code, errs)
	}

	// drain: a malformed row is dead-lettered, listed, and can be requeued.
	if _, err := conn.Exec(ctx, `INSERT INTO fga_outbox (payload) VALUES ('{"writes":"nope"}')`); err != nil {
		t.Fatal(err)
	}
	out, errs, code = clitest.Run(t, dir, env, "drain", "--json")
	if code != cmdutil.ExitFailure || !strings.Contains(out, `"dead":1`) || !strings.Contains(errs, "drain --status") {
		t.Errorf("drain with a malformed row: exit %d: %s %s", code, out, errs)
	}
	out, _, code = clitest.Run(t, dir, env, "drain", "--status")
	if code != 0 || !strings.Contains(out, "dead 1") || !strings.Contains(out, "malformed `writes`") {
		t.Errorf("drain --status: exit %d: %s", code, out)
	}
	out, _, code = clitest.Run(t, dir, env, "drain", "--requeue")
	if code != 0 || !strings.Contains(out, "requeued 1") {
		t.Errorf("drain --requeue: exit %d: %s", code, out)
	}
}

// startServe runs `ledgerctl serve` on port until stop, which cancels it
// and answers its stderr and exit code; it fails the test when serve does
// not answer /healthz within a minute.
func startServe(t *testing.T, dir string, env map[string]string, port int) (base string, stop func() (string, int)) {
	t.Helper()
	sctx, cancel := context.WithCancel(context.Background())
	type result struct {
		errs string
		code int
	}
	done := make(chan result, 1)
	go func() {
		_, errs, code := clitest.RunCtx(sctx, t, dir, env, nil, "serve")
		done <- result{errs, code}
	}()
	stop = func() (string, int) {
		cancel()
		r := <-done
		return r.errs, r.code
	}
	base = fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			return base, stop
		}
		if time.Now().After(deadline) {
			errs, code := stop()
			t.Fatalf("serve never answered: exit %d: %s", code, errs)
		}
	}
}

// TestServeCapturesNothingUnsigned: with CAPTURE_LEDGER_CAPTURE_SIGNING=1
// (valid with BrowserHive, which signs crawls' captures), serve does not
// serve direct captures, which the built-in capturer would write
// unsigned, and says so in its log.
func TestServeCapturesNothingUnsigned(t *testing.T) {
	t.Parallel()
	port := clitest.FreePort(t)
	s := clitest.DeployStack(t, "CAPTURE_LEDGER_DEV_IDENTITY", "1", "CAPTURE_LEDGER_API_PORT", fmt.Sprint(port),
		"CAPTURE_LEDGER_CAPTURE_SIGNING", "1", "CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS", "http://127.0.0.1:9", "CAPTURE_LEDGER_CAPTURE_ENGINE", "http")
	base, stop := startServe(t, s.Dir, s.Env, port)
	// Served, the engines would answer 200 and an empty capture request
	// 400 (its body is checked first).
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/api/captures", `{}`},
		{"GET", "/api/captures/engines", ""},
	} {
		req, _ := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Capture-ledger-Subject", "alice")
		req.Header.Set("X-Capture-ledger-Organizations", "acme")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s with signing asked for: %d, want 404 (not served)", r.method, r.path, res.StatusCode)
		}
	}
	errs, _ := stop()
	if !strings.Contains(errs, "POST /api/captures is not served") || !strings.Contains(errs, "does not sign") {
		t.Errorf("serve's log does not say why captures are not served:\n%s", errs)
	}
}

// TestServeRefusesDevIdentityOnTheNetwork is the attack of anyone on the
// network acting as any user: with CAPTURE_LEDGER_DEV_IDENTITY=1, serve
// asked to listen on 0.0.0.0 exits 2 with a clear error before it opens or
// binds anything, and the database is unchanged. The flag lifts exactly
// that refusal (the server then goes on to its dependencies: here an
// unreachable database, so nothing binds 0.0.0.0 in the test).
func TestServeRefusesDevIdentityOnTheNetwork(t *testing.T) {
	t.Parallel()
	dsn := testenv.Database(t)
	_, bucket, _ := testenv.Bucket(t)
	dir := t.TempDir()
	port := clitest.FreePort(t)
	env := clitest.StackEnv(t, dsn, bucket)
	env["CAPTURE_LEDGER_FGA_STORE_ID"] = "01HXXXXXXXXXXXXXXXXXXXXXXX"
	env["CAPTURE_LEDGER_FGA_MODEL_ID"] = "01HXXXXXXXXXXXXXXXXXXXXXXX"
	env["CAPTURE_LEDGER_DEV_IDENTITY"] = "1"
	env["CAPTURE_LEDGER_API_PORT"] = fmt.Sprint(port)
	before := testenv.TakeSnapshot(t, dsn)

	for _, host := range []string{"0.0.0.0", "::", "192.0.2.1"} {
		out, errs, code := clitest.Run(t, dir, env, "serve", "--host", host)
		if code != cmdutil.ExitUsage || out != "" {
			t.Errorf("serve --host %s with dev identity: exit %d, stdout %q", host, code, out)
		}
		for _, want := range []string{"listens on loopback only", `not "` + host + `"`, "anyone who can reach that address could act as any user", "CAPTURE_LEDGER_API_HOST=127.0.0.1", "--insecure-dev-identity-on-network"} {
			if !strings.Contains(errs, want) {
				t.Errorf("serve --host %s: stderr lacks %q:\n%s", host, want, errs)
			}
		}
	}
	// The same through the environment instead of the flag.
	env["CAPTURE_LEDGER_API_HOST"] = "0.0.0.0"
	if _, errs, code := clitest.Run(t, dir, env, "serve"); code != cmdutil.ExitUsage || !strings.Contains(errs, "listens on loopback only") {
		t.Errorf("CAPTURE_LEDGER_API_HOST=0.0.0.0 with dev identity: exit %d: %s", code, errs)
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		c.Close()
		t.Errorf("something listens on port %d after the refusals", port)
	}
	testenv.Unchanged(t, dsn, before)

	// The flag lifts the refusal: serve goes on and fails only at the
	// (unreachable) database, never for the address.
	env["DATABASE_URL"] = fmt.Sprintf("postgres://nobody:nothing@127.0.0.1:%d/none?sslmode=disable&connect_timeout=2", clitest.FreePort(t))
	_, errs, code := clitest.Run(t, dir, env, "serve", "--insecure-dev-identity-on-network")
	if code != cmdutil.ExitUnreachable || strings.Contains(errs, "loopback only") {
		t.Errorf("serve --insecure-dev-identity-on-network: exit %d: %s", code, errs)
	}
}
