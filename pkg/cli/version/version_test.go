package version_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/cli/version"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	out, _, code := clitest.Run(t, t.TempDir(), nil, "version", "--json")
	var b version.BuildInfo
	if code != 0 || json.Unmarshal([]byte(out), &b) != nil || b.Version == "" || b.Go == "" {
		t.Errorf("exit %d: %q", code, out)
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
	out, errs, code := clitest.Run(t, t.TempDir(), nil, "version")
	if code != 0 || !strings.Contains(out, "(commit 0123456789abcdef, committed 2026-12-01T10:00:00+00:00)") || strings.Contains(out, "built") {
		t.Errorf("exit %d: %q %s", code, out, errs)
	}
	out, _, _ = clitest.Run(t, t.TempDir(), nil, "version", "--json")
	var b map[string]string
	if err := json.Unmarshal([]byte(out), &b); err != nil || b["committed"] != cmdutil.Date || b["date"] != cmdutil.Date {
		t.Errorf("--json: %q (%v)", out, err)
	}
}
