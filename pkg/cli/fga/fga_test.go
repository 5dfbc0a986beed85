package fga_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

func TestFGATestPassesWithoutConfiguration(t *testing.T) {
	t.Parallel()
	out, errs, code := clitest.Run(t, t.TempDir(), nil, "fga", "test")
	if code != cmdutil.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if strings.Contains(errs, "config:") {
		t.Error("fga test read the configuration")
	}
	if !strings.Contains(out, "18 tests, 31 checks, all passed") || strings.Contains(out, "✗") {
		t.Errorf("output:\n%s", out)
	}
	if n := strings.Count(out, "✓"); n != 31 {
		t.Errorf("%d ✓ rows, want 31:\n%s", n, out)
	}
	for _, want := range []string{"TEST", "USER", "RELATION", "OBJECT", "EXPECTED", "GOT", "10 membership alone does not allow starting crawls"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour codes written to a non-terminal")
	}
}

func TestFGATestJSON(t *testing.T) {
	t.Parallel()
	out, errs, code := clitest.Run(t, t.TempDir(), nil, "fga", "test", "--json")
	if code != cmdutil.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		Tests, Checks, Failed int
		Passed                bool
		Results               []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Tests != 18 || got.Checks != 31 || got.Failed != 0 || !got.Passed || len(got.Results) != 31 {
		t.Errorf("%+v", got)
	}
}

// writeSuite puts the built-in tests next to model in a folder of their own.
func writeSuite(t *testing.T, model string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fga")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{fga.ModelFile: model, fga.TestsFile: fga.Tests} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, fga.TestsFile)
}

func TestFGATestCatchesMemberInCanSubmit(t *testing.T) {
	t.Parallel()
	broken := strings.Replace(fga.Model, "define can_submit: submitter or admin", "define can_submit: submitter or admin or member", 1)
	file := writeSuite(t, broken)
	out, errs, code := clitest.Run(t, t.TempDir(), nil, "fga", "test", "--file", file)
	if code != cmdutil.ExitFailure {
		t.Fatalf("exit %d, want %d\n%s%s", code, cmdutil.ExitFailure, out, errs)
	}
	var failed []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "✗") {
			failed = append(failed, strings.Join(strings.Fields(line), " "))
		}
	}
	want := "✗ 10 membership alone does not allow starting crawls user:carol can_submit organization:acme false true"
	if len(failed) != 1 || failed[0] != want {
		t.Errorf("failed rows %q, want only %q\n%s", failed, want, out)
	}
	if !strings.Contains(out, "1 of 31 checks FAILED") {
		t.Errorf("no failure summary:\n%s", out)
	}
}

func TestFGATestNamesTheLineOfASyntaxError(t *testing.T) {
	t.Parallel()
	broken := strings.Replace(fga.Model, "define submitter: [user]", "define submitter [user]", 1)
	line := 0
	for i, l := range strings.Split(broken, "\n") {
		if strings.Contains(l, "define submitter [user]") {
			line = i + 1
		}
	}
	file := writeSuite(t, broken)
	_, errs, code := clitest.Run(t, t.TempDir(), nil, "fga", "test", "--file", file)
	want := fmt.Sprintf("%s:%d:", filepath.Join(filepath.Dir(file), fga.ModelFile), line)
	if code != cmdutil.ExitFailure || !strings.Contains(errs, want) {
		t.Errorf("exit %d, stderr %q; want it to name %s", code, errs, want)
	}
}

