package cli_test

import (
	"context"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestExitFourForEveryDependency: whichever dependency does not answer,
// the command exits 4 with one line naming it (S3's case through reconcile
// is TestReconcileStopsWhenS3DoesNotAnswer; PostgreSQL's through migrate is
// TestMigrateStatusUnreachable).
func TestExitFourForEveryDependency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.Database(t)
	_, bucket, _ := testenv.Bucket(t)
	conn := testenv.Connect(t, dsn)
	var id string
	if err := conn.QueryRow(ctx, `INSERT INTO archives (task_id, bucket, object_key, source_url, captured_at)
		VALUES (gen_random_uuid(), $1, 'k.wacz', 'https://example.com/', now()) RETURNING id::text`, bucket).Scan(&id); err != nil {
		t.Fatal(err)
	}
	// Recorded for acme, so alice's list has a candidate to ask OpenFGA
	// about (an empty candidate list asks nothing).
	if _, err := conn.Exec(ctx, `INSERT INTO archive_sources (archive_id, captured_at, kind, principal)
		SELECT id, captured_at, 'organization', 'acme' FROM archives WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	fga := clitest.ClosedURL(t)
	for _, tc := range []struct {
		name string
		env  func(map[string]string)
		args []string
		want string
	}{
		{"OpenFGA, archives url", func(e map[string]string) {
			e["CAPTURE_LEDGER_FGA_API_URL"] = fga
			e["CAPTURE_LEDGER_FGA_STORE_ID"] = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
			e["CAPTURE_LEDGER_FGA_MODEL_ID"] = "01ARZ3NDEKTSV4RRFFQ69G5FAW"
		}, []string{"archives", "url", id, "--as", "alice", "--org", "acme"}, "cannot reach OpenFGA at " + fga},
		{"OpenFGA, archives list", func(e map[string]string) {
			e["CAPTURE_LEDGER_FGA_API_URL"] = fga
			e["CAPTURE_LEDGER_FGA_STORE_ID"] = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
			e["CAPTURE_LEDGER_FGA_MODEL_ID"] = "01ARZ3NDEKTSV4RRFFQ69G5FAW"
		}, []string{"archives", "list", "--as", "alice", "--org", "acme"}, "cannot reach OpenFGA at " + fga},
		{"PostgreSQL, reconcile", func(e map[string]string) {
			e["DATABASE_URL"] = "postgres://u:secretpw@127.0.0.1:1/ledger?sslmode=disable"
		}, []string{"reconcile"}, "cannot reach PostgreSQL at 127.0.0.1:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := clitest.StackEnv(t, dsn, bucket)
			tc.env(env)
			out, errs, code := clitest.Run(t, t.TempDir(), env, tc.args...)
			if code != cmdutil.ExitUnreachable || out != "" || !strings.Contains(errs, "ledgerctl: "+tc.want) || strings.Contains(errs, "secretpw") {
				t.Errorf("exit %d (want %d), stdout %q, stderr %q", code, cmdutil.ExitUnreachable, out, errs)
			}
		})
	}
}

// TestUnparsableDatabaseURLIsUsage: a DATABASE_URL that is not a URL at
// all is a configuration error (exit 2) naming the variable, not exit 1.
func TestUnparsableDatabaseURLIsUsage(t *testing.T) {
	t.Parallel()
	out, errs, code := clitest.Run(t, t.TempDir(), map[string]string{"DATABASE_URL": "postgres://u:secretpw@127.0.0.1:notaport/x"}, "migrate", "status")
	if code != cmdutil.ExitUsage || out != "" || !strings.Contains(errs, "DATABASE_URL") || strings.Contains(errs, "secretpw") {
		t.Errorf("exit %d (want %d), stdout %q, stderr %q", code, cmdutil.ExitUsage, out, errs)
	}
}

// TestExitFourWhenOpenFGAsDatastoreIsDown: the embedded OpenFGA's
// PostgreSQL datastore stopped for real (connections refused): a command
// that checks and one that writes exit 4 naming the datastore.
func TestExitFourWhenOpenFGAsDatastoreIsDown(t *testing.T) {
	t.Parallel()
	dir, env := clitest.DeployedStack(t)
	outage := testenv.NewOutage(t, env["CAPTURE_LEDGER_FGA_DATASTORE_URI"])
	outage.Stop()
	for _, args := range [][]string{
		{"archives", "list", "--as", "alice", "--org", "acme"},
		{"fga", "grant", "submitter", "zed", "acme"},
		{"drain"},
	} {
		out, errs, code := clitest.Run(t, dir, env, args...)
		if code != cmdutil.ExitUnreachable || !strings.Contains(errs, "the OpenFGA datastore (PostgreSQL)") {
			t.Errorf("%v: exit %d (want %d), stdout %q, stderr %q", args, code, cmdutil.ExitUnreachable, out, errs)
		}
	}
}
