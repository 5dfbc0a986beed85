package doctor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

type doctorJSON struct {
	OK     bool `json:"ok"`
	Checks []struct {
		Check, Status, Detail, Hint string
	} `json:"checks"`
}

func doctorChecks(t *testing.T, out string) (doctorJSON, map[string]int) {
	t.Helper()
	var d doctorJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("doctor --json is not JSON: %v: %s", err, out)
	}
	idx := map[string]int{}
	for i, c := range d.Checks {
		idx[c.Check] = i
	}
	return d, idx
}

// TestDoctor runs `ledgerctl doctor` against the real stack: healthy, then
// with a dead outbox row, a database with its migrations pending, and S3 on
// a closed port.
func TestDoctor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := clitest.DeployStack(t)
	dsn, dir, env := st.DSN, st.Dir, st.Env
	all := []string{"config", "postgres", "openfga", "s3", "postgres-write", "s3-write", "fga-check", "fga-model", "migrations", "outbox", "clock"}

	t.Run("healthy", func(t *testing.T) {
		out, errs, code := clitest.Run(t, dir, env, "doctor")
		if code != 0 {
			t.Fatalf("exit %d: %s %s", code, out, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(all)+1 || !strings.HasPrefix(lines[0], "check") || !strings.Contains(lines[0], "hint") {
			t.Fatalf("table: %s", out)
		}
		for i, name := range all {
			if f := strings.Fields(lines[i+1]); len(f) < 2 || f[0] != name || f[1] != "ok" {
				t.Errorf("row %d: want %s ok, got %q", i+1, name, lines[i+1])
			}
		}
		if strings.Contains(out, "capture-ledger-secret") || strings.Contains(out, env["CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY"]) {
			t.Error("doctor printed the S3 secret")
		}
	})

	t.Run("json", func(t *testing.T) {
		out, errs, code := clitest.Run(t, dir, env, "doctor", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s %s", code, out, errs)
		}
		d, idx := doctorChecks(t, out)
		if !d.OK || len(d.Checks) != len(all) {
			t.Fatalf("shape: %s", out)
		}
		for i, name := range all {
			if c := d.Checks[i]; c.Check != name || c.Status != "ok" || c.Detail == "" || c.Hint != "" {
				t.Errorf("check %d: %+v", i, c)
			}
		}
		var raw map[string]any
		_ = json.Unmarshal([]byte(out), &raw)
		first := raw["checks"].([]any)[idx["postgres"]].(map[string]any)
		for _, k := range []string{"check", "status", "detail"} {
			if _, ok := first[k]; !ok {
				t.Errorf("a check lacks %q: %v", k, first)
			}
		}
	})

	t.Run("dead outbox row warns", func(t *testing.T) {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `INSERT INTO fga_outbox (payload, attempts, last_error, dead_at) VALUES ('{"writes":"nope"}', 1, 'malformed', now())`); err != nil {
			t.Fatal(err)
		}
		defer conn.Exec(ctx, `DELETE FROM fga_outbox`) //nolint:errcheck
		out, errs, code := clitest.Run(t, dir, env, "doctor", "--json")
		if code != 0 {
			t.Fatalf("a warn must exit 0: exit %d: %s %s", code, out, errs)
		}
		d, idx := doctorChecks(t, out)
		c := d.Checks[idx["outbox"]]
		if c.Status != "warn" || !strings.Contains(c.Detail, "dead 1") || !strings.Contains(c.Hint, "ledgerctl drain --status") || !d.OK {
			t.Errorf("outbox: %+v (ok %v)", c, d.OK)
		}
	})

	t.Run("pending migrations", func(t *testing.T) {
		pending := map[string]string{}
		for k, v := range env {
			pending[k] = v
		}
		pending["DATABASE_URL"] = testenv.EmptyDatabase(t)
		out, errs, code := clitest.Run(t, dir, pending, "doctor")
		if code != cmdutil.ExitFailure || !strings.Contains(errs, "migrations") {
			t.Fatalf("exit %d: %s %s", code, out, errs)
		}
		var row string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "migrations ") {
				row = l
			}
		}
		if f := strings.Fields(row); len(f) < 2 || f[1] != "fail" || !strings.Contains(row, "pending") || !strings.HasSuffix(row, "`ledgerctl migrate up`") {
			t.Errorf("migrations row: %q\n%s", row, out)
		}
		out, _, _ = clitest.Run(t, dir, pending, "doctor", "--json")
		d, idx := doctorChecks(t, out)
		if c := d.Checks[idx["migrations"]]; c.Status != "fail" || c.Hint != "`ledgerctl migrate up`" || d.OK {
			t.Errorf("migrations: %+v", c)
		}
	})

	t.Run("S3 on a closed port", func(t *testing.T) {
		closed := map[string]string{}
		for k, v := range env {
			closed[k] = v
		}
		closed["CAPTURE_LEDGER_S3_ENDPOINT"] = fmt.Sprintf("http://127.0.0.1:%d", clitest.FreePort(t))
		out, errs, code := clitest.Run(t, dir, closed, "doctor", "--json")
		if code != cmdutil.ExitUnreachable || !strings.Contains(errs, "unreachable: S3") {
			t.Fatalf("exit %d: %s %s", code, out, errs)
		}
		d, _ := doctorChecks(t, out)
		for _, c := range d.Checks {
			want := "ok"
			if c.Check == "s3-write" {
				want = "skip"
			}
			if c.Check == "s3" {
				want = "fail"
				if !strings.Contains(c.Hint, "make stack-up") || !strings.Contains(c.Detail, "cannot reach S3") {
					t.Errorf("s3: %+v", c)
				}
			}
			if c.Status != want {
				t.Errorf("%s: %s, want %s (%s)", c.Check, c.Status, want, c.Detail)
			}
		}
	})
}

