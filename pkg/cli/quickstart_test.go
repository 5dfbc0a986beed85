package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestQuickStart follows the README's quick start: the ledger prepared as
// `make run` prepares it (migrate up, fga deploy) and served with the dev
// identity; a capture server's files in the bucket; `archives add --prefix`,
// `drain`, `archives list`; then the console and the API as alice of acme
// list the archive and its link downloads the exact bytes, while someone of
// another organization sees nothing.
func TestQuickStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.Database(t)
	objects, bucket, _ := testenv.Bucket(t)
	dir := t.TempDir()
	port := clitest.FreePort(t)
	env := clitest.StackEnv(t, dsn, bucket)
	env["CAPTURE_LEDGER_FGA_DATASTORE_URI"] = testenv.EmptyDatabase(t)
	env["CAPTURE_LEDGER_API_PORT"] = fmt.Sprint(port)
	env["CAPTURE_LEDGER_DRAIN_INTERVAL_MS"] = "200"

	if _, errs, code := clitest.Run(t, dir, env, "migrate", "up"); code != 0 {
		t.Fatalf("migrate up: exit %d: %s", code, errs)
	}
	out, errs, code := clitest.Run(t, dir, env, "fga", "deploy")
	if code != 0 || !strings.Contains(out, "CAPTURE_LEDGER_FGA_MODEL_ID=") {
		t.Fatalf("fga deploy: exit %d: %s %s", code, out, errs)
	}

	// What a capture server leaves in the bucket for one page.
	task := uuid.NewString()
	wacz := []byte("PK wacz bytes of " + task)
	waczKey := "captures/" + task + "_c0ffee00.wacz"
	if err := objects.Put(ctx, bucket, waczKey, "application/wacz", wacz); err != nil {
		t.Fatal(err)
	}
	if err := objects.Put(ctx, bucket, "captures/"+task+"_c0ffee00.result.json", "application/json",
		apptest.Manifest(task, "success", "https://www.example.com/", bucket, waczKey, time.Now())); err != nil {
		t.Fatal(err)
	}

	out, errs, code = clitest.Run(t, dir, env, "archives", "add", "--prefix", "captures/", "--org", "acme", "--as", "alice", "--json")
	if code != 0 || !strings.Contains(out, `"registered":1`) {
		t.Fatalf("archives add: exit %d: %s %s", code, out, errs)
	}
	if _, errs, code := clitest.Run(t, dir, env, "drain"); code != 0 {
		t.Fatalf("drain: exit %d: %s", code, errs)
	}
	out, errs, code = clitest.Run(t, dir, env, "archives", "list", "--as", "alice", "--org", "acme", "--json")
	var list struct {
		Archives []struct {
			ID        string `json:"id"`
			SourceURL string `json:"sourceUrl"`
		}
	}
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list.Archives) != 1 || list.Archives[0].SourceURL != "https://www.example.com/" {
		t.Fatalf("archives list: exit %d: %s %s", code, out, errs)
	}
	archiveID := list.Archives[0].ID

	// make run's serve: dev identity on loopback.
	env["CAPTURE_LEDGER_DEV_IDENTITY"] = "1"
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan int, 1)
	go func() {
		_, _, code := clitest.RunCtx(sctx, t, dir, env, nil, "serve")
		done <- code
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	as := func(method, path, subject, org string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		req.Header.Set("X-Capture-ledger-Subject", subject)
		req.Header.Set("X-Capture-ledger-Organizations", org)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if code, _ := as("GET", "/healthz", "", ""); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("serve never answered (exit %d)", <-done)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body := as("GET", "/", "", ""); code != 200 || !strings.Contains(string(body), "<html") {
		t.Errorf("console: %d", code)
	}
	if code, body := as("GET", "/api/archives", "alice", "acme"); code != 200 || !strings.Contains(string(body), archiveID) {
		t.Errorf("the console's list as alice of acme: %d %s", code, body)
	}
	if code, body := as("GET", "/api/archives", "carol", "contoso"); code != 200 || strings.Contains(string(body), archiveID) {
		t.Errorf("another organization's list: %d %s", code, body)
	}
	code, body := as("POST", "/api/archives/"+archiveID+"/url", "alice", "acme")
	var u struct{ URL string }
	if err := json.Unmarshal(body, &u); code != 200 || err != nil || u.URL == "" {
		t.Fatalf("the console's link: %d %s", code, body)
	}
	res, err := http.Get(u.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(got) != string(wacz) {
		t.Errorf("download: %d %q", res.StatusCode, got)
	}
	if code, body := as("POST", "/api/archives/"+archiveID+"/url", "carol", "contoso"); code != 404 || strings.TrimSpace(string(body)) != `{"error":"not found"}` {
		t.Errorf("another organization's link: %d %s", code, body)
	}
	stop()
	if code := <-done; code != 0 {
		t.Errorf("serve exit %d", code)
	}
}