func TestFGATestMissingFile(t *testing.T) {
	t.Parallel()
	_, errs, code := clitest.Run(t, t.TempDir(), nil, "fga", "test", "--file", "nope.yaml")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "nope.yaml") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestFGAGrantRefusesMember(t *testing.T) {
	t.Parallel()
	out, errs, code := clitest.Run(t, t.TempDir(), nil, "fga", "grant", "member", "alice", "acme")
	if code != cmdutil.ExitUsage || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	if !strings.Contains(errs, "relation must be one of: submitter, admin (got member)") || !strings.Contains(errs, "identity token") {
		t.Errorf("stderr %q", errs)
	}
	if strings.Contains(errs, "config:") {
		t.Error("read the configuration before refusing")
	}
	_, errs, code = clitest.Run(t, t.TempDir(), nil, "fga", "revoke", "owner", "alice", "acme")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "(got owner)") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestFGAGrantNeedsDeployedIDs(t *testing.T) {
	t.Parallel()
	_, errs, code := clitest.Run(t, t.TempDir(), map[string]string{"DATABASE_URL": "postgres://u@127.0.0.1:1/x"}, "fga", "grant", "submitter", "alice", "acme")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "CAPTURE_LEDGER_FGA_STORE_ID") || !strings.Contains(errs, "ledgerctl fga deploy") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestFGADeployNeedsADatastore(t *testing.T) {
	t.Parallel()
	_, errs, code := clitest.Run(t, t.TempDir(), nil, "fga", "deploy")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "CAPTURE_LEDGER_FGA_DATASTORE_URI") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestFGAGrantUnreachableRemote(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	env := map[string]string{
		"CAPTURE_LEDGER_FGA_API_URL":   url,
		"CAPTURE_LEDGER_FGA_API_TOKEN": "secret-key",
		"CAPTURE_LEDGER_FGA_STORE_ID":  "01ARZ3NDEKTSV4RRFFQ69G5FAV",
		"CAPTURE_LEDGER_FGA_MODEL_ID":  "01ARZ3NDEKTSV4RRFFQ69G5FAW",
	}
	out, errs, code := clitest.Run(t, t.TempDir(), env, "fga", "grant", "submitter", "alice", "acme")
	if code != cmdutil.ExitUnreachable || out != "" || !strings.Contains(errs, "cannot reach OpenFGA at "+url) || strings.Contains(errs, "secret-key") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestFGADeployGrantRevokeThroughCLI(t *testing.T) {
	t.Parallel()
	ledger := testenv.EmptyDatabase(t)
	fgaDB := config.SiblingDatabase(ledger, "_fga") // does not exist yet: deploy creates it
	t.Cleanup(func() { dropDB(t, fgaDB) })
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("DATABASE_URL="+ledger+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".env.local"), []byte("# kept\nLOG_LEVEL=debug\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	deploy := func() (store, model string) {
		t.Helper()
		out, errs, code := clitest.Run(t, dir, nil, "fga", "deploy")
		if code != cmdutil.ExitOK {
			t.Fatalf("deploy: exit %d: %s", code, errs)
		}
		// make run deploys before any serve exists: the note must hold
		// with no serve running as well as with one.
		if strings.Contains(errs, "wrote") && (strings.Contains(errs, "restart ledgerctl serve") || !strings.Contains(errs, "serve uses it from its next start")) {
			t.Errorf("deploy's note on serve: %s", errs)
		}
		m := regexp.MustCompile(`^CAPTURE_LEDGER_FGA_STORE_ID=(\S+)\nCAPTURE_LEDGER_FGA_MODEL_ID=(\S+)\n$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("deploy stdout %q", out)
		}
		local, err := os.ReadFile(filepath.Join(dir, ".env.local"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"# kept\n", "LOG_LEVEL=debug\n", "CAPTURE_LEDGER_FGA_STORE_ID=" + m[1] + "\n", "CAPTURE_LEDGER_FGA_MODEL_ID=" + m[2] + "\n"} {
			if !strings.Contains(string(local), want) {
				t.Errorf(".env.local lacks %q:\n%s", want, local)
			}
		}
		if env, _ := os.ReadFile(filepath.Join(dir, ".env")); strings.Contains(string(env), "FGA") {
			t.Error("deploy wrote .env")
		}
		return m[1], m[2]
	}
	store1, model1 := deploy()
	store2, model2 := deploy()
	if store2 != store1 || model2 != model1 {
		t.Errorf("second deploy of the same model: store %s→%s, model %s→%s (want both unchanged)", store1, store2, model1, model2)
	}

	// English unless the locale says Japanese; the test's own LANG must not leak in.
	english := map[string]string{"LC_ALL": "", "LC_MESSAGES": "", "LANG": ""}
	japanese := map[string]string{"LC_ALL": "", "LC_MESSAGES": "", "LANG": "ja_JP.UTF-8"}
	steps := []struct {
		args   []string
		en, ja string
	}{
		{[]string{"grant", "submitter", "alice", "acme"},
			"alice may now start crawls for acme (wrote: user:alice submitter organization:acme)",
			"alice は acme のクロールを始められます (書いた: user:alice submitter organization:acme)"},
		{[]string{"grant", "submitter", "alice", "acme"},
			"alice may now start crawls for acme (already there: user:alice submitter organization:acme)",
			"alice は acme のクロールを始められます (もう在った: user:alice submitter organization:acme)"},
		{[]string{"revoke", "submitter", "alice", "acme"},
			"alice may not start crawls for acme (deleted: user:alice submitter organization:acme)",
			"alice は acme のクロールを始められません (消した: user:alice submitter organization:acme)"},
		{[]string{"revoke", "submitter", "alice", "acme"},
			"alice may not start crawls for acme (already gone: user:alice submitter organization:acme)",
			"alice は acme のクロールを始められません (もう無かった: user:alice submitter organization:acme)"},
		{[]string{"grant", "submitter", "alice", "acme"},
			"alice may now start crawls for acme (wrote: user:alice submitter organization:acme)",
			"alice は acme のクロールを始められます (書いた: user:alice submitter organization:acme)"},
		{[]string{"grant", "admin", "alice", "acme"},
			"alice may now start crawls for acme (wrote: user:alice admin organization:acme)",
			"alice は acme のクロールを始められます (書いた: user:alice admin organization:acme)"},
		{[]string{"revoke", "submitter", "alice", "acme"},
			"alice may still start crawls for acme (deleted: user:alice submitter organization:acme; still allowed through another relation)",
			"alice は acme のクロールを始められます (消した: user:alice submitter organization:acme。ほかの関係で許されています)"},
		{[]string{"grant", "submitter", "bob", "contoso"},
			"bob may now start crawls for contoso (wrote: user:bob submitter organization:contoso)",
			"bob は contoso のクロールを始められます (書いた: user:bob submitter organization:contoso)"},
		{[]string{"revoke", "admin", "alice", "acme"},
			"alice may not start crawls for acme (deleted: user:alice admin organization:acme)",
			"alice は acme のクロールを始められません (消した: user:alice admin organization:acme)"},
		{[]string{"revoke", "submitter", "bob", "contoso"}, // back to no tuples, for the second round
			"bob may not start crawls for contoso (deleted: user:bob submitter organization:contoso)",
			"bob は contoso のクロールを始められません (消した: user:bob submitter organization:contoso)"},
	}
	// The same story twice: in English by default, then in
	// Japanese under LANG=ja_JP.UTF-8.
	for _, round := range []struct {
		name string
		env  map[string]string
		ja   bool
	}{{"default locale", english, false}, {"LANG=ja_JP.UTF-8", japanese, true}} {
		for _, s := range steps {
			want := s.en
			if round.ja {
				want = s.ja
			}
			out, errs, code := clitest.Run(t, dir, round.env, append([]string{"fga"}, s.args...)...)
			if code != cmdutil.ExitOK || out != want+"\n" {
				t.Errorf("%s: fga %s: exit %d\n got %q\nwant %q\n%s", round.name, strings.Join(s.args, " "), code, out, want, errs)
			}
		}
	}
	// LC_ALL beats LANG (POSIX), and C is English.
	out, errs, code := clitest.Run(t, dir, map[string]string{"LC_ALL": "C", "LC_MESSAGES": "", "LANG": "ja_JP.UTF-8"}, "fga", "grant", "submitter", "dave", "acme")
	if want := "dave may now start crawls for acme (wrote: user:dave submitter organization:acme)\n"; code != cmdutil.ExitOK || out != want {
		t.Errorf("LC_ALL=C LANG=ja_JP.UTF-8: exit %d\n got %q\nwant %q\n%s", code, out, want, errs)
	}

	// --json is for machines: the same stable English in every locale.
	jsonIn := func(env map[string]string, args ...string) string {
		t.Helper()
		out, errs, code := clitest.Run(t, dir, env, append(append([]string{"fga"}, args...), "--json")...)
		if code != cmdutil.ExitOK {
			t.Fatalf("fga %s --json: exit %d: %s", strings.Join(args, " "), code, errs)
		}
		if strings.ContainsFunc(out, func(r rune) bool { return r > unicode.MaxASCII }) {
			t.Errorf("fga %s --json is not plain English: %s", strings.Join(args, " "), out)
		}
		return out
	}
	enGrant := jsonIn(english, "grant", "admin", "carol", "acme")
	var got map[string]any
	if err := json.Unmarshal([]byte(enGrant), &got); err != nil {
		t.Fatalf("%v: %s", err, enGrant)
	}
	if got["canSubmit"] != true || got["done"] != "written" || got["doneCode"] != "wrote" || got["tuple"] != "user:carol admin organization:acme" || got["action"] != "grant" ||
		got["sentence"] != "carol may now start crawls for acme (wrote: user:carol admin organization:acme)" || got["note"] != nil {
		t.Errorf("--json: %v", got)
	}
	jaRevoke := jsonIn(japanese, "revoke", "admin", "carol", "acme")
	if err := json.Unmarshal([]byte(jaRevoke), &got); err != nil {
		t.Fatalf("%v: %s", err, jaRevoke)
	}
	if got["canSubmit"] != false || got["done"] != "removed" || got["doneCode"] != "deleted" ||
		got["sentence"] != "carol may not start crawls for acme (deleted: user:carol admin organization:acme)" {
		t.Errorf("--json under LANG=ja_JP.UTF-8: %v", got)
	}
	if jaGrant := jsonIn(map[string]string{"LC_ALL": "ja_JP.UTF-8", "LANG": "ja_JP.UTF-8"}, "grant", "admin", "carol", "acme"); jaGrant != enGrant {
		t.Errorf("--json depends on the locale:\n en %s\n ja %s", enGrant, jaGrant)
	}
	// dave is a submitter since the LC_ALL=C step; as admin too, a revoke of
	// submitter leaves him allowed, and the note is a code.
	jsonIn(japanese, "grant", "admin", "dave", "acme")
	note := jsonIn(japanese, "revoke", "submitter", "dave", "acme")
	if err := json.Unmarshal([]byte(note), &got); err != nil {
		t.Fatalf("%v: %s", err, note)
	}
	if got["note"] != "other-relation" || got["canSubmit"] != true || got["done"] != "removed" ||
		got["sentence"] != "dave may still start crawls for acme (deleted: user:dave submitter organization:acme; still allowed through another relation)" {
		t.Errorf("--json of a revoke another relation still allows: %v", got)
	}
}

func dropDB(t *testing.T, dsn string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.AdminURL(t))
	if err != nil {
		t.Logf("drop %s: %v", dsn, err)
		return
	}
	defer conn.Close(ctx)
	name := strings.SplitN(dsn[strings.LastIndexByte(strings.SplitN(dsn, "?", 2)[0], '/')+1:], "?", 2)[0]
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		t.Logf("drop %s: %v", name, err)
	}
}
