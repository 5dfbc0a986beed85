package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/replay"
)

// stop stops a test whose tool `make test` installs is missing: fatally
// under CI, else a skip.
func stop(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// Chromium is the path of the Chromium the browser tests drive
// (CAPTURE_LEDGER_CHROMIUM_PATH, else chromium on PATH), or stops the test.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CAPTURE_LEDGER_CHROMIUM_PATH"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		stop(t, "no Chromium (apt-get install -y chromium, or set CAPTURE_LEDGER_CHROMIUM_PATH)")
	}
	return p
}

// ReplayViewer is the folder holding ReplayWeb.page's files
// (LEDGER_TEST_REPLAY_VIEWER_DIR, else where `make replay-viewer` puts them
// in this checkout), or stops the test.
func ReplayViewer(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("LEDGER_TEST_REPLAY_VIEWER_DIR")
	if dir == "" {
		_, here, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(here), "..", "..", ".state", "replay", "replaywebpage-2.5.3")
	}
	if !replay.ViewerInstalled(dir) {
		stop(t, "ReplayWeb.page is not in %s: run `make replay-viewer` (or set LEDGER_TEST_REPLAY_VIEWER_DIR)", dir)
	}
	return dir
}

// ReplayedFramesJS is a JavaScript function expression that, called with a
// function of a document, runs it on each archived page ReplayWeb.page
// shows in the tab (same-origin frames inside open shadow roots, whose
// address holds "mp_/") and joins what it returns with newlines:
//
//	ReplayedFramesJS + `(function (d) { return d.body.innerText; })`
const ReplayedFramesJS = `(function (each) {
  var out = [];
  function walk(root) {
    var els = root.querySelectorAll("*");
    for (var i = 0; i < els.length; i++) {
      var e = els[i];
      if (e.shadowRoot) { walk(e.shadowRoot); }
      if (e.tagName === "IFRAME") {
        try {
          var d = e.contentDocument;
          if (!d) { continue; }
          if (String(d.location).indexOf("mp_/") >= 0 && d.body) { out.push(each(d)); }
          walk(d);
        } catch (x) {}
      }
    }
  }
  walk(document);
  return out.join("\n");
})`

// BrowserTab starts a headless Chromium (Chromium(t)) for the test, with
// extra options, and returns a tab whose context ends after timeout.
func BrowserTab(t testing.TB, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Chromium(t)), chromedp.UserDataDir(t.TempDir()), chromedp.NoSandbox, chromedp.DisableGPU)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, extra...)...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTime := context.WithTimeout(alloc, timeout)
	t.Cleanup(cancelTime)
	tab, cancelTab := chromedp.NewContext(ctx)
	t.Cleanup(cancelTab)
	return tab
}

// PollReplayed evaluates probe (a ReplayedFramesJS expression) in tab every
// half second until done accepts the first archived page's answer or
// timeout passes, and returns the last such answer ("" when no archived
// page answered). ReplayWeb.page's first load in a fresh profile sometimes
// never shows its frame; a reload does, so while nothing answers it
// reloads once after 12 s and again after 30 s.
func PollReplayed(tab context.Context, probe string, timeout time.Duration, done func(first string) bool) string {
	start := time.Now()
	last, reloads := "", 0
	for time.Since(start) < timeout {
		raw, err := chromedp.Run(tab, chromedp.Evaluate[string](probe))
		if err == nil && raw == "" && ((reloads == 0 && time.Since(start) > 12*time.Second) || (reloads == 1 && time.Since(start) > 30*time.Second)) {
			reloads++
			_, _ = chromedp.Run(tab, chromedp.Reload())
			continue
		}
		if err == nil && raw != "" {
			last, _, _ = strings.Cut(raw, "\n")
			if done(last) {
				return last
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return last
}
