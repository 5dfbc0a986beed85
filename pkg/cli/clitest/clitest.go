// Package clitest runs ledgerctl's real command tree in-process for the
// tests of pkg/cli and its command groups, and sets up what they need: a
// test's own database, bucket and OpenFGA datastore with the model deployed
// (DeployStack), or that plus one archive captured and registered
// (NewCapturedStack). It is imported by tests only.
package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/cli"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// Run drives the real command tree in-process from dir (the env files'
// folder) with every configuration variable cleared.
func Run(t *testing.T, dir string, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return RunCtx(context.Background(), t, dir, env, nil, args...)
}

// RunStdin is Run with standard input.
func RunStdin(t *testing.T, dir string, env map[string]string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return RunCtx(context.Background(), t, dir, env, func(f *cmdutil.Factory) { f.Streams.In = strings.NewReader(stdin) }, args...)
}

// RunCtx is Run with a context and an optional hook on the factory.
func RunCtx(ctx context.Context, t *testing.T, dir string, env map[string]string, hook func(*cmdutil.Factory), args ...string) (stdout, stderr string, code int) {
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
	root := cli.NewRootCmd(f)
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

// StackEnv is the env for commands that reach the test database and bucket.
func StackEnv(t *testing.T, dsn, bucket string) map[string]string {
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

// Stack is a stack deployed for one test: its own database, bucket and
// OpenFGA datastore with the model deployed, and the settings that name
// them (Env, with the overrides given to DeployStack applied before the
// deploy). Dir is the working directory its commands run in.
type Stack struct {
	Dir, DSN, Bucket string
	Objects          *blob.Client
	Env              map[string]string
	// DeployOut is what `ledgerctl fga deploy` printed.
	DeployOut string
}

// DeployStack is Stack's set-up; overrides are KEY, VALUE pairs.
func DeployStack(t *testing.T, overrides ...string) Stack {
	t.Helper()
	if len(overrides)%2 != 0 {
		t.Fatalf("DeployStack: overrides %q are not KEY, VALUE pairs", overrides)
	}
	s := Stack{DSN: testenv.Database(t), Dir: t.TempDir()}
	s.Objects, s.Bucket, _ = testenv.Bucket(t)
	s.Env = StackEnv(t, s.DSN, s.Bucket)
	s.Env["CAPTURE_LEDGER_FGA_DATASTORE_URI"] = testenv.EmptyDatabase(t)
	for i := 0; i < len(overrides); i += 2 {
		s.Env[overrides[i]] = overrides[i+1]
	}
	out, errs, code := Run(t, s.Dir, s.Env, "fga", "deploy")
	if code != 0 {
		t.Fatalf("deploy: exit %d: %s %s", code, out, errs)
	}
	s.DeployOut = out
	return s
}

// DeployedStack is a working directory and the env that reaches a test's
// own database, bucket and OpenFGA datastore (PostgreSQL), the model
// deployed.
func DeployedStack(t *testing.T) (dir string, env map[string]string) {
	t.Helper()
	s := DeployStack(t)
	return s.Dir, s.Env
}

// LocalCaptureStack is DeployedStack where alice may submit for acme and
// captures use the http engine, private addresses allowed (the test sites
// are on loopback).
func LocalCaptureStack(t *testing.T) (dir string, env map[string]string) {
	t.Helper()
	dir, env = DeployedStack(t)
	if _, errs, code := Run(t, dir, env, "fga", "grant", "submitter", "alice", "acme"); code != 0 {
		t.Fatalf("grant: %s", errs)
	}
	env["CAPTURE_LEDGER_CAPTURE_ENGINE"] = "http"
	env["CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE"] = "1"
	return dir, env
}

// Run runs ledgerctl with args in the stack's directory and env.
func (s Stack) Run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return Run(t, s.Dir, s.Env, args...)
}

// Drain runs `ledgerctl drain`: what the stack's outbox holds reaches
// OpenFGA.
func (s Stack) Drain(t *testing.T) {
	t.Helper()
	if out, errs, code := s.Run(t, "drain"); code != 0 {
		t.Fatalf("drain: exit %d: %s %s", code, out, errs)
	}
}

// CapturedStack is a deployed Stack holding one archive alice captured for
// acme, registered with `archives add` and drained.
type CapturedStack struct {
	Stack
	ID   string   // the archive's id
	Keys []string // the WACZ, its manifest, its links file
}

// NewCapturedStack deploys a Stack and registers one archive in it.
func NewCapturedStack(t *testing.T) *CapturedStack {
	t.Helper()
	ctx := context.Background()
	s := &CapturedStack{Stack: DeployStack(t)}
	task := uuid.NewString()
	stem := "bh/" + task + "_c0ffee00"
	s.Keys = []string{stem + ".wacz", stem + ".result.json", stem + ".links.json"}
	for i, body := range [][]byte{[]byte("PK\x03\x04"), ManifestJSON(task, "success", s.Bucket, s.Keys[0]), []byte(`{"links":[]}`)} {
		if err := s.Objects.Put(ctx, s.Bucket, s.Keys[i], "application/octet-stream", body); err != nil {
			t.Fatal(err)
		}
	}
	out, errs, code := s.Run(t, "archives", "add", s.Keys[1], "--org", "acme", "--as", "alice", "--json")
	var res AddResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Registered != 1 {
		t.Fatalf("add: exit %d: %s %s", code, out, errs)
	}
	s.ID = res.Results[0].ArchiveID
	s.Drain(t)
	return s
}

// AddResult is the --json body of `archives add`.
type AddResult struct {
	Org, SubmittedBy, Prefix                                  string
	Manifests, Registered, Known, NoArchive, Refused, Missing int
	Errored                                                   int `json:"errors"`
	Results                                                   []struct {
		Key, Outcome, TaskID, ArchiveID, Reason string
	}
}

// Outcomes maps each manifest key to its outcome.
func (r AddResult) Outcomes() map[string]string {
	out := make(map[string]string, len(r.Results))
	for _, res := range r.Results {
		out[res.Key] = res.Outcome
	}
	return out
}

// ManifestJSON is a BrowserHive v12 report for taskID.
func ManifestJSON(taskID, status, bucket, waczKey string) []byte {
	artifacts := ""
	if waczKey != "" {
		artifacts = fmt.Sprintf(`,"artifacts":{"wacz":"s3://%s/%s"}`, bucket, waczKey)
	}
	return []byte(fmt.Sprintf(`{"taskId":%q,"correlationId":"c0ffee00","url":"https://example.com/%s","labels":["daily"],
		"status":%q,"timestamp":"2026-11-30T10:00:00Z","captureProcessingTimeMs":1200,
		"completeness":{"complete":false,"bodylessUrls":[],"truncatedUrls":[]}%s}`, taskID, taskID[:8], status, artifacts))
}

// Ptr is &s.
func Ptr(s string) *string { return &s }

// OutboxPayloads is what fga_outbox holds, in order.
func OutboxPayloads(t *testing.T, conn *pgx.Conn) []ledger.OutboxPayload {
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

// ContainsPayload says whether all holds want.
func ContainsPayload(all []ledger.OutboxPayload, want ledger.OutboxPayload) bool {
	w, _ := json.Marshal(want)
	for _, p := range all {
		if b, _ := json.Marshal(p); string(b) == string(w) {
			return true
		}
	}
	return false
}

// FreePort is a port on 127.0.0.1 free a moment ago.
func FreePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// ClosedURL returns an http URL on 127.0.0.1 where nothing listens.
func ClosedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	return url
}
