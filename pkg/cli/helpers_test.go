package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"net"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

var update = flag.Bool("update", false, "rewrite golden files")

// run drives the real command tree in-process from dir (the env files'
// folder) with every configuration variable cleared.
func run(t *testing.T, dir string, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCtx(context.Background(), t, dir, env, nil, args...)
}

// runStdin is run with standard input.
func runStdin(t *testing.T, dir string, env map[string]string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCtx(context.Background(), t, dir, env, func(f *cmdutil.Factory) { f.Streams.In = strings.NewReader(stdin) }, args...)
}

// runCtx is run with a context and an optional hook on the factory.
func runCtx(ctx context.Context, t *testing.T, dir string, env map[string]string, hook func(*cmdutil.Factory), args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	f := cmdutil.NewFactory(cmdutil.Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	f.Dir = dir
	// Each run reads only env, never the process's environment, so the
	// tests can run in parallel.
	own := maps.Clone(env)
	f.Env = func(name string) (string, bool) { v, ok := own[name]; return v, ok }
	if hook != nil {
		hook(f)
	}
	root := NewRootCmd(f)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.ExecuteContext(ctx)
	f.Close()
	code = cmdutil.ExitOK
	if err != nil {
		var msg string
		code, msg = cmdutil.Classify(err)
		if msg != "" {
			errb.WriteString("ledgerctl: " + msg + "\n")
		}
	}
	return out.String(), errb.String(), code
}

// manifestJSON is a BrowserHive v12 report for taskID.
func manifestJSON(taskID, status, bucket, waczKey string) []byte {
	artifacts := ""
	if waczKey != "" {
		artifacts = fmt.Sprintf(`,"artifacts":{"wacz":"s3://%s/%s"}`, bucket, waczKey)
	}
	return []byte(fmt.Sprintf(`{"taskId":%q,"correlationId":"c0ffee00","url":"https://example.com/%s","labels":["daily"],
		"status":%q,"timestamp":"2026-11-30T10:00:00Z","captureProcessingTimeMs":1200,
		"completeness":{"complete":false,"bodylessUrls":[],"truncatedUrls":[]}%s}`, taskID, taskID[:8], status, artifacts))
}

// stackEnv is the env for commands that reach the test database and bucket.
func stackEnv(t *testing.T, dsn, bucket string) map[string]string {
	cfg := testenv.S3Config(t)
	return map[string]string{
		"DATABASE_URL":                        dsn,
		"CAPTURE_LEDGER_S3_ENDPOINT":          cfg.Endpoint,
		"CAPTURE_LEDGER_S3_BUCKET":            bucket,
		"CAPTURE_LEDGER_S3_ACCESS_KEY_ID":     cfg.AccessKeyID,
		"CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY": cfg.SecretAccessKey,
		"CAPTURE_LEDGER_S3_FORCE_PATH_STYLE":  "true",
		// The on-disk search index of anything a test starts: never the
		// default, which is relative to the working directory (the source).
		"CAPTURE_LEDGER_SEARCH_DIR": t.TempDir(),
	}
}

// testStack is a stack deployed for one test: its own database, bucket
// and OpenFGA datastore with the model deployed, and the settings that
// name them (env, with the overrides given to deployStack applied before
// the deploy).
type testStack struct {
	dir, dsn, bucket string
	objects          *blob.Client
	env              map[string]string
}

// deployStack is testStack's set-up; overrides are KEY, VALUE pairs.
func deployStack(t *testing.T, overrides ...string) testStack {
	t.Helper()
	if len(overrides)%2 != 0 {
		t.Fatalf("deployStack: overrides %q are not KEY, VALUE pairs", overrides)
	}
	s := testStack{dsn: testenv.Database(t), dir: t.TempDir()}
	s.objects, s.bucket, _ = testenv.Bucket(t)
	s.env = stackEnv(t, s.dsn, s.bucket)
	s.env["CAPTURE_LEDGER_FGA_DATASTORE_URI"] = testenv.EmptyDatabase(t)
	for i := 0; i < len(overrides); i += 2 {
		s.env[overrides[i]] = overrides[i+1]
	}
	if out, errs, code := run(t, s.dir, s.env, "fga", "deploy"); code != 0 {
		t.Fatalf("deploy: exit %d: %s %s", code, out, errs)
	}
	return s
}

// deployedStack is a working directory and the env that reaches a test's
// own database, bucket and OpenFGA datastore (PostgreSQL), the model
// deployed.
func deployedStack(t *testing.T) (dir string, env map[string]string) {
	t.Helper()
	s := deployStack(t)
	return s.dir, s.env
}

func ptr(s string) *string { return &s }

func outboxPayloads(t *testing.T, conn *pgx.Conn) []ledger.OutboxPayload {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT payload FROM fga_outbox ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.OutboxPayload
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		p, err := ledger.ParseOutboxPayload(raw)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func containsPayload(all []ledger.OutboxPayload, want ledger.OutboxPayload) bool {
	w, _ := json.Marshal(want)
	for _, p := range all {
		if b, _ := json.Marshal(p); string(b) == string(w) {
			return true
		}
	}
	return false
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// closedURL returns an http URL on 127.0.0.1 where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	return url
}

// addResult is the --json body of `archives add`.
type addResult struct {
	Org, SubmittedBy, Prefix                                  string
	Manifests, Registered, Known, NoArchive, Refused, Missing int
	Errored                                                   int `json:"errors"`
	Results                                                   []struct {
		Key, Outcome, TaskID, ArchiveID, Reason string
	}
}

func (r addResult) outcomes() map[string]string {
	m := map[string]string{}
	for _, x := range r.Results {
		m[x.Key] = x.Outcome
	}
	return m
}

// capturedStack is a test stack (database, bucket, OpenFGA deployed on its
// own datastore) holding one archive alice captured for acme, registered
// with `archives add` and drained.
type capturedStack struct {
	dsn, bucket, dir, id string
	env                  map[string]string
	keys                 []string // the WACZ, its manifest, its links file
}

func newCapturedStack(t *testing.T) *capturedStack {
	t.Helper()
	ctx := context.Background()
	s := &capturedStack{dsn: testenv.Database(t), dir: t.TempDir()}
	objects, bucket, _ := testenv.Bucket(t)
	s.bucket = bucket
	s.env = stackEnv(t, s.dsn, bucket)
	s.env["CAPTURE_LEDGER_FGA_DATASTORE_URI"] = testenv.EmptyDatabase(t)
	if out, errs, code := run(t, s.dir, s.env, "fga", "deploy"); code != 0 {
		t.Fatalf("deploy: exit %d: %s %s", code, out, errs)
	}
	task := uuid.NewString()
	stem := "bh/" + task + "_c0ffee00"
	s.keys = []string{stem + ".wacz", stem + ".result.json", stem + ".links.json"}
	for i, body := range [][]byte{[]byte("PK\x03\x04"), manifestJSON(task, "success", bucket, s.keys[0]), []byte(`{"links":[]}`)} {
		if err := objects.Put(ctx, bucket, s.keys[i], "application/octet-stream", body); err != nil {
			t.Fatal(err)
		}
	}
	out, errs, code := run(t, s.dir, s.env, "archives", "add", s.keys[1], "--org", "acme", "--as", "alice", "--json")
	var res addResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Registered != 1 {
		t.Fatalf("add: exit %d: %s %s", code, out, errs)
	}
	s.id = res.Results[0].ArchiveID
	s.drain(t)
	return s
}

func (s *capturedStack) drain(t *testing.T) {
	t.Helper()
	if out, errs, code := run(t, s.dir, s.env, "drain"); code != 0 {
		t.Fatalf("drain: exit %d: %s %s", code, out, errs)
	}
}

func (s *capturedStack) run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return run(t, s.dir, s.env, args...)
}
