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
	// AlreadyUp says both services were running before Up was called: Up
	// started nothing.
	AlreadyUp bool
	// Moved says, one sentence per service, which recorded port was taken by
	// something else and which port the service got instead. Settings written
	// with the old ports (.env.local) are stale when it is not empty.
	Moved []string
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
	// Ready, when set, runs once both services answer (e.g. to create a
	// database and a bucket and write .env.local). When it fails, Up stops
	// the services it started and returns Ready's error.
	Ready func(ctx context.Context, st Stack) error
}

// SetupError says Up could not begin (a binary is missing or not
// executable); nothing was started or changed.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

// Up starts whatever is not already running and returns the stack. It is
// idempotent: a second call finds the running services through the state
// folder and starts nothing.
//
// A stack keeps its ports: the first Up picks free ones and records them in
// <dir>/stack.env; every later Up starts the services on the recorded ports,
// and picks a new one only for a service whose recorded port is taken by
// something else (Stack.Moved says which).
//
// Up leaves nothing half-started: when anything fails after it started a
// service (the other service, Options.Ready, recording the state), it stops
// the services it started before returning the error. Services that were
// already running are left alone.
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
	unlock, err := lock(dir)
	if err != nil {
		return Stack{}, err
	}
	defer unlock()
	st := readState(dir)
	st.Dir = dir
	if st.AccessKey == "" {
		st.AccessKey, st.SecretKey = "ledgerctl-dev", "ledgerctl-dev-secret"
	}
	if st.PGBin, err = FindPGBin(o.PGBin); err != nil {
		return st, &SetupError{err}
	}
	if st.Versitygw, err = FindVersitygw(o.Versitygw); err != nil {
		return st, &SetupError{err}
	}
	pgStarted, err := startPostgres(ctx, &st, o.Log)
	if err != nil {
		return st, err
	}
	s3Started := false
	rollback := func(cause error) error {
		errs := []error{cause}
		if s3Started {
			errs = append(errs, stopVersitygw(dir))
		}
		if pgStarted {
			errs = append(errs, stopPostgres(dir, st.PGBin))
		}
		if s3Started || pgStarted {
			o.Log("stack: stopped what this start had started")
		}
		return errors.Join(errs...)
	}
	if s3Started, err = startVersitygw(ctx, &st, o.Log); err != nil {
		return st, rollback(err)
	}
	st.AlreadyUp = !pgStarted && !s3Started
	if o.Ready != nil {
		if err := o.Ready(ctx, st); err != nil {
			return st, rollback(err)
		}
	}
	if err := writeState(st); err != nil {
		return st, rollback(err)
	}
	return st, nil
}

// Down stops both services; what is not running is skipped.
func Down(o Options) error {
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	unlock, err := lock(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // no state folder: nothing ever ran here
		}
		return err
	}
	defer unlock()
	bin, err := FindPGBin(o.PGBin)
	if err != nil {
		bin = readState(dir).PGBin
	}
	return errors.Join(stopVersitygw(dir), stopPostgres(dir, bin))
}

// DataDir is the PostgreSQL data folder of the stack under dir (see pgRoot:
// it is outside dir when the postgres user cannot reach dir).
func DataDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Join(pgRoot(dir), "data")
}

