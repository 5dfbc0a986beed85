package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/cli/version"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

func TestHelpShowsTreeWithoutConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A broken .env must not matter to help: help never reads configuration.
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("this is not an env file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code := run(t, dir, nil, "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"migrate", "version", "completion", "EXIT STATUS", "--database-url"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if strings.Contains(errs, "config:") {
		t.Error("help read the configuration")
	}
}

func TestCompletionsAreCurrent(t *testing.T) {
	t.Parallel()
	for shell, file := range map[string]string{"bash": "ledgerctl.bash", "zsh": "_ledgerctl", "fish": "ledgerctl.fish"} {
		t.Run(shell, func(t *testing.T) {
			out, errs, code := run(t, t.TempDir(), nil, "completion", shell)
			if code != 0 || out == "" {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if strings.Contains(errs, "config:") {
				t.Error("completion read the configuration")
			}
			path := filepath.Join("..", "..", "completions", file)
			if *update {
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(want) != out {
				t.Errorf("completions/%s is stale: run `make generate`", file)
			}
		})
	}
}

func TestMigrateStatusUnreachable(t *testing.T) {
	t.Parallel()
	out, errs, code := run(t, t.TempDir(), map[string]string{"DATABASE_URL": "postgres://u:secretpw@127.0.0.1:1/ledger?sslmode=disable"}, "migrate", "status")
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
	_, errs, code := run(t, t.TempDir(), nil, "migrate", "up")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "DATABASE_URL") || !strings.Contains(errs, "cp -n .env.example .env") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestMigrateForceRejectsGarbage(t *testing.T) {
	t.Parallel()
	_, errs, code := run(t, t.TempDir(), map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x"}, "migrate", "force", "abc")
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
		out, errs, code := run(t, dir, nil, "migrate", "status", "--json")
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
		if _, errs, code := run(t, dir, nil, "migrate", "up"); code != 0 {
			t.Fatalf("up #%d: exit %d: %s", i, code, errs)
		}
	}
	if st := status(); st["current"].(float64) < 1 || st["dirty"].(bool) {
		t.Fatalf("after up: %v", st)
	}
	out, errs, code := run(t, dir, nil, "migrate", "down", "--verbose")
	if code != 0 || !strings.Contains(out, "reverted") {
		t.Fatalf("down: exit %d: %s %s", code, out, errs)
	}
	if !strings.Contains(errs, "config: .env (1 name)") {
		t.Errorf("no config note on stderr with --verbose: %q", errs)
	}
	if _, errs, _ := run(t, dir, nil, "migrate", "status"); strings.Contains(errs, "config:") {
		t.Errorf("config note without --verbose: %q", errs)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	out, _, code := run(t, t.TempDir(), nil, "version", "--json")
	var b version.BuildInfo
	if code != 0 || json.Unmarshal([]byte(out), &b) != nil || b.Version == "" || b.Go == "" {
		t.Errorf("exit %d: %q", code, out)
	}
}

func TestUnknownCommandIsUsage(t *testing.T) {
	t.Parallel()
	_, errs, code := run(t, t.TempDir(), nil, "frobnicate")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "unknown command") {
		t.Errorf("exit %d: %s", code, errs)
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
	_, errs, code := runCtx(context.Background(), t, dir, env, answer(false, &q), "migrate", "down")
	if code != cmdutil.ExitFailure || !strings.Contains(errs, "not confirmed; nothing was reverted") || !strings.Contains(q, "Revert migration") {
		t.Fatalf("declined: exit %d, asked %q: %s", code, q, errs)
	}
	out, _, _ := run(t, dir, env, "migrate", "status", "--json")
	avail := postgres.Available()
	if !strings.Contains(out, fmt.Sprintf(`"current":%d`, avail[len(avail)-1])) {
		t.Fatalf("a declined down changed the schema: %s", out)
	}
	q = ""
	if out, errs, code := runCtx(context.Background(), t, dir, env, answer(false, &q), "migrate", "down", "--yes"); code != 0 || q != "" || !strings.Contains(out, "reverted") {
		t.Errorf("--yes: exit %d, asked %q: %s %s", code, q, out, errs)
	}
	if out, errs, code := runCtx(context.Background(), t, dir, env, answer(true, &q), "migrate", "down"); code != 0 || !strings.Contains(out, "reverted") {
		t.Errorf("confirmed: exit %d: %s %s", code, out, errs)
	}
}

// TestVersionSaysCommitted: the date `make build` puts in the binary is the
// commit's, so the text calls it "committed", never "built"; --json has it
// as committed (and as date, the name earlier versions used). Not parallel:
// it sets the values the build would.
func TestVersionSaysCommitted(t *testing.T) {
	oldCommit, oldDate := cmdutil.Commit, cmdutil.Date
	t.Cleanup(func() { cmdutil.Commit, cmdutil.Date = oldCommit, oldDate })
	cmdutil.Commit, cmdutil.Date = "0123456789abcdef", "2026-12-01T10:00:00+00:00"
	out, errs, code := run(t, t.TempDir(), nil, "version")
	if code != 0 || !strings.Contains(out, "(commit 0123456789abcdef, committed 2026-12-01T10:00:00+00:00)") || strings.Contains(out, "built") {
		t.Errorf("exit %d: %q %s", code, out, errs)
	}
	out, _, _ = run(t, t.TempDir(), nil, "version", "--json")
	var b map[string]string
	if err := json.Unmarshal([]byte(out), &b); err != nil || b["committed"] != cmdutil.Date || b["date"] != cmdutil.Date {
		t.Errorf("--json: %q (%v)", out, err)
	}
}
