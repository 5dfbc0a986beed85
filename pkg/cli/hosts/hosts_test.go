package hosts_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/cli/hosts"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestHostsPoliteness: `hosts politeness` lists the captures of a host made
// through the leases by two organizations (exit 0, JSON and table), exits 1
// once a capture started sooner than the delay its predecessor asked for,
// names on stderr the host with its port when given it without, and
// refuses a bad HOST or --since with exit 2 naming it.
func TestHostsPoliteness(t *testing.T) {
	t.Parallel()
	dsn := testenv.Database(t)
	env := map[string]string{"DATABASE_URL": dsn}
	dir := t.TempDir()
	ctx := context.Background()
	pool, err := postgres.Open(ctx, dsn, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := &postgres.Store{Pool: pool}
	const host = "polite.example:8443"
	for _, org := range []string{"acme", "globex", "acme"} {
		h, err := ledger.AcquireHost(ctx, st, ledger.HostLeaseRequest{Host: host, Kind: ledger.HostKindCapture, Org: org,
			URL: "https://" + host + "/", Delay: 20 * time.Millisecond, Source: "host", AtOnce: 1, TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Release(ctx, 20*time.Millisecond, "host"); err != nil {
			t.Fatal(err)
		}
	}
	out, errs, code := clitest.Run(t, dir, env, "hosts", "politeness", "POLITE.example:8443", "--json")
	var rep struct {
		OK            bool     `json:"ok"`
		Captures      int      `json:"captures"`
		Direct        int      `json:"direct"`
		Gaps          int      `json:"gaps"`
		Organizations []string `json:"organizations"`
		Sources       map[string]int
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || !rep.OK || rep.Captures != 3 || rep.Direct != 3 || rep.Gaps != 2 ||
		len(rep.Organizations) != 2 || rep.Sources["host"] != 3 {
		t.Fatalf("polite host: exit %d %s %s", code, out, errs)
	}
	if out, _, code := clitest.Run(t, dir, env, "hosts", "politeness", host); code != 0 || !strings.Contains(out, "3 capture(s)") || !strings.Contains(out, "globex") || !strings.Contains(out, "fairness: while an organization waited for its turn, another started at most 0 capture(s)") {
		t.Errorf("table: exit %d %s", code, out)
	}
	if out, _, code := clitest.Run(t, dir, env, "hosts", "politeness", host, "--since", "2999-01-01T00:00:00Z", "--json"); code != 0 || !strings.Contains(out, `"captures":0`) {
		t.Errorf("--since in the future: exit %d %s", code, out)
	}

	// The host named without its port: nothing of that name alone (exit 0,
	// as for any host without captures), and stderr names the host with
	// its port, as text and with --json (whose stdout stays the report).
	for _, extra := range [][]string{nil, {"--json"}} {
		out, errs, code := clitest.Run(t, dir, env, append([]string{"hosts", "politeness", "polite.example"}, extra...)...)
		if code != 0 || !strings.Contains(errs, "no capture of polite.example;") || !strings.Contains(errs, "captures exist of "+host+" ") {
			t.Errorf("HOST without its port %v: exit %d, stderr does not name %s: %s %s", extra, code, host, out, errs)
		}
		if extra != nil && (json.Unmarshal([]byte(out), &rep) != nil || rep.Captures != 0) {
			t.Errorf("HOST without its port --json: %s", out)
		}
	}
	for _, args := range [][]string{
		{"polite.exampl"},       // another name, a prefix of it
		{"polite.example:8080"}, // a port given
		{"polite.example", "--since", "2999-01-01T00:00:00Z"}, // no capture since then
	} {
		if _, errs, code := clitest.Run(t, dir, env, append([]string{"hosts", "politeness"}, args...)...); code != 0 || strings.Contains(errs, "captures exist") {
			t.Errorf("%v: exit %d, stderr %s", args, code, errs)
		}
	}

	// A capture that started 5 ms after an end held for 20 ms.
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
			INSERT INTO host_captures (host, holder, kind, org_id, url, started_at, ended_at, expires_at, delay_ms, delay_source)
			SELECT host, gen_random_uuid(), 'capture', 'initech', url, ended_at + interval '5 milliseconds',
			       ended_at + interval '6 milliseconds', ended_at + interval '1 minute', 0, 'host'
			FROM host_captures WHERE host = $1 ORDER BY started_at DESC LIMIT 1`, host)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code = clitest.Run(t, dir, env, "hosts", "politeness", host)
	if code != cmdutil.ExitFailure || !strings.Contains(out, "SHORT") || !strings.Contains(errs, "1 short gap") {
		t.Errorf("a short gap: exit %d %s %s", code, out, errs)
	}

	for _, bad := range [][]string{
		{"hosts", "politeness", "https://polite.example/"},
		{"hosts", "politeness", "polite example"},
		{"hosts", "politeness", "polite.example\x00"},
		{"hosts", "politeness", "\xff"},
		{"hosts", "politeness", host, "--since", "yesterday"},
		{"hosts", "politeness", host, "--since", "-1h"},
	} {
		if _, errs, code := clitest.Run(t, dir, env, bad...); code != cmdutil.ExitUsage || (!strings.Contains(errs, "HOST") && !strings.Contains(errs, "--since")) {
			t.Errorf("%q: exit %d %s", bad, code, errs)
		}
	}
}

// FuzzHostArg: HOST is outside input. It is refused (a usage error) or
// read into a host that is valid UTF-8 without spaces or control
// characters and reads back to itself; --since is refused or a time.
func FuzzHostArg(f *testing.F) {
	for _, s := range []string{"www.example.com", "127.0.0.1:8081", "[::1]:80", "EXAMPLE.com:443", "bücher.example", "a b", "x\x00", "\xff", "https://x/", "ex%41mple.com", ""} {
		f.Add(s, "24h")
	}
	f.Add("example.com", "2026-12-01T09:00:00Z")
	f.Fuzz(func(t *testing.T, raw, since string) {
		host, err := hosts.HostArg(raw)
		if err != nil {
			var u cmdutil.UsageError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), "HOST") {
				t.Fatalf("hostArg(%q): %v is not a usage error naming HOST", raw, err)
			}
		} else {
			if !utf8.ValidString(host) || strings.ContainsFunc(host, func(r rune) bool { return r < 0x21 || r == 0x7f }) || host == "" {
				t.Fatalf("hostArg(%q) = %q", raw, host)
			}
			if again, err := hosts.HostArg(host); err != nil || again != host {
				t.Fatalf("hostArg(%q) = %q, which reads back as %q, %v", raw, host, again, err)
			}
		}
		if _, err := hosts.SinceFlag(since, time.Now()); err != nil {
			var u cmdutil.UsageError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), "--since") {
				t.Fatalf("sinceFlag(%q): %v", since, err)
			}
		}
	})
}