// lock takes <dir>/stack.lock so that two starts (or a start and a stop) of
// the same stack do not interleave.
func lock(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, "stack.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// FindPGBin returns explicit, or the folder of the newest installed
// PostgreSQL server binaries (15 preferred).
func FindPGBin(explicit string) (string, error) {
	if explicit != "" {
		if err := executable(filepath.Join(explicit, "pg_ctl")); err != nil {
			return "", fmt.Errorf("--pg-bin %s: %w", explicit, err)
		}
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

// FindVersitygw returns explicit, or versitygw from PATH or
// ~/.cache/ledgerctl/bin.
func FindVersitygw(explicit string) (string, error) {
	if explicit != "" {
		if err := executable(explicit); err != nil {
			return "", fmt.Errorf("--versitygw: %w", err)
		}
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

// executable says why path is not an executable file, or nil.
func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
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

// startPostgres starts the cluster unless it is already running, on the
// recorded port when that port is free. started says this call started it.
func startPostgres(ctx context.Context, st *Stack, log func(string, ...any)) (started bool, err error) {
	root := pgRoot(st.Dir)
	data, sock := filepath.Join(root, "data"), filepath.Join(root, "sock")
	switch pid, port := postmaster(data); {
	case pid > 0 && portOpen(port):
		if st.PGPort != 0 && st.PGPort != port {
			log("postgres: running on 127.0.0.1:%d, not on the recorded %d", port, st.PGPort)
		}
		st.PGPort = port
		log("postgres: already running on 127.0.0.1:%d", port)
		return false, nil
	case pid > 0:
		return false, fmt.Errorf("postgres (pid %d, data %s) is running but does not answer on 127.0.0.1:%d: stop it with `ledgerctl dev stack down --dir %s`", pid, data, port, st.Dir)
	}
	for _, d := range []string{root, sock} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return false, err
		}
	}
	if err := chownPostgres(root, sock); err != nil {
		return false, err
	}
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err != nil {
		cmd := exec.CommandContext(ctx, filepath.Join(st.PGBin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
		asPostgres(cmd)
		if out, err := cmd.CombinedOutput(); err != nil {
			return false, fmt.Errorf("initdb: %v: %s", err, lastLines(string(out), 5))
		}
	}
	_ = os.Remove(filepath.Join(data, "postmaster.pid")) // stale: postmaster() found no server behind it
	port, err := choosePort(st, "postgres", st.PGPort, log, st.S3Port)
	if err != nil {
		return false, err
	}
	opts := fmt.Sprintf("-h 127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=256MB", port, sock)
	cmd := exec.CommandContext(ctx, filepath.Join(st.PGBin, "pg_ctl"), "-D", data, "-o", opts, "-l", filepath.Join(root, "server.log"), "-w", "-t", "60", "start")
	asPostgres(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		logTail, _ := os.ReadFile(filepath.Join(root, "server.log"))
		err = fmt.Errorf("pg_ctl start: %v: %s\n%s", err, strings.TrimSpace(string(out)), lastLines(string(logTail), 10))
		// pg_ctl gave up (timeout, interrupt) but the server may be coming up.
		return false, errors.Join(err, stopPostgres(st.Dir, st.PGBin))
	}
	st.PGPort = port
	log("postgres: up on 127.0.0.1:%d (data %s)", port, data)
	return true, nil
}

// postmaster reads data/postmaster.pid: the server's pid and port when that
// pid is a live postgres process, else 0, 0.
func postmaster(data string) (pid, port int) {
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return 0, 0
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 4 {
		return 0, 0
	}
	pid, _ = strconv.Atoi(strings.TrimSpace(lines[0]))
	port, _ = strconv.Atoi(strings.TrimSpace(lines[3]))
	if pid <= 0 || !alive(pid) || !isProcess(pid, "postgres") {
		return 0, 0
	}
	return pid, port
}

// stopPostgres stops the cluster under dir if it runs, and removes a stale
// postmaster.pid.
func stopPostgres(dir, bin string) error {
	data := filepath.Join(pgRoot(dir), "data")
	pidFile := filepath.Join(data, "postmaster.pid")
	if _, err := os.Stat(pidFile); err != nil {
		return nil
	}
	if pid, _ := postmaster(data); pid == 0 {
		_ = os.Remove(pidFile)
		return nil
	}
	cmd := exec.Command(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "fast", "-w", "-t", "60", "stop")
	asPostgres(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// startVersitygw starts versitygw unless it is already running, on the
// recorded port when that port is free. started says this call started it.
func startVersitygw(ctx context.Context, st *Stack, log func(string, ...any)) (started bool, err error) {
	pidFile := filepath.Join(st.Dir, "versitygw.pid")
	if pid := versitygwPID(st.Dir); pid > 0 {
		if st.S3Port != 0 && portOpen(st.S3Port) {
			log("versitygw: already running on 127.0.0.1:%d", st.S3Port)
			return false, nil
		}
		// Ours (its pid file) but not where the state says: start afresh.
		if err := stopVersitygw(st.Dir); err != nil {
			return false, err
		}
	}
	root := filepath.Join(st.Dir, "s3")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return false, err
	}
	port, err := choosePort(st, "versitygw", st.S3Port, log, st.PGPort)
	if err != nil {
		return false, err
	}
	logPath := filepath.Join(st.Dir, "versitygw.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return false, err
	}
	defer logf.Close()
	// versitygw closes every connection after its answer unless told to
	// keep it (a new TCP connection for every object the capturer puts;
	// keeping them cut the gateway's CPU in a crawl by a fifth, see
	// docs/benchmarks.md), and logs every request to stdout, which this log
	// would keep without bound (requests refused are answered to their
	// clients; the gateway's own messages are still logged).
	cmd := exec.Command(st.Versitygw, "--port", fmt.Sprintf("127.0.0.1:%d", port), "--keep-alive", "--quiet", "posix", root)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+st.AccessKey, "ROOT_SECRET_KEY="+st.SecretKey)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives this command
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("versitygw: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }() // reaps it when it ends while we still run
	fail := func(err error) (bool, error) {
		select {
		case <-exited:
		default:
			_ = syscall.Kill(pid, syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		_ = os.Remove(pidFile)
		return false, err
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fail(err)
	}
	deadline := time.After(30 * time.Second)
	for !portOpen(port) {
		select {
		case <-exited:
			out, _ := os.ReadFile(logPath)
			return fail(fmt.Errorf("versitygw exited before listening on 127.0.0.1:%d (%s): %s", port, cmd.ProcessState, lastLines(string(out), 10)))
		case <-deadline:
			out, _ := os.ReadFile(logPath)
			return fail(fmt.Errorf("versitygw did not start on 127.0.0.1:%d within 30s: %s", port, lastLines(string(out), 10)))
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	st.S3Port = port
	log("versitygw: up on 127.0.0.1:%d (root %s)", port, root)
	return true, nil
}

// versitygwPID is the pid in <dir>/versitygw.pid when that process is a live
// versitygw, else 0.
func versitygwPID(dir string) int {
	pid := readPID(filepath.Join(dir, "versitygw.pid"))
	if pid <= 0 || !alive(pid) || !isProcess(pid, "versitygw") {
		return 0
	}
	return pid
}

// stopVersitygw stops the versitygw under dir if it runs.
func stopVersitygw(dir string) error {
	if pid := versitygwPID(dir); pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		waitGone(pid, 5*time.Second)
	}
	if err := os.Remove(filepath.Join(dir, "versitygw.pid")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// choosePort returns the recorded port when nothing holds it, else a free
// one other than the other service's port, noting the move in st.Moved.
func choosePort(st *Stack, service string, recorded int, log func(string, ...any), other int) (int, error) {
	if recorded > 0 && PortFree(recorded) {
		return recorded, nil
	}
	port, err := freePort()
	for err == nil && port == other {
		port, err = freePort()
	}
	if err != nil {
		return 0, err
	}
	if recorded > 0 {
		msg := fmt.Sprintf("%s: recorded port 127.0.0.1:%d is taken by something else; using 127.0.0.1:%d", service, recorded, port)
		st.Moved = append(st.Moved, msg)
		log("%s", msg)
	}
	return port, nil
}

// PortFree reports whether nothing listens on 127.0.0.1:port.
func PortFree(port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	l.Close()
	return true
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

// alive says pid exists (EPERM: it exists but belongs to another user, as the
// postgres server does when we are not root).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// isProcess says whether pid's command line mentions name, so that a pid file
// left from before a reboot never makes us adopt or signal an unrelated
// process. Without /proc it trusts the pid.
func isProcess(pid int, name string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		_, statErr := os.Stat("/proc/self")
		return statErr != nil
	}
	return strings.Contains(string(b), name)
}

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
