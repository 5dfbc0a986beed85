package serve_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
)

// TestTakenPortFailsFirst: with the API port held by another program,
// serve and dev demo stop at once (exit 2) with a sentence naming
// CAPTURE_LEDGER_API_PORT and a port that is free, before they open any
// dependency: here every dependency is on a closed port, which would be
// exit 4 had they been tried. serve --check-port needs no other setting
// (make run calls it before it starts the stack).
func TestTakenPortFailsFirst(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	closed := fmt.Sprintf("127.0.0.1:%d", clitest.FreePort(t))
	env := map[string]string{
		"DATABASE_URL":                         "postgres://u:p@" + closed + "/db?sslmode=disable&connect_timeout=5",
		"CAPTURE_LEDGER_S3_ENDPOINT":           "http://" + closed,
		"CAPTURE_LEDGER_S3_BUCKET":             "b",
		"CAPTURE_LEDGER_S3_ACCESS_KEY_ID":      "k",
		"CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY":  "s",
		"CAPTURE_LEDGER_FGA_STORE_ID":          "01HVMMBCMGZNT3SED4Z17ECXCA",
		"CAPTURE_LEDGER_FGA_MODEL_ID":          "01HVMMBD123456789ABCDEFGHJ",
		"CAPTURE_LEDGER_FGA_DATASTORE_URI":     "postgres://u:p@" + closed + "/fga?sslmode=disable&connect_timeout=5",
		"CAPTURE_LEDGER_DEV_IDENTITY":          "1",
		"CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE": "1",
		"CAPTURE_LEDGER_SEARCH_DIR":            t.TempDir(),
		"CAPTURE_LEDGER_API_PORT":              fmt.Sprint(port),
	}
	sentence := regexp.MustCompile(fmt.Sprintf(`ledgerctl: CAPTURE_LEDGER_API_PORT=%d is taken: another program listens on 127\.0\.0\.1:%d\. Use a free port, e\.g\. make run CAPTURE_LEDGER_API_PORT=(\d+) \(or CAPTURE_LEDGER_API_PORT=\d+ in \.env\.local\)`, port, port))
	for _, args := range [][]string{{"serve"}, {"dev", "demo"}, {"serve", "--check-port"}} {
		e := env
		if args[len(args)-1] == "--check-port" {
			e = map[string]string{"CAPTURE_LEDGER_API_PORT": fmt.Sprint(port)} // nothing else set
		}
		start := time.Now()
		out, errs, code := clitest.Run(t, t.TempDir(), e, args...)
		m := sentence.FindStringSubmatch(errs)
		if code != cmdutil.ExitUsage || m == nil {
			t.Fatalf("%v: exit %d, want 2 and the sentence: %s %s", args, code, out, errs)
		}
		if strings.Contains(errs, "unreachable") || strings.Contains(errs, "address already in use") {
			t.Errorf("%v: more than the sentence: %s", args, errs)
		}
		// The port proposed is free: it can be bound.
		var free int
		fmt.Sscan(m[1], &free)
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", free)); err != nil || free == port {
			t.Errorf("%v: proposed port %d is not free: %v", args, free, err)
		} else {
			l.Close()
		}
		t.Logf("%v: %s in %s", args, strings.TrimSpace(errs[strings.Index(errs, "ledgerctl:"):]), time.Since(start).Round(time.Millisecond))
	}

	// A free port passes the check, silently.
	out, errs, code := clitest.Run(t, t.TempDir(), map[string]string{"CAPTURE_LEDGER_API_PORT": fmt.Sprint(clitest.FreePort(t))}, "serve", "--check-port")
	if code != 0 || out != "" || errs != "" {
		t.Fatalf("free port: exit %d: %q %q", code, out, errs)
	}
}

// TestPrintURL: serve --print-url prints the console's URL from the
// settings, .env.local's port included (make run shows it), and nothing
// else; a port from the shell wins over .env.local's.
func TestPrintURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env.local"), []byte("CAPTURE_LEDGER_API_PORT=7171\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "http://127.0.0.1:7171/\n"},
		{map[string]string{"CAPTURE_LEDGER_API_PORT": "7172"}, "http://127.0.0.1:7172/\n"},
		{map[string]string{"CAPTURE_LEDGER_API_HOST": "::1"}, "http://[::1]:7171/\n"},
	} {
		out, errs, code := clitest.Run(t, dir, tc.env, "serve", "--print-url")
		if code != 0 || out != tc.want {
			t.Errorf("%v: exit %d, %q (%s); want %q", tc.env, code, out, errs, tc.want)
		}
	}
}

// TestMakeRunChecksThePortFirst: make run's recipe checks the API port
// before it starts the stack.
func TestMakeRunChecksThePortFirst(t *testing.T) {
	t.Parallel()
	mk, err := os.ReadFile(filepath.Join("..", "..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	recipe := string(mk)[strings.Index(string(mk), "\nrun:"):]
	check, up := strings.Index(recipe, "serve --check-port"), strings.Index(recipe, "dev stack up")
	if check < 0 || up < 0 || check > up {
		t.Fatalf("make run must run serve --check-port before dev stack up:\n%s", recipe[:min(len(recipe), 600)])
	}
}
