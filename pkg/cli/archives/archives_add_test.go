package archives_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// fixture is a manifest of pkg/manifest/testdata, its artefacts moved into
// bucket under dir (BrowserHive writes them next to the manifest).
func fixture(t *testing.T, name, fromBucket, bucket, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../manifest/testdata/" + name + ".result.json")
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.ReplaceAll(string(b), "s3://"+fromBucket+"/", "s3://"+bucket+"/"+dir+"/"))
}

// TestArchivesAdd registers captures already in the bucket, without a level
// report: manifests of several BrowserHive dialects by key and by --prefix,
// each recorded as submitted by --as for --org and admitted with its tuples;
// a second run writes nothing; another organization's task is refused; bad
// keys and missing manifests are listed (exit 3); bad identities are usage
// errors; and after a drain the archives are listed for the organization.
func TestArchivesAdd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := clitest.DeployStack(t)
	dsn, objects, bucket, dir, env := st.DSN, st.Objects, st.Bucket, st.Dir, st.Env
	conn := testenv.Connect(t, dsn)
	put := func(key string, body []byte) {
		if err := objects.Put(ctx, bucket, key, "application/json", body); err != nil {
			t.Fatal(err)
		}
	}
	const (
		v12Task    = "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4" // v12+: "success"
		protoTask  = "7c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e" // v3-v11: "CAPTURE_STATUS_SUCCESS"
		failedTask = "91b2c3d4-e5f6-4071-8293-a4b5c6d7e8f9" // a failed capture
		v2Task     = "0f8e4b2a-93c1-4d57-a6b0-5e2f1c7d9a31" // v1.8-v2.x, upper-case taskId
		cancelTask = "5a0c9e1b-2d3f-4e5a-b6c7-d8e9f0a1b2c3" // v12 "failed"/"cancelled"
	)
	v12Key := "bh/" + v12Task + "_ab12cd34.result.json"
	protoKey := "bh/" + protoTask + "_9f8e7d6c.result.json"
	failedKey := "bh/" + failedTask + "_deadbeef.result.json"
	put(v12Key, fixture(t, "v12_success", "browserhive", bucket, "bh"))
	put(protoKey, fixture(t, "protobuf_success", "browserhive", bucket, "bh"))
	put(failedKey, fixture(t, "failed", "browserhive", bucket, "bh"))
	put("daily/2026-11/"+v2Task+"_abc123de_news-daily.result.json", fixture(t, "v2_success", "captures", bucket, "daily/2026-11"))
	put("daily/2026-11/"+cancelTask+"_c0ffee01.result.json", fixture(t, "cancelled", "browserhive", bucket, "daily/2026-11"))
	put("daily/2026-11/"+v2Task+"_abc123de_news-daily.wacz", []byte("not a manifest: never read"))
	put("daily/2026-12/other.result.json", []byte(`{}`)) // outside the prefix
	empty := testenv.TakeSnapshot(t, dsn)

	// Bad identities are usage errors, before anything is read or written.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--org", "acme"}, "--as is required"},
		{[]string{"--as", "user:alice", "--org", "acme"}, "--as: subject"},
		{[]string{"--as", "alice", "--org", "acme#member"}, "--org: organization"},
		{[]string{"--as", "alice"}, "exactly one organization"},
		{[]string{"--as", "alice", "--org", "acme", "--org", "contoso"}, "exactly one organization"},
		{[]string{"--as", "alice", "--org", "acme,contoso"}, "exactly one organization"},
	} {
		args := append([]string{"archives", "add", v12Key}, tc.args...)
		out, errs, code := clitest.Run(t, dir, env, args...)
		if code != cmdutil.ExitUsage || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, code, out, errs)
		}
	}
	for _, args := range [][]string{
		{"archives", "add", "--as", "alice", "--org", "acme"},
		{"archives", "add", "--as", "alice", "--org", "acme", "--prefix", ""},
		{"archives", "add", "--as", "alice", "--org", "acme", "--prefix", "daily/../bh/"},
		{"archives", "add", "--as", "alice", "--org", "acme", "--prefix", "s3://elsewhere/daily/"},
	} {
		if out, errs, code := clitest.Run(t, dir, env, args...); code != cmdutil.ExitUsage || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	testenv.Unchanged(t, dsn, empty)

	// By key: bare and s3://, three dialects.
	out, errs, code := clitest.Run(t, dir, env, "archives", "add", v12Key, "s3://"+bucket+"/"+protoKey, failedKey, "--org", "acme", "--as", "alice", "--json")
	if code != 0 {
		t.Fatalf("add by key: exit %d: %s %s", code, out, errs)
	}
	var res clitest.AddResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if res.Org != "acme" || res.SubmittedBy != "alice" || res.Manifests != 3 || res.Registered != 2 || res.NoArchive != 1 || res.Known+res.Refused+res.Missing+res.Errored != 0 {
		t.Fatalf("add by key: %s", out)
	}
	if o := res.Outcomes(); o[v12Key] != "registered" || o[protoKey] != "registered" || o[failedKey] != "no-archive" {
		t.Errorf("outcomes: %v", o)
	}

	// The archives, their submissions and their tuples.
	archiveOf := func(task string) (id, key string, complete *bool) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT id::text, object_key, wacz_complete FROM archives WHERE task_id = $1 AND bucket = $2`, task, bucket).Scan(&id, &key, &complete); err != nil {
			t.Fatalf("archive of %s: %v", task, err)
		}
		return id, key, complete
	}
	v12ID, key, complete := archiveOf(v12Task)
	if key != "bh/"+v12Task+"_ab12cd34.wacz" || complete == nil || !*complete {
		t.Errorf("v12 archive: %s %v", key, complete)
	}
	protoID, key, complete := archiveOf(protoTask)
	if key != "bh/"+protoTask+"_9f8e7d6c_news%5Fjp-日本語 +1.wacz" || complete == nil || *complete {
		t.Errorf("protobuf archive: %q %v", key, complete)
	}
	for _, s := range []struct{ task, key, corr string }{
		{v12Task, v12Key, "ab12cd34"}, {protoTask, protoKey, "9f8e7d6c"}, {failedTask, failedKey, "deadbeef"},
	} {
		var org, by, mkey, corr string
		if err := conn.QueryRow(ctx, `SELECT org_id, submitted_by, manifest_key, correlation_id FROM capture_submissions WHERE task_id = $1 AND manifest_error IS NULL`, s.task).Scan(&org, &by, &mkey, &corr); err != nil {
			t.Fatalf("submission of %s: %v", s.task, err)
		}
		if org != "acme" || by != "alice" || mkey != s.key || corr != s.corr {
			t.Errorf("submission of %s: %s %s %s %s", s.task, org, by, mkey, corr)
		}
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM archives WHERE task_id = $1`, failedTask).Scan(&n); err != nil || n != 0 {
		t.Errorf("the failed capture has %d archives (%v)", n, err)
	}
	payloads := clitest.OutboxPayloads(t, conn)
	if len(payloads) != 2 {
		t.Fatalf("%d outbox rows, want 2", len(payloads))
	}
	for _, want := range []ledger.OutboxPayload{
		ledger.AdmissionTuples(v12ID, v12Task, "acme", clitest.Ptr("alice")),
		ledger.AdmissionTuples(protoID, protoTask, "acme", clitest.Ptr("alice")),
	} {
		if !clitest.ContainsPayload(payloads, want) {
			t.Errorf("outbox lacks %+v; has %+v", want, payloads)
		}
	}

	// By prefix, read by a person: only the manifests under it.
	out, errs, code = clitest.Run(t, dir, env, "archives", "add", "--prefix", "daily/2026-11/", "--org", "acme", "--as", "alice")
	if code != 0 {
		t.Fatalf("add --prefix: exit %d: %s %s", code, out, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "manifests registered known no-archive refused missing errors" ||
		strings.Join(strings.Fields(lines[1]), " ") != "2 1 0 1 0 0 0" {
		t.Errorf("add --prefix table:\n%s", out)
	}
	v2ID, key, _ := archiveOf(v2Task)
	if key != "daily/2026-11/"+v2Task+"_abc123de_news-daily.wacz" {
		t.Errorf("v2 archive key %q", key)
	}
	if !clitest.ContainsPayload(clitest.OutboxPayloads(t, conn), ledger.AdmissionTuples(v2ID, v2Task, "acme", clitest.Ptr("alice"))) {
		t.Error("the v2 archive's tuples were not queued")
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM capture_submissions WHERE task_id = $1 AND org_id = 'acme'`, cancelTask).Scan(&n); err != nil || n != 1 {
		t.Errorf("the cancelled capture's submission: %d (%v)", n, err)
	}

	// Again, both ways: nothing new, exit 0.
	before := testenv.TakeSnapshot(t, dsn)
	out, errs, code = clitest.Run(t, dir, env, "archives", "add", v12Key, protoKey, failedKey, "--prefix", "s3://"+bucket+"/daily/2026-11/", "--org", "acme", "--as", "alice", "--json")
	res = clitest.AddResult{}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Manifests != 5 || res.Registered != 0 || res.Known != 3 || res.NoArchive != 2 {
		t.Errorf("second run: exit %d: %s %s", code, out, errs)
	}
	testenv.Unchanged(t, dsn, before)

	// A task recorded for another organization is not taken over, nor is
	// an archive already registered when another person adds it.
	const theirs = "3d4e5f60-7182-4394-a5b6-c7d8e9f0a1b2"
	theirKey := "bh/" + theirs + "_.result.json"
	put(theirKey, []byte(strings.ReplaceAll(string(fixture(t, "v12_success", "browserhive", bucket, "bh")), v12Task, theirs)))
	if _, err := conn.Exec(ctx, `INSERT INTO capture_submissions (task_id, org_id, submitted_by, manifest_key) VALUES ($1, 'contoso', 'carol', $2)`, theirs, theirKey); err != nil {
		t.Fatal(err)
	}
	before = testenv.TakeSnapshot(t, dsn)
	out, errs, code = clitest.Run(t, dir, env, "archives", "add", theirKey, v12Key, "--org", "acme", "--as", "mallory", "--json")
	res = clitest.AddResult{}
	if code != cmdutil.ExitIncomplete || json.Unmarshal([]byte(out), &res) != nil || res.Refused != 1 || res.Known != 1 || res.Registered != 0 {
		t.Fatalf("another organization's task: exit %d: %s %s", code, out, errs)
	}
	for _, r := range res.Results {
		if r.Key == theirKey && (r.Outcome != "refused" || r.Reason != "task "+theirs+" is recorded for another organization" || strings.Contains(r.Reason, "contoso")) {
			t.Errorf("refusal: %+v", r)
		}
	}
	testenv.Unchanged(t, dsn, before)
	out, _, code = clitest.Run(t, dir, env, "archives", "add", theirKey, "--org", "acme", "--as", "alice")
	if code != cmdutil.ExitIncomplete || !strings.Contains(out, "refused: "+theirKey+": task "+theirs+" is recorded for another organization") {
		t.Errorf("refusal for a person: exit %d:\n%s", code, out)
	}
	testenv.Unchanged(t, dsn, before)

	// Keys the ledger does not read, and manifests that are not there: each
	// listed with its reason, the good one still handled, exit 3.
	dotdot := "daily/../" + v12Key
	out, errs, code = clitest.Run(t, dir, env, "archives", "add", dotdot, "bh/nope.result.json", "s3://elsewhere/"+v12Key, "bh//x.result.json", v12Key, "--org", "acme", "--as", "alice")
	if code != cmdutil.ExitIncomplete || !strings.Contains(errs, "1 manifest(s) missing, 0 refused, 3 in error") {
		t.Errorf("bad keys: exit %d: %s", code, errs)
	}
	for _, want := range []string{
		`error: ` + dotdot + `: manifest key: not an object key the ledger can read (a ".." key segment)`,
		"missing: bh/nope.result.json",
		"error: s3://elsewhere/" + v12Key + ": manifest key: written to bucket elsewhere, but the ledger reads " + bucket,
		"error: bh//x.result.json: manifest key: not an object key the ledger can read (an empty key segment)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bad keys: output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "\n") != 6 {
		t.Errorf("bad keys: want a table and one line per problem:\n%s", out)
	}
	testenv.Unchanged(t, dsn, before)

	// Once delivered, the organization's members and the submitter see the
	// added archives, and no one else does.
	if out, errs, code := clitest.Run(t, dir, env, "drain"); code != 0 {
		t.Fatalf("drain: exit %d: %s %s", code, out, errs)
	}
	visible := func(as string, orgs ...string) []string {
		t.Helper()
		args := []string{"archives", "list", "--as", as, "--json"}
		for _, o := range orgs {
			args = append(args, "--org", o)
		}
		out, errs, code := clitest.Run(t, dir, env, args...)
		var page archive.PageBody
		if code != 0 || json.Unmarshal([]byte(out), &page) != nil {
			t.Fatalf("%v: exit %d: %s %s", args, code, out, errs)
		}
		var ids []string
		for _, a := range page.Archives {
			ids = append(ids, a.ID)
		}
		slices.Sort(ids)
		return ids
	}
	want := []string{v12ID, protoID, v2ID}
	slices.Sort(want)
	if got := visible("alice", "acme"); !slices.Equal(got, want) {
		t.Errorf("alice in acme sees %v, want %v", got, want)
	}
	if got := visible("bob", "acme"); !slices.Equal(got, want) {
		t.Errorf("bob in acme sees %v, want %v", got, want)
	}
	if got := visible("alice"); !slices.Equal(got, want) {
		t.Errorf("alice as the submitter sees %v, want %v", got, want)
	}
	if got := visible("carol", "contoso"); len(got) != 0 {
		t.Errorf("carol in contoso sees %v", got)
	}
	out, _, code = clitest.Run(t, dir, env, "archives", "list", "--as", "alice", "--org", "acme")
	if code != 0 || !strings.Contains(out, v12ID) || !strings.Contains(out, "https://news.example.org/article/42") {
		t.Errorf("archives list table: exit %d:\n%s", code, out)
	}
	// Every column has a name: one of these archives has an incomplete
	// WACZ, which shows under "wacz" (archiveTable leaves out the columns
	// empty in every row).
	if head := strings.Fields(strings.SplitN(out, "\n", 2)[0]); !slices.Equal(head, []string{"id", "captured", "source", "labels", "wacz"}) {
		t.Errorf("archives list header %q, want id captured source labels wacz:\n%s", head, out)
	}
	out, _, code = clitest.Run(t, dir, env, "archives", "list", "--as", "alice", "--org", "acme", "--why")
	if code != 0 || !strings.Contains(out, "why") || !strings.Contains(out, "member of acme; owner") {
		t.Errorf("archives list --why as the owner: exit %d:\n%s", code, out)
	}
	out, _, code = clitest.Run(t, dir, env, "archives", "list", "--as", "bob", "--org", "acme", "--why")
	if code != 0 || !strings.Contains(out, "member of acme") || strings.Contains(out, "owner") {
		t.Errorf("archives list --why as a member: exit %d:\n%s", code, out)
	}
	// The same list under a Japanese locale.
	ja := maps.Clone(env)
	ja["LANG"] = "ja_JP.UTF-8"
	out, _, code = clitest.Run(t, dir, ja, "archives", "list", "--as", "alice", "--org", "acme", "--why")
	if head := strings.Fields(strings.SplitN(out, "\n", 2)[0]); code != 0 || !slices.Equal(head, []string{"ID", "取得日時", "取得元", "ラベル", "WACZ", "見える理由"}) ||
		!strings.Contains(out, "acme のメンバー; 自分の取得") || !strings.Contains(out, "不完全") {
		t.Errorf("archives list --why in Japanese: exit %d:\n%s", code, out)
	}
	_, errs, code = clitest.Run(t, dir, ja, "archives", "list", "--as", "carol", "--org", "contoso")
	if code != 0 || errs != "carol が見られるアーカイブはありません\n" {
		t.Errorf("an empty list in Japanese: exit %d: %q", code, errs)
	}
}

// TestArchivesAddStopsWhenADependencyDoesNotAnswer: S3 or PostgreSQL not
// answering stops the run with exit 4 and nothing written.
func TestArchivesAddStopsWhenADependencyDoesNotAnswer(t *testing.T) {
	t.Parallel()
	dsn := testenv.Database(t)
	_, bucket, _ := testenv.Bucket(t)
	before := testenv.TakeSnapshot(t, dsn)
	for _, tc := range []struct{ name, variable, want string }{
		{"S3", "CAPTURE_LEDGER_S3_ENDPOINT", "archives add stopped (running it again is safe): S3 did not answer"},
		{"PostgreSQL", "DATABASE_URL", "ledgerctl: "},
	} {
		env := clitest.StackEnv(t, dsn, bucket)
		if tc.variable == "DATABASE_URL" {
			env[tc.variable] = "postgres://nobody:nothing@" + strings.TrimPrefix(clitest.ClosedURL(t), "http://") + "/none?sslmode=disable&connect_timeout=2"
		} else {
			env[tc.variable] = clitest.ClosedURL(t)
		}
		for _, args := range [][]string{
			{"archives", "add", "bh/x.result.json", "--org", "acme", "--as", "alice"},
			{"archives", "add", "--prefix", "bh/", "--org", "acme", "--as", "alice", "--json"},
		} {
			out, errs, code := clitest.Run(t, t.TempDir(), env, args...)
			if code != cmdutil.ExitUnreachable || out != "" || !strings.Contains(errs, tc.want) {
				t.Errorf("%s down, %v: exit %d, stdout %q, stderr %q", tc.name, args, code, out, errs)
			}
		}
	}
	testenv.Unchanged(t, dsn, before)
}
