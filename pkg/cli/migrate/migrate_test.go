package migrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

func TestMigrateStatusUnreachable(t *testing.T) {
	t.Parallel()
	out, errs, code := clitest.Run(t, t.TempDir(), map[string]string{"DATABASE_URL": "postgres://u:secretpw@127.0.0.1:1/ledger?sslmode=disable"}, "migrate", "status")
	if code != cmdutil.ExitUnreachable {
		t.Errorf("exit %d, want %d", code, cmdutil.ExitUnreachable)
	}
	if out != "" {
		t.Errorf("stdout %q", out)
	}
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, "127.0.0.1:1") || !strings.HasPrefix(last, "ledgerctl: cannot reach PostgreSQL") {
		t.Errorf("want one line naming the host, got %q", errs)
	}
	if strings.Contains(errs, "secretpw") || strings.Contains(errs, "goroutine") {
		t.Errorf("leaks a password or a stack trace: %q", errs)
	}
}

func TestMigrateMissingDatabaseURL(t *testing.T) {
	t.Parallel()
	_, errs, code := clitest.Run(t, t.TempDir(), nil, "migrate", "up")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "DATABASE_URL") || !strings.Contains(errs, "cp -n .env.example .env") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestMigrateForceRejectsGarbage(t *testing.T) {
	t.Parallel()
	_, errs, code := clitest.Run(t, t.TempDir(), map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x"}, "migrate", "force", "abc")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, `"abc"`) {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestMigrateThroughCLI(t *testing.T) {
	t.Parallel()
	dsn := testenv.EmptyDatabase(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("DATABASE_URL="+dsn+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	status := func() map[string]any {
		out, errs, code := clitest.Run(t, dir, nil, "migrate", "status", "--json")
		if code != 0 {
			t.Fatalf("status: exit %d: %s", code, errs)
		}
		var st map[string]any
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := status(); st["current"].(float64) != 0 {
		t.Fatalf("fresh database at %v", st["current"])
	}
	for i := 0; i < 2; i++ {
		if _, errs, code := clitest.Run(t, dir, nil, "migrate", "up"); code != 0 {
			t.Fatalf("up #%d: exit %d: %s", i, code, errs)
		}
	}
	if st := status(); st["current"].(float64) < 1 || st["dirty"].(bool) {
		t.Fatalf("after up: %v", st)
	}
	out, errs, code := clitest.Run(t, dir, nil, "migrate", "down", "--verbose")
	if code != 0 || !strings.Contains(out, "reverted") {
		t.Fatalf("down: exit %d: %s %s", code, out, errs)
	}
	if !strings.Contains(errs, "config: .env (1 name)") {
		t.Errorf("no config note on stderr with --verbose: %q", errs)
	}
	if _, errs, _ := clitest.Run(t, dir, nil, "migrate", "status"); strings.Contains(errs, "config:") {
		t.Errorf("config note without --verbose: %q", errs)
	}
}

// TestMigrateDownAsksOnATerminal: on a terminal, down reverts only after a
// yes; --yes skips the question; off a terminal nothing is asked.
func TestMigrateDownAsksOnATerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"DATABASE_URL": testenv.Database(t)}
	answer := func(yes bool, asked *string) func(*cmdutil.Factory) {
		return func(f *cmdutil.Factory) {
			f.Confirm = func(q string) (bool, bool) { *asked = q; return true, yes }
		}
	}
	var q string
	_, errs, code := clitest.RunCtx(context.Background(), t, dir, env, answer(false, &q), "migrate", "down")
	if code != cmdutil.ExitFailure || !strings.Contains(errs, "not confirmed; nothing was reverted") || !strings.Contains(q, "Revert migration") {
		t.Fatalf("declined: exit %d, asked %q: %s", code, q, errs)
	}
	out, _, _ := clitest.Run(t, dir, env, "migrate", "status", "--json")
	avail := postgres.Available()
	if !strings.Contains(out, fmt.Sprintf(`"current":%d`, avail[len(avail)-1])) {
		t.Fatalf("a declined down changed the schema: %s", out)
	}
	q = ""
	if out, errs, code := clitest.RunCtx(context.Background(), t, dir, env, answer(false, &q), "migrate", "down", "--yes"); code != 0 || q != "" || !strings.Contains(out, "reverted") {
		t.Errorf("--yes: exit %d, asked %q: %s %s", code, q, out, errs)
	}
	if out, errs, code := clitest.RunCtx(context.Background(), t, dir, env, answer(true, &q), "migrate", "down"); code != 0 || !strings.Contains(out, "reverted") {
		t.Errorf("confirmed: exit %d: %s %s", code, out, errs)
	}
}
