package dev_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/devstack"
)

// stackBinaries finds the PostgreSQL server binaries and versitygw these
// tests start themselves: a missing one fails the test under CI=true and
// skips it otherwise (as pkg/testenv does for the services).
func stackBinaries(t *testing.T) (pgBin, versitygw string) {
	t.Helper()
	var err error
	if pgBin, err = devstack.FindPGBin(""); err == nil {
		versitygw, err = devstack.FindVersitygw("")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return pgBin, versitygw
}

// stackDir is a fresh state folder whose stack is stopped, and whose cluster
// removed, when the test ends.
func stackDir(t *testing.T) string {
	t.Helper()
	state := filepath.Join(t.TempDir(), "state")
	t.Cleanup(func() {
		if err := devstack.Down(devstack.Options{Dir: state}); err != nil {
			t.Errorf("stack down: %v", err)
		}
		// The cluster lives outside state when the postgres user cannot reach it.
		_ = os.RemoveAll(filepath.Dir(devstack.DataDir(state)))
	})
	return state
}

func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	return env
}

// checkSettings connects to the database and bucket the .env.local in dir
// names, failing the test when either does not answer.
func checkSettings(t *testing.T, dir string) map[string]string {
	t.Helper()
	env := readEnvFile(t, filepath.Join(dir, ".env.local"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, env["DATABASE_URL"])
	if err != nil {
		t.Fatalf("DATABASE_URL from .env.local: %v", err)
	}
	defer conn.Close(ctx)
	var db string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil || db != "capture_ledger" {
		t.Fatalf("current_database() = %q, %v", db, err)
	}
	c := blob.New(blob.Config{
		Endpoint: env["CAPTURE_LEDGER_S3_ENDPOINT"], Region: "us-east-1", ForcePathStyle: true,
		AccessKeyID: env["CAPTURE_LEDGER_S3_ACCESS_KEY_ID"], SecretAccessKey: env["CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY"],
	})
	bucket := env["CAPTURE_LEDGER_S3_BUCKET"]
	if err := c.Put(ctx, bucket, "probe", "text/plain", []byte("ok")); err != nil {
		t.Fatalf("S3 settings from .env.local: %v", err)
	}
	return env
}

var pgUpLine = regexp.MustCompile(`postgres: up on 127\.0\.0\.1:(\d+)`)

// TestDevStackKeepsPortsAcrossRestarts: up → down → up keeps the ports, so
// the .env.local the first up wrote still reaches the stack; up on a running
// stack is harmless; a recorded port taken by something else moves, and
// --env-local rewrites .env.local for the new port.
func TestDevStackKeepsPortsAcrossRestarts(t *testing.T) {
	t.Parallel()
	pgBin, vgw := stackBinaries(t)
	dir, state := t.TempDir(), stackDir(t)
	up := func(extra ...string) (string, string) {
		t.Helper()
		args := append([]string{"dev", "stack", "up", "--dir", state, "--pg-bin", pgBin, "--versitygw", vgw}, extra...)
		out, errs, code := clitest.Run(t, dir, nil, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", extra, code, errs)
		}
		return out, errs
	}
	down := func() {
		t.Helper()
		if _, errs, code := clitest.Run(t, dir, nil, "dev", "stack", "down", "--dir", state); code != 0 {
			t.Fatalf("down: exit %d\n%s", code, errs)
		}
	}

	first, _ := up("--env-local")
	env := checkSettings(t, dir)
	down()
	u, err := url.Parse(env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	pgPort, _ := strconv.Atoi(u.Port())
	if pgPort == 0 || !devstack.PortFree(pgPort) {
		t.Fatalf("after down, PostgreSQL port %d (from %s) is not free", pgPort, env["DATABASE_URL"])
	}

	second, errs := up()
	if second != first {
		t.Errorf("the restarted stack moved:\nfirst\n%s\nsecond\n%s", first, second)
	}
	if strings.Contains(errs, "changed") {
		t.Errorf("restart reported moved ports:\n%s", errs)
	}
	checkSettings(t, dir) // .env.local written by the first up, untouched since

	third, errs := up()
	if third != first || !strings.Contains(errs, "already up") || strings.Contains(errs, "postgres: up") {
		t.Errorf("up on a running stack: stdout\n%s\nstderr\n%s", third, errs)
	}

	// Something else takes PostgreSQL's recorded port while the stack is down.
	down()
	hold, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", pgPort))
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	_, errs = up("--env-local")
	if !strings.Contains(errs, "is taken by something else") || !strings.Contains(errs, "rewrote") {
		t.Errorf("a moved port was not reported:\n%s", errs)
	}
	moved := checkSettings(t, dir)
	if moved["DATABASE_URL"] == env["DATABASE_URL"] || moved["CAPTURE_LEDGER_S3_ENDPOINT"] != env["CAPTURE_LEDGER_S3_ENDPOINT"] {
		t.Errorf("DATABASE_URL %s → %s, S3 %s → %s: only PostgreSQL should have moved",
			env["DATABASE_URL"], moved["DATABASE_URL"], env["CAPTURE_LEDGER_S3_ENDPOINT"], moved["CAPTURE_LEDGER_S3_ENDPOINT"])
	}
}

// TestDevStackEnvLocalWritesAPIPort: `make run CAPTURE_LEDGER_API_PORT=N`
// serves on N, so `dev stack up --env-local` writes N to .env.local, where
// the commands run later from another shell (archives open, whose links name
// the port) read it; a port given again replaces the one written, none given
// keeps it, and a port serve would refuse stops up before anything starts.
// --shell (make test's form) writes nothing.
func TestDevStackEnvLocalWritesAPIPort(t *testing.T) {
	t.Parallel()
	pgBin, vgw := stackBinaries(t)
	dir, state := t.TempDir(), stackDir(t)
	envLocal := filepath.Join(dir, ".env.local")
	up := func(port string, extra ...string) (string, int) {
		t.Helper()
		var env map[string]string
		if port != "" {
			env = map[string]string{"CAPTURE_LEDGER_API_PORT": port}
		}
		args := append([]string{"dev", "stack", "up", "--dir", state, "--pg-bin", pgBin, "--versitygw", vgw}, extra...)
		_, errs, code := clitest.Run(t, dir, env, args...)
		return errs, code
	}
	// The port every later command resolves, with nothing set in its shell.
	resolved := func() int {
		t.Helper()
		c, err := config.LoadEnv(dir, nil, func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Settings()
		if err != nil {
			t.Fatal(err)
		}
		return s.APIPort
	}

	errs, code := up("70x", "--env-local")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "CAPTURE_LEDGER_API_PORT") || strings.Contains(errs, "postgres: up") {
		t.Fatalf("an unusable port: exit %d, want %d before anything starts, naming the setting\n%s", code, cmdutil.ExitUsage, errs)
	}
	if _, err := os.Stat(envLocal); err == nil {
		t.Fatal(".env.local was written for an unusable port")
	}

	// Nothing listens on these: up only writes them down.
	free, other := 7171, 7272
	if errs, code := up(strconv.Itoa(free), "--shell"); code != 0 {
		t.Fatalf("--shell: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(envLocal); err == nil {
		t.Fatal("up --shell wrote .env.local")
	}

	// A port written by an earlier run; the one given now wins.
	if err := os.WriteFile(envLocal, []byte("# mine\nCAPTURE_LEDGER_API_PORT=7070\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	errs, code = up(strconv.Itoa(free), "--env-local")
	if code != 0 {
		t.Fatalf("up --env-local: exit %d\n%s", code, errs)
	}
	if got := resolved(); got != free {
		t.Errorf("after up --env-local with CAPTURE_LEDGER_API_PORT=%d, later commands read port %d\n%s", free, got, errs)
	}
	if want := fmt.Sprintf("CAPTURE_LEDGER_API_PORT=%d", free); !strings.Contains(errs, want) {
		t.Errorf("up does not say it wrote %s:\n%s", want, errs)
	}
	if data, _ := os.ReadFile(envLocal); !strings.HasPrefix(string(data), "# mine\n") {
		t.Errorf(".env.local lost its other lines:\n%s", data)
	}
	checkSettings(t, dir)

	// None given: the written one stays.
	if errs, code := up("", "--env-local"); code != 0 || resolved() != free {
		t.Errorf("up --env-local without a port: exit %d, port %d, want %d kept\n%s", code, resolved(), free, errs)
	}

	// Another given: it replaces the written one.
	if errs, code := up(strconv.Itoa(other), "--env-local"); code != 0 || resolved() != other {
		t.Errorf("up --env-local with CAPTURE_LEDGER_API_PORT=%d: exit %d, port %d\n%s", other, code, resolved(), errs)
	}
}

// TestDevStackFailedUpLeavesNothingRunning: whatever fails, up leaves no
// PostgreSQL (nor versitygw) running from its state folder.
func TestDevStackFailedUpLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	pgBin, vgw := stackBinaries(t)
	dir, state := t.TempDir(), stackDir(t)
	pidFile := filepath.Join(devstack.DataDir(state), "postmaster.pid")
	fail := func(name string, wantCode int, extra ...string) string {
		t.Helper()
		args := append([]string{"dev", "stack", "up", "--dir", state, "--pg-bin", pgBin}, extra...)
		_, errs, code := clitest.Run(t, dir, nil, args...)
		if code == 0 || (wantCode != 0 && code != wantCode) {
			t.Fatalf("%s: exit %d, want failure (%d)\n%s", name, code, wantCode, errs)
		}
		if _, err := os.Stat(pidFile); err == nil {
			t.Errorf("%s: %s is left behind\n%s", name, pidFile, errs)
		}
		if m := pgUpLine.FindStringSubmatch(errs); m != nil {
			if port, _ := strconv.Atoi(m[1]); !devstack.PortFree(port) {
				t.Errorf("%s: PostgreSQL still listens on 127.0.0.1:%d\n%s", name, port, errs)
			}
		}
		if _, err := os.Stat(filepath.Join(state, "versitygw.pid")); err == nil {
			t.Errorf("%s: versitygw.pid is left behind", name)
		}
		return errs
	}

	// A versitygw that does not exist: refused before anything starts.
	errs := fail("missing versitygw", cmdutil.ExitUsage, "--versitygw", filepath.Join(dir, "nope"))
	if strings.Contains(errs, "postgres: up") {
		t.Errorf("PostgreSQL was started before the binaries were checked:\n%s", errs)
	}

	// A versitygw that exits at once: PostgreSQL started, then stopped again.
	fake := filepath.Join(dir, "versitygw")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'cannot listen' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	errs = fail("versitygw exits", cmdutil.ExitUnreachable, "--versitygw", fake)
	if !pgUpLine.MatchString(errs) || !strings.Contains(errs, "cannot listen") {
		t.Errorf("expected PostgreSQL to start and versitygw's own words in the error:\n%s", errs)
	}

	// Both services start, then creating the bucket fails: both stop again.
	errs = fail("bucket refused", 0, "--versitygw", vgw, "--env-local", "--bucket", "Not_A_Bucket!")
	if !strings.Contains(errs, "versitygw: up on") {
		t.Errorf("expected versitygw to start:\n%s", errs)
	}
	if _, err := os.Stat(filepath.Join(dir, ".env.local")); err == nil {
		t.Error(".env.local was written by a failed up")
	}
}

// TestMakefileTestStackIsNotRunStack: `make test` starts and stops a state
// folder of its own, never the one `make run` and `make stack-up/-down` use,
// and that folder is git-ignored.
func TestMakefileTestStackIsNotRunStack(t *testing.T) {
	t.Parallel()
	makeBin, err := exec.LookPath("make")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "STATE", "TEST_STATE", "MAKEFLAGS", "MFLAGS", "MAKELEVEL":
		default:
			env = append(env, kv)
		}
	}
	dirFlag := regexp.MustCompile(`dev stack (?:up|down) --dir (\S+)`)
	dirs := func(target string) map[string]bool {
		t.Helper()
		cmd := exec.Command(makeBin, "-n", "--no-print-directory", "-C", root, target)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %s: %v\n%s", target, err, out)
		}
		found := map[string]bool{}
		for _, m := range dirFlag.FindAllStringSubmatch(string(out), -1) {
			found[filepath.Clean(m[1])] = true
		}
		if len(found) == 0 {
			t.Fatalf("make -n %s names no `dev stack --dir`:\n%s", target, out)
		}
		return found
	}
	testDirs := dirs("test")
	if len(testDirs) != 1 {
		t.Fatalf("make test uses several state folders: %v", testDirs)
	}
	for _, target := range []string{"run", "stack-up", "stack-down"} {
		for d := range dirs(target) {
			if testDirs[d] {
				t.Errorf("make test and make %s share the state folder %s", target, d)
			}
		}
	}
	gitignore, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	for d := range testDirs {
		first := strings.SplitN(filepath.ToSlash(d), "/", 2)[0]
		if !regexp.MustCompile(`(?m)^/?` + regexp.QuoteMeta(first) + `/?$`).Match(gitignore) {
			t.Errorf("make test's state folder %s is not git-ignored", d)
		}
	}
}
