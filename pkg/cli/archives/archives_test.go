package archives_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestArchivesListResumesWithOpaqueCursor: `ledgerctl archives list` hands
// out the same sealed cursor as the API (the key is in the database) and
// takes it back with --before; it opens only for the same --as and --org,
// and a changed one is a usage error that names the flag.
func TestArchivesListResumesWithOpaqueCursor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// LIST_SOURCE=scan: the full scan's budget is what is tested.
	st := clitest.DeployStack(t, "CAPTURE_LEDGER_LIST_CHECK_BUDGET", "100", "CAPTURE_LEDGER_LIST_SOURCE", "scan")
	dsn, bucket, dir, env := st.DSN, st.Bucket, st.Dir, st.Env
	// 150 archives of an organization carol is not in.
	conn := testenv.Connect(t, dsn)
	var rows [][]any
	newest := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	var ids []string
	for i := range 150 {
		id := uuid.NewString()
		ids = append(ids, id)
		rows = append(rows, []any{id, uuid.NewString(), bucket, fmt.Sprintf("org/contoso/%d.wacz", i), "https://e.com/", newest.Add(-time.Duration(i) * time.Second)})
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"archives"}, []string{"id", "task_id", "bucket", "object_key", "source_url", "captured_at"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	before := testenv.TakeSnapshot(t, dsn)

	out, errs, code := clitest.Run(t, dir, env, "archives", "list", "--as", "carol", "--org", "nobody", "--json")
	var page archive.PageBody
	if code != 0 || json.Unmarshal([]byte(out), &page) != nil || !page.Truncated || page.Next == nil || len(page.Archives) != 0 {
		t.Fatalf("first page: exit %d: %s %s", code, out, errs)
	}
	token := page.Next.Before
	for _, id := range ids {
		if strings.Contains(out, id) || strings.Contains(errs, id) {
			t.Fatalf("the first page names hidden archive %s: %s %s", id, out, errs)
		}
	}
	// Read by a person: stderr says how to go on, with a cursor of its own.
	out, errs, code = clitest.Run(t, dir, env, "archives", "list", "--as", "carol", "--org", "nobody")
	if code != 0 || out != "" || !strings.Contains(errs, "more: --before c1.") || strings.Contains(errs, ids[99]) {
		t.Errorf("first page for a person: exit %d: %q %s", code, out, errs)
	}

	// The same person continues where the scan stopped: the last 50 rows,
	// and the end.
	out, errs, code = clitest.Run(t, dir, env, "archives", "list", "--as", "carol", "--org", "nobody", "--before", token, "--json")
	if code != 0 || json.Unmarshal([]byte(out), &page) != nil || page.Truncated || page.Next != nil {
		t.Errorf("second page: exit %d: %s %s", code, out, errs)
	}

	edited := token[:len(token)-2] + map[bool]string{true: "B", false: "A"}[token[len(token)-2] == 'A'] + token[len(token)-1:]
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"changed", []string{"--as", "carol", "--org", "nobody", "--before", edited}, "--before is not a cursor this server handed to you"},
		{"another person's", []string{"--as", "dave", "--org", "nobody", "--before", token}, "--before is not a cursor this server handed to you"},
		{"another organization", []string{"--as", "carol", "--org", "contoso", "--before", token}, "--before is not a cursor this server handed to you"},
		{"cut in two", []string{"--as", "carol", "--org", "nobody", "--before", token[:40]}, "--before is not a cursor this server handed to you"},
		{"with an id beside it", []string{"--as", "carol", "--org", "nobody", "--before", token, "--before-id", ids[0]}, "--before-id must be empty"},
		{"a bad time", []string{"--as", "carol", "--before", "yesterday", "--before-id", ids[0]}, `--before must match format "date-time"`},
		{"an id without a time", []string{"--as", "carol", "--before-id", ids[0]}, "--before-id needs before"},
		{"a bad id with a time", []string{"--as", "carol", "--before", "2026-01-01T00:00:00Z", "--before-id", "x"}, `--before-id must match format "uuid"`},
		{"why on the full scan", []string{"--as", "carol", "--why"}, "--why is known only with the candidate list (CAPTURE_LEDGER_LIST_SOURCE=candidates)"},
	} {
		_, errs, code := clitest.Run(t, dir, env, append([]string{"archives", "list"}, tc.args...)...)
		if code != cmdutil.ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d: %s (want exit %d saying %s)", tc.name, code, errs, cmdutil.ExitUsage, tc.want)
		}
	}
	testenv.Unchanged(t, dsn, before)
}
