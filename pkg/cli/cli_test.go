package cli_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestHelpShowsTreeWithoutConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A broken .env must not matter to help: help never reads configuration.
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("this is not an env file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code := clitest.Run(t, dir, nil, "--help")
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
			out, errs, code := clitest.Run(t, t.TempDir(), nil, "completion", shell)
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

func TestUnknownCommandIsUsage(t *testing.T) {
	t.Parallel()
	_, errs, code := clitest.Run(t, t.TempDir(), nil, "frobnicate")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "unknown command") {
		t.Errorf("exit %d: %s", code, errs)
	}
}
