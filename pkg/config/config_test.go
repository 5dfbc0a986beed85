package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite golden files")

// clearEnv unsets every variable of the table for the test.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, v := range Variables {
		t.Setenv(v.Name, "")
		os.Unsetenv(v.Name)
	}
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestPrecedence(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	write(t, dir, ".env", "CAPTURE_LEDGER_S3_BUCKET=from-env\nCAPTURE_LEDGER_S3_REGION=env-region\nLOG_LEVEL=debug\nCAPTURE_LEDGER_API_PORT=1111\n")
	write(t, dir, ".env.local", "CAPTURE_LEDGER_S3_BUCKET=from-local\nLOG_LEVEL=\nCAPTURE_LEDGER_API_PORT=2222\n")
	t.Setenv("CAPTURE_LEDGER_S3_REGION", "shell-region")
	t.Setenv("CAPTURE_LEDGER_OIDC_AUDIENCE", "") // empty in the shell = unset: the default stays
	t.Setenv("CAPTURE_LEDGER_API_PORT", "3333")

	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	BindFlags(fs, "CAPTURE_LEDGER_API_PORT", "DATABASE_URL")
	if err := fs.Parse([]string{"--port", "4444"}); err != nil {
		t.Fatal(err)
	}
	c, err := Load(dir, fs)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"CAPTURE_LEDGER_S3_BUCKET":     "from-local",     // .env.local > .env
		"CAPTURE_LEDGER_S3_REGION":     "shell-region",   // shell > files
		"LOG_LEVEL":                    "info",           // empty in .env.local unsets .env's value; default applies
		"CAPTURE_LEDGER_OIDC_AUDIENCE": "capture-ledger", // default
		"CAPTURE_LEDGER_API_PORT":      "4444",           // flag > shell
		"DATABASE_URL":                 "",               // unset flag does not count
	} {
		if got := c.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	wantNote := "config: .env (4 names), .env.local (3 names) — .env.local wins for CAPTURE_LEDGER_S3_BUCKET, LOG_LEVEL, CAPTURE_LEDGER_API_PORT (a value set in the shell beats the files)"
	if got := c.Note(); got != wantNote {
		t.Errorf("note:\n got %s\nwant %s", got, wantNote)
	}
	if strings.Contains(c.Note(), "from-local") {
		t.Error("note leaks a value")
	}
}

