package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

func TestReconcile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.Database(t)
	objects, bucket, _ := testenv.Bucket(t)
	conn := testenv.Connect(t, dsn)

	lost := uuid.NewString()      // the level write "failed": a manifest, no archive
	missing := uuid.NewString()   // the manifest was never written
	failed := uuid.NewString()    // a failed capture: no archive to admit
	errored := uuid.NewString()   // reported with manifestError: nothing to read
	scheduled := uuid.NewString() // an organisation's scheduled run: no submitter
	put := func(key string, body []byte) {
		if err := objects.Put(ctx, bucket, key, "application/json", body); err != nil {
			t.Fatal(err)
		}
	}
	put("crawl/"+lost+".result.json", clitest.ManifestJSON(lost, "success", bucket, "crawl/"+lost+".wacz"))
	put("crawl/"+failed+".result.json", clitest.ManifestJSON(failed, "failed", bucket, ""))
	put("crawl/"+scheduled+".result.json", clitest.ManifestJSON(scheduled, "CAPTURE_STATUS_SUCCESS", bucket, "crawl/"+scheduled+".wacz"))
	for _, s := range []struct {
		task, key, errText string
		by                 *string
	}{
		{lost, "crawl/" + lost + ".result.json", "", clitest.Ptr("alice")},
		{missing, "crawl/" + missing + ".result.json", "", clitest.Ptr("alice")},
		{failed, "crawl/" + failed + ".result.json", "", clitest.Ptr("alice")},
		{errored, "", "the capture response carried no manifest outcome", clitest.Ptr("alice")},
		{scheduled, "crawl/" + scheduled + ".result.json", "", nil},
	} {
		var key, errText *string
		if s.key != "" {
			key = &s.key
		} else {
			errText = &s.errText
		}
		if _, err := conn.Exec(ctx, `INSERT INTO capture_submissions (task_id, org_id, submitted_by, manifest_key, manifest_error) VALUES ($1, 'acme', $2, $3, $4)`, s.task, s.by, key, errText); err != nil {
			t.Fatal(err)
		}
	}
	env := clitest.StackEnv(t, dsn, bucket)

	out, errs, code := clitest.Run(t, t.TempDir(), env, "reconcile", "--json")
	if code != cmdutil.ExitIncomplete {
		t.Fatalf("exit %d, want %d (a manifest is missing): %s", code, cmdutil.ExitIncomplete, errs)
	}
	var res struct {
		Pending, Registered, Skipped, Missing int
		MissingKeys                           []string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if res.Pending != 4 || res.Registered != 2 || res.Skipped != 1 || res.Missing != 1 || len(res.MissingKeys) != 1 || !strings.Contains(res.MissingKeys[0], missing) {
		t.Fatalf("first run: %+v", res)
	}

	// The lost capture is now in the ledger, attributed through the outbox.
	var archiveID string
	var complete *bool
	if err := conn.QueryRow(ctx, `SELECT id::text, wacz_complete FROM archives WHERE task_id = $1`, lost).Scan(&archiveID, &complete); err != nil {
		t.Fatal(err)
	}
	if complete == nil || *complete {
		t.Errorf("wacz_complete = %v, want false", complete)
	}
	payloads := clitest.OutboxPayloads(t, conn)
	if len(payloads) != 2 {
		t.Fatalf("%d outbox rows, want 2", len(payloads))
	}
	want := ledger.AdmissionTuples(archiveID, lost, "acme", clitest.Ptr("alice"))
	if !clitest.ContainsPayload(payloads, want) {
		t.Errorf("outbox lacks %+v; has %+v", want, payloads)
	}
	for _, p := range payloads {
		for _, tu := range p.Writes {
			if tu.Relation == "owner" && strings.Contains(tu.Object, scheduled) {
				t.Errorf("a scheduled run got an owner tuple: %v", tu)
			}
		}
	}

	// Twice: nothing new registered, no duplicate tuples queued.
	out, _, code = clitest.Run(t, t.TempDir(), env, "reconcile", "--json")
	if code != cmdutil.ExitIncomplete {
		t.Fatalf("second run exit %d", code)
	}
	_ = json.Unmarshal([]byte(out), &res)
	if res.Registered != 0 || res.Pending != 2 || res.Missing != 1 || res.Skipped != 1 {
		t.Errorf("second run: %+v", res)
	}
	if n := len(clitest.OutboxPayloads(t, conn)); n != 2 {
		t.Errorf("%d outbox rows after the second run, want 2", n)
	}

	// The human table and argument validation.
	out, _, _ = clitest.Run(t, t.TempDir(), env, "reconcile")
	if !strings.Contains(out, "pending") || !strings.Contains(out, "missing: crawl/"+missing) {
		t.Errorf("table: %q", out)
	}
	for _, bad := range []string{"0", "-3", "x", "1.5"} {
		if _, errs, code := clitest.Run(t, t.TempDir(), env, "reconcile", "--since-days", bad); code != cmdutil.ExitUsage || !strings.Contains(errs, "positive integer") {
			t.Errorf("--since-days %s: exit %d %s", bad, code, errs)
		}
	}
	if _, _, code := clitest.Run(t, t.TempDir(), env, "reconcile", "--since-days", "1"); code != cmdutil.ExitIncomplete {
		t.Errorf("--since-days 1: exit %d", code)
	}
}