// TestDoctorProvesWrites: doctor proves each dependency can do what serve
// needs, beyond answering: PostgreSQL whose transactions are read-only,
// S3 that answers HEAD but refuses puts, and a pinned model that does not
// exist each fail with a line saying so and a fix.
func TestDoctorProvesWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := clitest.DeployStack(t)
	bucket, dir, env := st.Bucket, st.Dir, st.Env
	with := func(k, v string) map[string]string {
		e := maps.Clone(env)
		e[k] = v
		return e
	}
	// row is the table row of check, its fields split on runs of spaces.
	row := func(t *testing.T, out, check string) string {
		t.Helper()
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, check+" ") {
				return strings.Join(strings.Fields(l), " ")
			}
		}
		t.Fatalf("no %s row:\n%s", check, out)
		return ""
	}

	t.Run("PostgreSQL refuses writes", func(t *testing.T) {
		ro := testenv.Database(t)
		conn := testenv.Connect(t, testenv.AdminURL(t))
		name := ro[strings.LastIndexByte(strings.Split(ro, "?")[0], '/')+1:]
		name = strings.Split(name, "?")[0]
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+name+" SET default_transaction_read_only = on"); err != nil {
			t.Fatal(err)
		}
		out, errs, code := clitest.Run(t, dir, with("DATABASE_URL", ro), "doctor")
		if code != cmdutil.ExitFailure || !strings.Contains(errs, "doctor: failed: postgres-write") {
			t.Fatalf("exit %d: %s %s", code, out, errs)
		}
		if r := row(t, out, "postgres"); !strings.HasPrefix(r, "postgres ok SELECT 1 answered") {
			t.Errorf("postgres row: %s", r)
		}
		r := row(t, out, "postgres-write")
		for _, want := range []string{"postgres-write fail", "refused a write", "read-only transaction", "default_transaction_read_only = off"} {
			if !strings.Contains(r, want) {
				t.Errorf("postgres-write row lacks %q: %s", want, r)
			}
		}
		t.Logf("%s", r)
	})

	t.Run("S3 refuses puts", func(t *testing.T) {
		// The real gateway behind a proxy that refuses writes the way a
		// read-only bucket policy does (403 AccessDenied): HEAD and GET
		// pass through.
		target, err := url.Parse(env["CAPTURE_LEDGER_S3_ENDPOINT"])
		if err != nil {
			t.Fatal(err)
		}
		proxy := httputil.NewSingleHostReverseProxy(target)
		ro := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut || r.Method == http.MethodPost || r.Method == http.MethodDelete {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusForbidden)
				fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
				return
			}
			proxy.ServeHTTP(w, r)
		}))
		defer ro.Close()
		out, errs, code := clitest.Run(t, dir, with("CAPTURE_LEDGER_S3_ENDPOINT", ro.URL), "doctor")
		if code != cmdutil.ExitFailure || !strings.Contains(errs, "doctor: failed: s3-write") {
			t.Fatalf("exit %d: %s %s", code, out, errs)
		}
		if r := row(t, out, "s3"); !strings.HasPrefix(r, "s3 ok bucket "+bucket) {
			t.Errorf("s3 row: %s", r)
		}
		r := row(t, out, "s3-write")
		for _, want := range []string{"s3-write fail", "PUT of probe object s3://" + bucket + "/.ledgerctl-doctor/", "AccessDenied", "s3:PutObject"} {
			if !strings.Contains(r, want) {
				t.Errorf("s3-write row lacks %q: %s", want, r)
			}
		}
		t.Logf("%s", r)
	})

	t.Run("the pinned model is missing", func(t *testing.T) {
		out, errs, code := clitest.Run(t, dir, with("CAPTURE_LEDGER_FGA_MODEL_ID", "01HZZZZZZZZZZZZZZZZZZZZZZZ"), "doctor")
		if code != cmdutil.ExitFailure || !strings.Contains(errs, "doctor: failed: openfga") {
			t.Fatalf("exit %d: %s %s", code, out, errs)
		}
		r := row(t, out, "openfga")
		for _, want := range []string{"openfga fail", "model 01HZZZZZZZZZZZZZZZZZZZZZZZ not found in store", "ledgerctl fga deploy"} {
			if !strings.Contains(r, want) {
				t.Errorf("openfga row lacks %q: %s", want, r)
			}
		}
		if r := row(t, out, "fga-check"); !strings.HasPrefix(r, "fga-check skip") {
			t.Errorf("fga-check row: %s", r)
		}
		t.Logf("%s", r)
	})
}

// TestDoctorConfiguration: missing and invalid variables are all named in
// the config check, and nothing else is tried (exit 2).
func TestDoctorConfiguration(t *testing.T) {
	t.Parallel()
	out, errs, code := clitest.Run(t, t.TempDir(), map[string]string{"CAPTURE_LEDGER_API_PORT": "99999"}, "doctor", "--json")
	if code != cmdutil.ExitUsage {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	d, _ := doctorChecks(t, out)
	if len(d.Checks) != 1 || d.Checks[0].Check != "config" || d.Checks[0].Status != "fail" || d.OK {
		t.Fatalf("checks: %s", out)
	}
	for _, want := range []string{"DATABASE_URL", "CAPTURE_LEDGER_S3_BUCKET", "CAPTURE_LEDGER_FGA_MODEL_ID", "CAPTURE_LEDGER_API_PORT"} {
		if !strings.Contains(d.Checks[0].Detail, want) {
			t.Errorf("config detail lacks %s: %s", want, d.Checks[0].Detail)
		}
	}
	if !strings.Contains(d.Checks[0].Hint, ".env.example") {
		t.Errorf("hint: %s", d.Checks[0].Hint)
	}
}