func TestNoteWithoutFiles(t *testing.T) {
	clearEnv(t)
	c, err := Load(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Note(); got != "config: no env file was read — every value comes from the shell" {
		t.Error(got)
	}
	dir := t.TempDir()
	write(t, dir, ".env", "A=1\n")
	c, _ = Load(dir, nil)
	if got := c.Note(); got != "config: .env (1 name)" {
		t.Error(got)
	}
}

func TestRequireNamesAllMissing(t *testing.T) {
	clearEnv(t)
	t.Setenv("CAPTURE_LEDGER_S3_BUCKET", "b")
	c, err := Load(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Require(Required()...)
	var m *MissingError
	if !errors.As(err, &m) {
		t.Fatalf("want MissingError, got %v", err)
	}
	msg := err.Error()
	for _, n := range Required() {
		if n == "CAPTURE_LEDGER_S3_BUCKET" {
			if strings.Contains(msg, n) {
				t.Errorf("%s is set but reported missing", n)
			}
			continue
		}
		if !strings.Contains(msg, n) {
			t.Errorf("missing %s not named in %q", n, msg)
		}
	}
	if !strings.Contains(msg, "cp -n .env.example .env") || !strings.Contains(msg, "ledgerctl fga deploy") {
		t.Errorf("hints missing: %q", msg)
	}
	// The FGA ids are never told to be copied from the template.
	for _, line := range strings.Split(msg, "\n") {
		if strings.Contains(line, "FGA_STORE_ID") && strings.Contains(line, "cp -n") {
			t.Errorf("FGA id sent to the template: %q", line)
		}
	}
}

func TestSettingsValidation(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want []string // substrings of the error; none means valid
	}{
		{"defaults are valid", nil, nil},
		{"port out of range", map[string]string{"CAPTURE_LEDGER_API_PORT": "70000"}, []string{`CAPTURE_LEDGER_API_PORT="70000"`, "between 1 and 65535"}},
		{"port not a number", map[string]string{"CAPTURE_LEDGER_API_PORT": "http"}, []string{"CAPTURE_LEDGER_API_PORT"}},
		{"unknown format", map[string]string{"CAPTURE_LEDGER_CAPTURE_FORMATS": "wacz, gif ,PDF"}, []string{"has unknown formats: gif, pdf (known: png, webp, html, links, mhtml, wacz)"}},
		{"only commas", map[string]string{"CAPTURE_LEDGER_CAPTURE_FORMATS": " , ,"}, []string{"is empty: at least one capture format is required"}},
		{"signing without wacz", map[string]string{"CAPTURE_LEDGER_CAPTURE_FORMATS": "png", "CAPTURE_LEDGER_CAPTURE_SIGNING": "1"}, []string{"CAPTURE_LEDGER_CAPTURE_SIGNING requires wacz"}},
		{"signing with the built-in capturer", map[string]string{"CAPTURE_LEDGER_CAPTURE_SIGNING": "1"}, []string{"CAPTURE_LEDGER_CAPTURE_SIGNING", "the built-in capturer does not sign", "CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS"}},
		{"signing with browserhive", map[string]string{"CAPTURE_LEDGER_CAPTURE_SIGNING": "1", "CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS": "http://bh1:8080"}, nil},
		{"signing with windmill", map[string]string{"CAPTURE_LEDGER_CAPTURE_SIGNING": "1", "CAPTURE_LEDGER_CRAWL_WEBHOOK_URL": "http://w/x", "CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN": "t"}, nil},
		{"webhook url alone", map[string]string{"CAPTURE_LEDGER_CRAWL_WEBHOOK_URL": "http://w/x"}, []string{"must be set together"}},
		{"webhook token alone", map[string]string{"CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN": "t"}, []string{"must be set together"}},
		{"webhook pair", map[string]string{"CAPTURE_LEDGER_CRAWL_WEBHOOK_URL": "http://w/x", "CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN": "t"}, nil},
		{"dev identity true", map[string]string{"CAPTURE_LEDGER_DEV_IDENTITY": "true"}, []string{`CAPTURE_LEDGER_DEV_IDENTITY="true"`}},
		{"browserhive endpoints", map[string]string{"CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS": "http://bh1:8080, https://bh2/"}, nil},
		{"browserhive endpoint not a url", map[string]string{"CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS": "http://bh1:8080,bh2:8080"}, []string{"CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS", `"bh2:8080" is not one`}},
		{"crawl delay cap too small", map[string]string{"CAPTURE_LEDGER_CRAWL_DELAY_MAX_MS": "10"}, []string{"CAPTURE_LEDGER_CRAWL_DELAY_MAX_MS"}},
		{"endpoint not a url", map[string]string{"CAPTURE_LEDGER_S3_ENDPOINT": "localhost:8333"}, []string{"CAPTURE_LEDGER_S3_ENDPOINT"}},
		{"two problems at once", map[string]string{"CAPTURE_LEDGER_API_PORT": "0", "LOG_LEVEL": "loud"}, []string{"CAPTURE_LEDGER_API_PORT", "LOG_LEVEL"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, err := Load(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Settings()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("want an error")
			}
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Errorf("want InvalidError in %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestSettingsParsesValues(t *testing.T) {
	clearEnv(t)
	t.Setenv("DATABASE_URL", "postgres://u:p@h:5432/ledger?sslmode=disable")
	t.Setenv("CAPTURE_LEDGER_CAPTURE_FORMATS", " WACZ,links ")
	t.Setenv("CAPTURE_LEDGER_S3_FORCE_PATH_STYLE", "true")
	c, _ := Load(t.TempDir(), nil)
	s, err := c.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if !s.CaptureFormats["wacz"] || !s.CaptureFormats["links"] || len(s.CaptureFormats) != 2 {
		t.Errorf("formats %v", s.CaptureFormats)
	}
	if !s.S3ForcePathStyle || s.APIPort != 7070 || s.DrainInterval.Milliseconds() != 5000 {
		t.Errorf("settings %+v", s)
	}
	if s.FGADatastoreURI != "postgres://u:p@h:5432/ledger_fga?sslmode=disable" {
		t.Errorf("datastore default %q", s.FGADatastoreURI)
	}
}

func TestParseEnvFile(t *testing.T) {
	f, err := ParseEnvFile(".env", []byte("\ufeff# comment\n\nexport A=1\nB = \"two words\" # c\nC='x # y'\nD=plain # trailing\nE=\nA=3\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "3", "B": "two words", "C": "x # y", "D": "plain", "E": ""}
	for k, v := range want {
		if f.Values[k] != v {
			t.Errorf("%s = %q, want %q", k, f.Values[k], v)
		}
	}
	if strings.Join(f.Names, ",") != "A,B,C,D,E" {
		t.Errorf("names %v", f.Names)
	}
	for _, bad := range []string{"not an assignment\n", "A=\"open\n", "1A=x\n", "A='x' y\n"} {
		if _, err := ParseEnvFile(".env", []byte(bad)); err == nil || !strings.Contains(err.Error(), ".env:1") {
			t.Errorf("%q: want an error naming .env:1, got %v", bad, err)
		}
	}
}

func TestUpsertEnvLocalKeepsOtherLines(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".env.local", "# mine\nKEEP=1\nCAPTURE_LEDGER_FGA_STORE_ID=old\nCAPTURE_LEDGER_FGA_STORE_ID=older\n")
	write(t, dir, ".env", "UNTOUCHED=1\n")
	if _, err := UpsertEnvLocal(dir, map[string]string{"CAPTURE_LEDGER_FGA_STORE_ID": "s1", "CAPTURE_LEDGER_FGA_MODEL_ID": "m1"}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, ".env.local"))
	want := "# mine\nKEEP=1\nCAPTURE_LEDGER_FGA_STORE_ID=s1\nCAPTURE_LEDGER_FGA_MODEL_ID=m1\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	env, _ := os.ReadFile(filepath.Join(dir, ".env"))
	if string(env) != "UNTOUCHED=1\n" {
		t.Error(".env was changed")
	}
	if _, err := UpsertEnvLocal(dir, map[string]string{"X": "a\nB=evil"}); err == nil {
		t.Error("a value with a line break must be refused")
	}
}

// golden compares want with the file at path (relative to the repo root),
// rewriting it under -update.
func golden(t *testing.T, path, want string) {
	t.Helper()
	full := filepath.Join("..", "..", path)
	if *update {
		if err := os.WriteFile(full, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(full)
	if err != nil {
		t.Fatalf("%s: %v (run `make generate`)", path, err)
	}
	if string(got) != want {
		t.Errorf("%s is stale: run `make generate`", path)
	}
}

func TestGoldenEnvExample(t *testing.T)       { golden(t, ".env.example", EnvExample()) }
func TestGoldenConfigurationDoc(t *testing.T) { golden(t, "docs/configuration.md", Markdown()) }

// TestDriftEnvExample checks, both ways, that .env.example declares exactly
// the variables the code reads: every CAPTURE_LEDGER_* name written in the
// Go sources is in the table, and every name in the table is read somewhere
// besides the table itself.
func TestDriftEnvExample(t *testing.T) {
	data, err := os.ReadFile("../../.env.example")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#? ?([A-Z][A-Z0-9_]+)=`).FindAllStringSubmatch(string(data), -1) {
		declared[m[1]] = true
	}
	inTable := map[string]bool{}
	for _, v := range Variables {
		inTable[v.Name] = true
		if !declared[v.Name] {
			t.Errorf(".env.example lacks %s", v.Name)
		}
	}
	for n := range declared {
		if !inTable[n] {
			t.Errorf(".env.example declares %s, which the code does not read", n)
		}
	}
	used := map[string]bool{}
	name := regexp.MustCompile(`\bCAPTURE_LEDGER_[A-Z0-9_]*[A-Z0-9]\b`)
	err = filepath.Walk("../..", func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() && (info.Name() == ".git" || info.Name() == ".state" || info.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, "config/spec.go") || strings.HasSuffix(path, "config/docs.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range name.FindAllString(string(src), -1) {
			if !inTable[n] && Removed[n] == "" {
				t.Errorf("%s mentions %s, which is not in pkg/config/spec.go", path, n)
			}
			used[n] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var unread []string
	for n := range inTable {
		if strings.HasPrefix(n, "CAPTURE_LEDGER_") && !used[n] {
			unread = append(unread, n)
		}
	}
	sort.Strings(unread)
	// Settings() reads every variable by name in config.go, so an unread one
	// means a variable was added to the table and never wired.
	if len(unread) > 0 {
		t.Errorf("in the table but read nowhere: %v", unread)
	}
}

func FuzzParseEnvFile(f *testing.F) {
	for _, s := range []string{"A=1\n", "export B='x'\n", "C=\"a\\nb\" # c\n", "# only\n", "bad line", "D='unterminated", "\ufeffE=1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ef, err := ParseEnvFile(".env", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), ".env") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(ef.Names) != len(ef.Values) {
			t.Fatalf("names %d != values %d", len(ef.Names), len(ef.Values))
		}
		for _, n := range ef.Names {
			if !assignment.MatchString(n + "=") {
				t.Fatalf("bad name %q", n)
			}
		}
	})
}
