package archives_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/cli/archives"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// openPTY is a pseudo-terminal's terminal side (testenv.OpenPTY).
func openPTY(t *testing.T) *os.File { return testenv.OpenPTY(t) }

// TestArchivesDeleteDevNullIsNoTerminal: with /dev/null on standard input
// and a terminal on stderr (`ledgerctl archives delete … </dev/null` typed
// at a terminal) nobody can answer, so the command refuses before asking:
// exit 2, "needs --yes", and no question written to the terminal.
func TestArchivesDeleteDevNullIsNoTerminal(t *testing.T) {
	t.Parallel()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	tty := openPTY(t)
	env := map[string]string{
		"DATABASE_URL":                "postgres://127.0.0.1:1/none",
		"CAPTURE_LEDGER_FGA_STORE_ID": "01JAAAAAAAAAAAAAAAAAAAAAAA", "CAPTURE_LEDGER_FGA_MODEL_ID": "01JAAAAAAAAAAAAAAAAAAAAAAA",
		"CAPTURE_LEDGER_S3_ENDPOINT": "http://127.0.0.1:1", "CAPTURE_LEDGER_S3_BUCKET": "b",
		"CAPTURE_LEDGER_S3_ACCESS_KEY_ID": "k", "CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY": "s",
	}
	_, errs, code := clitest.RunCtx(context.Background(), t, t.TempDir(), env, func(f *cmdutil.Factory) {
		f.Streams.In, f.Streams.Err = null, tty
	}, "archives", "delete", "6f1c1b2e-8f0a-4c3e-9a55-0d6f0c1e2a3b", "--as", "alice", "--org", "acme")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "needs --yes") {
		t.Errorf("stdin /dev/null: exit %d: %s, want 2 saying it needs --yes", code, errs)
	}
}

// TestOpenBrowserReportsAFailingOpener: an opener that exits with an error
// (no display, no browser) is a failure naming it, not silence; one that
// cannot be started is too; one that works is not.
func TestOpenBrowserReportsAFailingOpener(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	failing := filepath.Join(dir, "failing")
	working := filepath.Join(dir, "working")
	for name, body := range map[string]string{failing: "echo 'no display' >&2; exit 3", working: "exit 0"} {
		if err := os.WriteFile(name, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	factory := func(browser string) *cmdutil.Factory {
		f := cmdutil.NewFactory(cmdutil.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
		f.Env = func(name string) (string, bool) { return browser, name == "BROWSER" }
		return f
	}
	const link = "http://127.0.0.1:7070/replay/?source=x"
	if err := archives.OpenBrowser(factory(failing), link); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("a failing opener: %v, want its exit status", err)
	}
	if err := archives.OpenBrowser(factory(filepath.Join(dir, "absent")), link); err == nil {
		t.Error("an opener that does not exist: no error")
	}
	if err := archives.OpenBrowser(factory(working), link); err != nil {
		t.Errorf("a working opener: %v", err)
	}
}
