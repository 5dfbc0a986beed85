package archives_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
)

// TestArchivesOpen: `ledgerctl archives open` checks can_view like the API
// and prints a link to the viewer whose token the server's key verifies,
// for that archive and that identity; it needs the key (never printed) and
// points at CAPTURE_LEDGER_API_URL or serve's address, or at the external
// viewer; --browser hands the link to $BROWSER.
func TestArchivesOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := clitest.DeployStack(t)
	objects, bucket, dir, env := st.Objects, st.Bucket, st.Dir, st.Env
	task := uuid.NewString()
	key := "org/acme/" + task + "_c0ffee00"
	if err := objects.Put(ctx, bucket, key+".wacz", "application/wacz", []byte("wacz")); err != nil {
		t.Fatal(err)
	}
	if err := objects.Put(ctx, bucket, key+".result.json", "application/json", apptest.Manifest(task, "success", "https://example.com/", bucket, key+".wacz", time.Now())); err != nil {
		t.Fatal(err)
	}
	out, errs, code := clitest.Run(t, dir, env, "archives", "add", key+".result.json", "--as", "carol", "--org", "acme", "--json")
	var added clitest.AddResult
	if code != 0 || json.Unmarshal([]byte(out), &added) != nil || added.Registered != 1 {
		t.Fatalf("add: exit %d: %s %s", code, out, errs)
	}
	id := added.Results[0].ArchiveID
	if _, errs, code := clitest.Run(t, dir, env, "drain"); code != 0 {
		t.Fatalf("drain: exit %d: %s", code, errs)
	}

	// serve will not start without a key unless the dev identity is on.
	port := clitest.FreePort(t)
	env["CAPTURE_LEDGER_API_PORT"] = fmt.Sprint(port)
	if _, errs, code := clitest.Run(t, dir, env, "serve"); code != cmdutil.ExitUsage || !strings.Contains(errs, replay.KeyVar+" is not set") {
		t.Errorf("serve without a key: exit %d: %s", code, errs)
	}

	// Without the key, and with a short one: a usage error naming it, the
	// value never shown.
	_, errs, code = clitest.Run(t, dir, env, "archives", "open", id, "--as", "alice", "--org", "acme")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, replay.KeyVar) {
		t.Errorf("no key: exit %d: %s", code, errs)
	}
	env[replay.KeyVar] = "shortsecret"
	_, errs, code = clitest.Run(t, dir, env, "archives", "open", id, "--as", "alice", "--org", "acme")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, replay.KeyVar) || strings.Contains(errs, "shortsecret") {
		t.Errorf("short key: exit %d: %s", code, errs)
	}

	secret := "the replay key of this test, long enough to sign with"
	env[replay.KeyVar] = secret
	signer, err := replay.NewSigner([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	out, errs, code = clitest.Run(t, dir, env, "archives", "open", id, "--as", "alice", "--org", "acme")
	link := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(link, "http://") || !strings.Contains(link, fmt.Sprintf(".replay.localhost:%d/?source=", port)) || !strings.Contains(errs, "works until") {
		t.Fatalf("open: exit %d: %q %s", code, out, errs)
	}
	if strings.Contains(errs, secret) || strings.Contains(out, secret) {
		t.Error("the key was printed")
	}
	u, _ := url.Parse(link)
	src, _ := url.Parse(u.Query().Get("source"))
	if src.Path != "/wacz/"+id+".wacz" || src.Host != u.Host {
		t.Errorf("source %s", src)
	}
	c, err := signer.Verify(src.Query().Get("t"), time.Now())
	if err != nil || c.ArchiveID != id || c.Label+".replay.localhost:"+strconv.Itoa(port) != u.Host || c.Subject != "alice" || strings.Join(c.Organizations, ",") != "acme" || c.Expires.Before(before.Add(time.Hour-2*time.Second)) || c.Expires.After(before.Add(time.Hour+time.Second)) {
		t.Errorf("token: %+v %v", c, err)
	}

	// serve with the same key reads the archive for the link printed
	// offline (no identity needed: the token is it).
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan string, 1)
	go func() {
		_, errs, _ := clitest.RunCtx(sctx, t, dir, env, nil, "serve")
		done <- errs
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	var res *http.Response
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		req, _ := http.NewRequest("GET", base+src.RequestURI(), nil)
		req.Host = src.Host // the session's origin, as a browser resolving *.localhost reaches it
		req.Header.Set("Range", "bytes=1-2")
		if res, err = http.DefaultClient.Do(req); err == nil {
			break
		}
	}
	if res == nil {
		stop()
		t.Fatalf("serve never answered: %s", <-done)
	}
	read, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusPartialContent || string(read) != "ac" {
		t.Errorf("serve's read of the offline link: %d %q", res.StatusCode, read)
	}
	stop()
	if errs := <-done; strings.Contains(errs, secret) || strings.Contains(errs, src.Query().Get("t")[:20]) {
		t.Errorf("serve logged the key or the token:\n%s", errs)
	}

	// A replay domain of a deployment, another lifetime, as JSON.
	env["CAPTURE_LEDGER_REPLAY_DOMAIN"] = "replay.example.org"
	out, errs, code = clitest.Run(t, dir, env, "archives", "open", id, "--as", "alice", "--org", "acme", "--expires-in", "15m", "--json")
	var body api.ReplayLink
	if code != 0 || json.Unmarshal([]byte(out), &body) != nil || !strings.HasPrefix(body.URL, "https://") || !strings.Contains(body.URL, ".replay.example.org/?source=https%3A%2F%2F") ||
		body.ExpiresAt.Sub(before) < 14*time.Minute || body.ExpiresAt.Sub(before) > 16*time.Minute {
		t.Errorf("json: exit %d: %s %s", code, out, errs)
	}
	delete(env, "CAPTURE_LEDGER_REPLAY_DOMAIN")
	// The viewer origin of old is refused by name.
	env["CAPTURE_LEDGER_REPLAY_ORIGIN"] = "https://viewer.example"
	if _, errs, code := clitest.Run(t, dir, env, "archives", "open", id, "--as", "alice", "--org", "acme"); code != cmdutil.ExitUsage || !strings.Contains(errs, "CAPTURE_LEDGER_REPLAY_ORIGIN") {
		t.Errorf("with the old viewer origin: exit %d %s", code, errs)
	}
	delete(env, "CAPTURE_LEDGER_REPLAY_ORIGIN")

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"outsider", []string{id, "--as", "bob", "--org", "globex"}, cmdutil.ExitFailure, "not found (absent, or bob may not view it)"},
		{"absent", []string{uuid.NewString(), "--as", "alice", "--org", "acme"}, cmdutil.ExitFailure, "not found"},
		{"not a uuid", []string{"nope", "--as", "alice"}, cmdutil.ExitUsage, "ARCHIVE_ID must be a UUID"},
		{"nothing to open", []string{"--as", "alice"}, cmdutil.ExitUsage, "give the ARCHIVE_ID to open, or --crawl"},
		{"both", []string{id, "--crawl", uuid.NewString(), "--as", "alice"}, cmdutil.ExitUsage, "not both"},
		{"crawl not a uuid", []string{"--crawl", "nope", "--as", "alice"}, cmdutil.ExitUsage, "--crawl must be a UUID"},
		{"absent crawl", []string{"--crawl", uuid.NewString(), "--as", "alice", "--org", "acme"}, cmdutil.ExitFailure, "not found (absent, or alice may not view it)"},
		{"no subject", []string{id, "--org", "acme"}, cmdutil.ExitUsage, "--as is required"},
		{"too long", []string{id, "--as", "alice", "--expires-in", "13h"}, cmdutil.ExitUsage, "--expires-in must be between 1m0s and 12h0m0s"},
		{"too short", []string{id, "--as", "alice", "--expires-in", "10s"}, cmdutil.ExitUsage, "--expires-in must be between"},
	} {
		out, errs, code := clitest.Run(t, dir, env, append([]string{"archives", "open"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("%s: exit %d: %q %s (want exit %d saying %s)", tc.name, code, out, errs, tc.code, tc.want)
		}
	}

	// --browser hands the link to $BROWSER.
	got := filepath.Join(t.TempDir(), "opened")
	script := filepath.Join(t.TempDir(), "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s' \"$1\" > "+got+".tmp && mv "+got+".tmp "+got+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	env["BROWSER"] = script
	out, errs, code = clitest.Run(t, dir, env, "archives", "open", id, "--as", "alice", "--org", "acme", "--browser")
	if code != 0 {
		t.Fatalf("--browser: exit %d: %s", code, errs)
	}
	var opened []byte
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if opened, err = os.ReadFile(got); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if string(opened) != strings.TrimSpace(out) {
		t.Errorf("the browser got %q, the link printed is %q", opened, out)
	}
}
