// Package devstack starts and stops the single-machine services ledgerctl's
// tests and `make run` need: a private PostgreSQL cluster and a versitygw S3
// gateway, both on 127.0.0.1, both under one state folder.
package devstack

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Stack says where the running services are.
type Stack struct {
	Dir       string
	PGPort    int
	S3Port    int
	AccessKey string
	SecretKey string
	PGBin     string
	Versitygw string
}

// AdminURL is a superuser URL to the cluster's postgres database.
func (s Stack) AdminURL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.PGPort)
}

// DatabaseURL is the URL of database name on the cluster.
func (s Stack) DatabaseURL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.PGPort, name)
}

// S3Endpoint is versitygw's URL.
func (s Stack) S3Endpoint() string { return fmt.Sprintf("http://127.0.0.1:%d", s.S3Port) }

// TestEnv is what the test harness (pkg/testenv) reads.
func (s Stack) TestEnv() map[string]string {
	return map[string]string{
		"LEDGER_TEST_PG_URL":        s.AdminURL(),
		"LEDGER_TEST_S3_ENDPOINT":   s.S3Endpoint(),
		"LEDGER_TEST_S3_ACCESS_KEY": s.AccessKey,
		"LEDGER_TEST_S3_SECRET_KEY": s.SecretKey,
	}
}

// Options choose the binaries; empty values are searched for.
type Options struct {
	Dir       string // state folder, e.g. .state
	PGBin     string // folder holding initdb and pg_ctl
	Versitygw string // versitygw binary
	Log       func(format string, a ...any)
}

// Up starts whatever is not already running and returns the stack. It is
// idempotent: a second call finds the running services through the state
// folder.
func Up(ctx context.Context, o Options) (Stack, error) {
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return Stack{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Stack{}, err
	}
	st := readState(dir)
	st.Dir = dir
	if st.AccessKey == "" {
		st.AccessKey, st.SecretKey = "ledgerctl-dev", "ledgerctl-dev-secret"
	}
	if st.PGBin, err = findPGBin(o.PGBin); err != nil {
		return st, err
	}
	if st.Versitygw, err = findVersitygw(o.Versitygw); err != nil {
		return st, err
	}
	if err := startPostgres(ctx, &st, o.Log); err != nil {
		return st, err
	}
	if err := startVersitygw(ctx, &st, o.Log); err != nil {
		return st, err
	}
	return st, writeState(st)
}

// Down stops both services; what is not running is skipped.
func Down(o Options) error {
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	st := readState(dir)
	var errs []error
	if pid := readPID(filepath.Join(dir, "versitygw.pid")); pid > 0 && alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		waitGone(pid, 5*time.Second)
	}
	data := filepath.Join(pgRoot(dir), "data")
	if _, err := os.Stat(filepath.Join(data, "postmaster.pid")); err == nil {
		bin, err := findPGBin(o.PGBin)
		if err != nil {
			bin = st.PGBin
		}
		cmd := exec.Command(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop")
		asPostgres(cmd)
		if out, err := cmd.CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("pg_ctl stop: %v: %s", err, strings.TrimSpace(string(out))))
		}
	}
	return errors.Join(errs...)
}