// TestReconcileBadRowsDoNotStarveTheRest: rows reconcile must not admit, or that used to stop it,
// sit before good ones. The first row's key has a ".." segment (it would
// read another object than the one it spells); one manifest carries another
// crawl's correlationId, another another task's id; one manifest's WACZ key
// climbs out with ".."; S3 refuses one key; one manifest is not a report.
// With one fetch at a time, the good rows after them are registered, every
// bad one is counted and listed with its reason, nothing of theirs reaches
// the ledger, and the command exits 3, run after run.
func TestReconcileBadRowsDoNotStarveTheRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.Database(t)
	objects, bucket, _ := testenv.Bucket(t)
	conn := testenv.Connect(t, dsn)
	put := func(key string, body []byte) {
		if err := objects.Put(ctx, bucket, key, "application/json", body); err != nil {
			t.Fatal(err)
		}
	}
	crawlID := uuid.NewString()
	withCorrelation := func(task, status, waczKey, corr string) []byte {
		return []byte(strings.Replace(string(clitest.ManifestJSON(task, status, bucket, waczKey)), `"correlationId":"c0ffee00"`, fmt.Sprintf(`"correlationId":%q`, corr), 1))
	}

	var (
		dotdot      = uuid.NewString() // manifest key with a ".." segment
		foreignCorr = uuid.NewString() // the manifest names another crawl
		foreignTask = uuid.NewString() // the manifest is another task's
		badWACZ     = uuid.NewString() // the manifest's WACZ key climbs out
		tooLong     = uuid.NewString() // S3 refuses the key (a 300-byte segment)
		garbage     = uuid.NewString() // not a report
		good1       = uuid.NewString()
		good2       = uuid.NewString() // correlation in another case: a UUID is a UUID
		good3       = uuid.NewString() // a row without a correlation: not checked
		other       = uuid.NewString()
	)
	// The object the ".." key would reach: a real, admissible manifest.
	put("victim/"+dotdot+".result.json", withCorrelation(dotdot, "success", "victim/"+dotdot+".wacz", crawlID))
	put("crawl/"+foreignCorr+".result.json", withCorrelation(foreignCorr, "success", "crawl/"+foreignCorr+".wacz", uuid.NewString()))
	put("crawl/"+foreignTask+".result.json", withCorrelation(other, "success", "crawl/"+other+".wacz", crawlID))
	put("crawl/"+badWACZ+".result.json", withCorrelation(badWACZ, "success", "org/acme/../../other-org/x.wacz", crawlID))
	put("crawl/"+garbage+".result.json", []byte(`{"not":"a report"}`))
	put("crawl/"+good1+".result.json", withCorrelation(good1, "success", "crawl/"+good1+".wacz", crawlID))
	put("crawl/"+good2+".result.json", withCorrelation(good2, "success", "crawl/"+good2+".wacz", strings.ToUpper(crawlID)))
	put("crawl/"+good3+".result.json", clitest.ManifestJSON(good3, "success", bucket, "crawl/"+good3+".wacz"))

	longKey := "crawl/" + strings.Repeat("a", 300) + ".result.json"
	corr := &crawlID
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for i, s := range []struct {
		task, key string
		corr      *string
	}{
		{dotdot, "crawl/../victim/" + dotdot + ".result.json", corr}, // first: it used to stop every run
		{foreignCorr, "crawl/" + foreignCorr + ".result.json", corr},
		{foreignTask, "crawl/" + foreignTask + ".result.json", corr},
		{badWACZ, "crawl/" + badWACZ + ".result.json", corr},
		{tooLong, longKey, corr},
		{garbage, "crawl/" + garbage + ".result.json", corr},
		{good1, "crawl/" + good1 + ".result.json", corr},
		{good2, "crawl/" + good2 + ".result.json", corr},
		{good3, "crawl/" + good3 + ".result.json", nil},
	} {
		if _, err := conn.Exec(ctx, `INSERT INTO capture_submissions (task_id, correlation_id, org_id, submitted_by, manifest_key, submitted_at) VALUES ($1, $2, 'acme', 'alice', $3, $4)`,
			s.task, s.corr, s.key, t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	env := clitest.StackEnv(t, dsn, bucket)

	type result struct {
		Pending, Registered, Skipped, Missing, Refused, Errored int
		MissingKeys                                             []string
		Refusals, Errors                                        []struct{ TaskID, Key, Reason string }
	}
	reasons := func(ps []struct{ TaskID, Key, Reason string }) map[string]string {
		m := map[string]string{}
		for _, p := range ps {
			m[p.TaskID] = p.Reason
		}
		return m
	}
	out, errs, code := clitest.Run(t, t.TempDir(), env, "reconcile", "--json", "--concurrency", "1")
	if code != cmdutil.ExitIncomplete {
		t.Fatalf("exit %d, want %d: %s", code, cmdutil.ExitIncomplete, errs)
	}
	var res result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if res.Pending != 9 || res.Registered != 3 || res.Skipped != 0 || res.Missing != 0 || res.Refused != 2 || res.Errored != 4 {
		t.Fatalf("first run: %s", out)
	}
	refusals, rowErrors := reasons(res.Refusals), reasons(res.Errors)
	if r := refusals[foreignCorr]; !strings.HasPrefix(r, "the manifest's correlationId is ") || !strings.HasSuffix(r, ", not the submission's "+crawlID) {
		t.Errorf("foreign correlation refused as %q", r)
	}
	if r, want := refusals[foreignTask], "the manifest is for task "+other+", not "+foreignTask; r != want {
		t.Errorf("foreign task refused as %q, want %q", r, want)
	}
	wantErrors := map[string]string{
		dotdot:  `manifest key: not an object key the ledger can read (a ".." key segment)`,
		badWACZ: `manifest: artifacts.wacz: not an s3:// location the ledger can read (a ".." key segment): s3://` + bucket + `/org/acme/../../other-org/x.wacz`,
	}
	for task, want := range wantErrors {
		if rowErrors[task] != want {
			t.Errorf("error of %s = %q, want %q", task, rowErrors[task], want)
		}
	}
	if r := rowErrors[tooLong]; !strings.Contains(r, "read manifest") || !strings.Contains(r, "KeyTooLong") {
		t.Errorf("the key S3 refused: %q", r)
	}
	if r := rowErrors[garbage]; !strings.HasPrefix(r, "manifest: ") {
		t.Errorf("the unreadable manifest: %q", r)
	}

	// Only the good rows reached the ledger, each with its own tuples.
	rows, err := conn.Query(ctx, `SELECT task_id::text FROM archives ORDER BY task_id`)
	if err != nil {
		t.Fatal(err)
	}
	admitted, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{good1, good2, good3}
	slices.Sort(want)
	if !slices.Equal(admitted, want) {
		t.Errorf("archives for %v, want %v", admitted, want)
	}
	if n := len(clitest.OutboxPayloads(t, conn)); n != 3 {
		t.Errorf("%d outbox rows, want 3", n)
	}

	// Again: the bad rows are still pending and still reported, nothing
	// else changes; the table names them.
	before := testenv.TakeSnapshot(t, dsn)
	out, errs, code = clitest.Run(t, t.TempDir(), env, "reconcile", "--json")
	if code != cmdutil.ExitIncomplete {
		t.Fatalf("second run exit %d: %s", code, errs)
	}
	res = result{}
	_ = json.Unmarshal([]byte(out), &res)
	if res.Pending != 6 || res.Registered != 0 || res.Refused != 2 || res.Errored != 4 {
		t.Errorf("second run: %s", out)
	}
	testenv.Unchanged(t, dsn, before)
	out, _, code = clitest.Run(t, t.TempDir(), env, "reconcile")
	if code != cmdutil.ExitIncomplete || !strings.Contains(out, "refused") || !strings.Contains(out, "refused: crawl/"+foreignCorr+".result.json: the manifest's correlationId is ") ||
		!strings.Contains(out, `error: crawl/../victim/`+dotdot+`.result.json: manifest key: not an object key the ledger can read (a ".." key segment)`) {
		t.Errorf("table (exit %d):\n%s", code, out)
	}
	testenv.Unchanged(t, dsn, before)
}

// TestReconcileStopsWhenS3DoesNotAnswer: a dependency that does not answer
// is the one thing that stops a run: exit 4, nothing written.
func TestReconcileStopsWhenS3DoesNotAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.Database(t)
	_, bucket, _ := testenv.Bucket(t)
	conn := testenv.Connect(t, dsn)
	task := uuid.NewString()
	if _, err := conn.Exec(ctx, `INSERT INTO capture_submissions (task_id, org_id, manifest_key) VALUES ($1, 'acme', $2)`, task, "crawl/"+task+".result.json"); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	env := clitest.StackEnv(t, dsn, bucket)
	env["CAPTURE_LEDGER_S3_ENDPOINT"] = closed
	before := testenv.TakeSnapshot(t, dsn)
	_, errs, code := clitest.Run(t, t.TempDir(), env, "reconcile", "--json")
	if code != cmdutil.ExitUnreachable || !strings.Contains(errs, "S3 did not answer") {
		t.Errorf("exit %d, want %d: %s", code, cmdutil.ExitUnreachable, errs)
	}
	testenv.Unchanged(t, dsn, before)
}
