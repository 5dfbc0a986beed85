package cli_test

import (
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
)

// TestActingAsHostileIdentityIsUsage: what the API answers 401 for is a
// usage error offline (exit 2), before any configuration is read.
func TestActingAsHostileIdentityIsUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"crawl", "list", "--as", "user:alice", "--org", "acme"}, "--as: subject"},
		{[]string{"crawl", "list", "--as", "*", "--org", "acme"}, "--as: subject"},
		{[]string{"crawl", "list", "--as", "alice", "--org", "acme#member"}, "--org: organization"},
		{[]string{"crawl", "list", "--as", "alice", "--org", "a b"}, "--org: organization"},
		{[]string{"crawl", "list", "--org", "acme"}, "--as is required"},
		{[]string{"archives", "list", "--as", "user:alice", "--org", "acme"}, "--as: subject"},
		{[]string{"archives", "url", "5b0a3c1e-0000-4000-8000-000000000000", "--as", "alice", "--org", "acme#member"}, "--org: organization"},
	} {
		out, errs, code := clitest.Run(t, t.TempDir(), nil, tc.args...)
		if code != cmdutil.ExitUsage || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, code, out, errs)
		}
	}
}