func findPGBin(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if p, err := exec.LookPath("pg_config"); err == nil {
		if out, err := exec.Command(p, "--bindir").Output(); err == nil {
			bin := strings.TrimSpace(string(out))
			if _, err := os.Stat(filepath.Join(bin, "initdb")); err == nil {
				return bin, nil
			}
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Strings(matches)
	for i := len(matches) - 1; i >= 0; i-- {
		if strings.Contains(matches[i], "/15/") {
			return filepath.Dir(matches[i]), nil
		}
	}
	if len(matches) > 0 {
		return filepath.Dir(matches[len(matches)-1]), nil
	}
	return "", errors.New("PostgreSQL server binaries (initdb, pg_ctl) not found: install them with `apt-get install -y postgresql`, or pass --pg-bin")
}

func findVersitygw(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "ledgerctl", "bin", "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("versitygw not found: `make tools` installs it (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0), or pass --versitygw")
}

// asPostgres runs cmd as the postgres user when we are root, because initdb
// and the server refuse to run as root.
func asPostgres(cmd *exec.Cmd) {
	if os.Geteuid() != 0 {
		return
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	cmd.Env = append(os.Environ(), "HOME="+u.HomeDir)
}

func chownPostgres(paths ...string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return errors.New("running as root but there is no postgres user to run the server as: `apt-get install -y postgresql` creates it")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, p := range paths {
		if err := os.Chown(p, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// pgRoot is where the cluster lives: <dir>/pg, unless the postgres user
// cannot reach that folder (a checkout inside a private home, say); then a
// folder under the system temp dir keyed by the state folder's path.
func pgRoot(dir string) string {
	root := filepath.Join(dir, "pg")
	if os.Geteuid() != 0 || canPostgresReach(dir) {
		return root
	}
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(os.TempDir(), "ledgerctl-pg-"+hex.EncodeToString(sum[:6]))
}

func canPostgresReach(dir string) bool {
	cmd := exec.Command("/bin/sh", "-c", `test -x "$1"`, "sh", dir)
	asPostgres(cmd)
	return cmd.Run() == nil
}

func startPostgres(ctx context.Context, st *Stack, log func(string, ...any)) error {
	root := pgRoot(st.Dir)
	data, sock := filepath.Join(root, "data"), filepath.Join(root, "sock")
	if st.PGPort != 0 && portOpen(st.PGPort) {
		if _, err := os.Stat(filepath.Join(data, "postmaster.pid")); err == nil {
			log("postgres: already running on 127.0.0.1:%d", st.PGPort)
			return nil
		}
	}
	for _, d := range []string{root, sock} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	if err := chownPostgres(root, sock); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err != nil {
		cmd := exec.CommandContext(ctx, filepath.Join(st.PGBin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
		asPostgres(cmd)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("initdb: %v: %s", err, lastLines(string(out), 5))
		}
	}
	_ = os.Remove(filepath.Join(data, "postmaster.pid")) // a stale pid file from a killed run
	port, err := freePort()
	if err != nil {
		return err
	}
	st.PGPort = port
	opts := fmt.Sprintf("-h 127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=256MB", port, sock)
	cmd := exec.CommandContext(ctx, filepath.Join(st.PGBin, "pg_ctl"), "-D", data, "-o", opts, "-l", filepath.Join(root, "server.log"), "-w", "-t", "60", "start")
	asPostgres(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		logTail, _ := os.ReadFile(filepath.Join(root, "server.log"))
		return fmt.Errorf("pg_ctl start: %v: %s\n%s", err, strings.TrimSpace(string(out)), lastLines(string(logTail), 10))
	}
	log("postgres: up on 127.0.0.1:%d (data %s)", port, data)
	return nil
}

func startVersitygw(ctx context.Context, st *Stack, log func(string, ...any)) error {
	pidFile := filepath.Join(st.Dir, "versitygw.pid")
	if pid := readPID(pidFile); pid > 0 && alive(pid) && st.S3Port != 0 && portOpen(st.S3Port) {
		log("versitygw: already running on 127.0.0.1:%d", st.S3Port)
		return nil
	}
	root := filepath.Join(st.Dir, "s3")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(st.Dir, "versitygw.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(st.Versitygw, "--port", fmt.Sprintf("127.0.0.1:%d", port), "posix", root)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+st.AccessKey, "ROOT_SECRET_KEY="+st.SecretKey)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives this command
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("versitygw: %w", err)
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Release()
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for !portOpen(port) {
		if time.Now().After(deadline) || !alive(pid) {
			out, _ := os.ReadFile(filepath.Join(st.Dir, "versitygw.log"))
			return fmt.Errorf("versitygw did not start on 127.0.0.1:%d: %s", port, lastLines(string(out), 10))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	st.S3Port = port
	log("versitygw: up on 127.0.0.1:%d (root %s)", port, root)
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func portOpen(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 300*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func waitGone(pid int, d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end) && alive(pid); {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// The state file is KEY=VALUE lines, also sourceable by a shell.
const stateFile = "stack.env"

func writeState(st Stack) error {
	lines := []string{
		fmt.Sprintf("STACK_PG_PORT=%d", st.PGPort),
		fmt.Sprintf("STACK_S3_PORT=%d", st.S3Port),
		"STACK_S3_ACCESS_KEY=" + st.AccessKey,
		"STACK_S3_SECRET_KEY=" + st.SecretKey,
		"STACK_PG_BIN=" + st.PGBin,
	}
	env := st.TestEnv()
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		lines = append(lines, k+"="+env[k])
	}
	return os.WriteFile(filepath.Join(st.Dir, stateFile), []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

func readState(dir string) Stack {
	st := Stack{Dir: dir}
	f, err := os.Open(filepath.Join(dir, stateFile))
	if err != nil {
		return st
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch k {
		case "STACK_PG_PORT":
			st.PGPort, _ = strconv.Atoi(v)
		case "STACK_S3_PORT":
			st.S3Port, _ = strconv.Atoi(v)
		case "STACK_S3_ACCESS_KEY":
			st.AccessKey = v
		case "STACK_S3_SECRET_KEY":
			st.SecretKey = v
		case "STACK_PG_BIN":
			st.PGBin = v
		}
	}
	return st
}
