package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// manifestJSON is a BrowserHive v12 report for taskID.
func manifestJSON(taskID, status, bucket, waczKey string) []byte {
	artifacts := ""
	if waczKey != "" {
		artifacts = fmt.Sprintf(`,"artifacts":{"wacz":"s3://%s/%s"}`, bucket, waczKey)
	}
	return []byte(fmt.Sprintf(`{"taskId":%q,"correlationId":"c0ffee00","url":"https://example.com/%s","labels":["daily"],
		"status":%q,"timestamp":"2026-11-30T10:00:00Z","captureProcessingTimeMs":1200,
		"completeness":{"complete":false,"bodylessUrls":[],"truncatedUrls":[]}%s}`, taskID, taskID[:8], status, artifacts))
}

// stackEnv is the env for commands that reach the test database and bucket.
func stackEnv(t *testing.T, dsn, bucket string) map[string]string {
	cfg := testenv.S3Config(t)
	return map[string]string{
		"DATABASE_URL":                        dsn,
		"CAPTURE_LEDGER_S3_ENDPOINT":          cfg.Endpoint,
		"CAPTURE_LEDGER_S3_BUCKET":            bucket,
		"CAPTURE_LEDGER_S3_ACCESS_KEY_ID":     cfg.AccessKeyID,
		"CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY": cfg.SecretAccessKey,
		"CAPTURE_LEDGER_S3_FORCE_PATH_STYLE":  "true",
	}
}

func TestReconcile(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.Database(t)
	objects, bucket, _ := testenv.Bucket(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

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
	put("crawl/"+lost+".result.json", manifestJSON(lost, "success", bucket, "crawl/"+lost+".wacz"))
	put("crawl/"+failed+".result.json", manifestJSON(failed, "failed", bucket, ""))
	put("crawl/"+scheduled+".result.json", manifestJSON(scheduled, "CAPTURE_STATUS_SUCCESS", bucket, "crawl/"+scheduled+".wacz"))
	for _, s := range []struct {
		task, key, errText string
		by                 *string
	}{
		{lost, "crawl/" + lost + ".result.json", "", ptr("alice")},
		{missing, "crawl/" + missing + ".result.json", "", ptr("alice")},
		{failed, "crawl/" + failed + ".result.json", "", ptr("alice")},
		{errored, "", "the capture response carried no manifest outcome", ptr("alice")},
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
	env := stackEnv(t, dsn, bucket)

	out, errs, code := run(t, t.TempDir(), env, "reconcile", "--json")
	if code != ExitIncomplete {
		t.Fatalf("exit %d, want %d (a manifest is missing): %s", code, ExitIncomplete, errs)
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
	payloads := outboxPayloads(t, conn)
	if len(payloads) != 2 {
		t.Fatalf("%d outbox rows, want 2", len(payloads))
	}
	want := ledger.AdmissionTuples(archiveID, lost, "acme", ptr("alice"))
	if !containsPayload(payloads, want) {
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
	out, _, code = run(t, t.TempDir(), env, "reconcile", "--json")
	if code != ExitIncomplete {
		t.Fatalf("second run exit %d", code)
	}
	_ = json.Unmarshal([]byte(out), &res)
	if res.Registered != 0 || res.Pending != 2 || res.Missing != 1 || res.Skipped != 1 {
		t.Errorf("second run: %+v", res)
	}
	if n := len(outboxPayloads(t, conn)); n != 2 {
		t.Errorf("%d outbox rows after the second run, want 2", n)
	}

	// The human table and argument validation.
	out, _, _ = run(t, t.TempDir(), env, "reconcile")
	if !strings.Contains(out, "pending") || !strings.Contains(out, "missing: crawl/"+missing) {
		t.Errorf("table: %q", out)
	}
	for _, bad := range []string{"0", "-3", "x", "1.5"} {
		if _, errs, code := run(t, t.TempDir(), env, "reconcile", "--since-days", bad); code != ExitUsage || !strings.Contains(errs, "positive integer") {
			t.Errorf("--since-days %s: exit %d %s", bad, code, errs)
		}
	}
	if _, _, code := run(t, t.TempDir(), env, "reconcile", "--since-days", "1"); code != ExitIncomplete {
		t.Errorf("--since-days 1: exit %d", code)
	}
}

func ptr(s string) *string { return &s }

func outboxPayloads(t *testing.T, conn *pgx.Conn) []ledger.OutboxPayload {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT payload FROM fga_outbox ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.OutboxPayload
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		p, err := ledger.ParseOutboxPayload(raw)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func containsPayload(all []ledger.OutboxPayload, want ledger.OutboxPayload) bool {
	w, _ := json.Marshal(want)
	for _, p := range all {
		if b, _ := json.Marshal(p); string(b) == string(w) {
			return true
		}
	}
	return false
}
