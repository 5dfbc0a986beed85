package runner

import (
	"math"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
)

func TestEffectiveDelay(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	withDelay := func(d time.Duration) Robots { return Robots{HasDelay: true, CrawlDelay: d} }
	for _, c := range []struct {
		name         string
		setting, max time.Duration
		robots       Robots
		want         time.Duration
		wantSource   string
	}{
		{"no robots delay", 2000 * ms, time.Minute, Robots{}, 2000 * ms, SourceSetting},
		{"shorter crawl-delay never shortens the setting", 2000 * ms, time.Minute, withDelay(time.Second), 2000 * ms, SourceSetting},
		{"longer crawl-delay wins", 1000 * ms, time.Minute, withDelay(3 * time.Second), 3000 * ms, SourceCrawlDelay},
		{"crawl-delay above the cap is cut to it", 1000 * ms, 10 * time.Second, withDelay(time.Hour), 10 * time.Second, SourceCap},
		{"the cap never cuts below the setting", 20 * time.Second, 10 * time.Second, withDelay(time.Hour), 20 * time.Second, SourceSetting},
		{"an overflowing crawl-delay is capped", 0, time.Minute, withDelay(math.MaxInt64), time.Minute, SourceCap},
		{"fractions round up to the millisecond", 0, time.Minute, withDelay(1500500 * time.Microsecond), 1501 * ms, SourceCrawlDelay},
	} {
		got, src := EffectiveDelay(c.setting, c.robots, c.max)
		if got != c.want || src != c.wantSource {
			t.Errorf("%s: got %s (%s), want %s (%s)", c.name, got, src, c.want, c.wantSource)
		}
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	s := time.Second
	for _, c := range []struct {
		delay, retryAfter, max, want time.Duration
	}{
		{0, 0, time.Minute, s},                             // no Retry-After, no delay: a second
		{3 * s, 0, time.Minute, 6 * s},                     // twice the delay
		{s, 30 * s, time.Minute, 30 * s},                   // Retry-After honoured
		{s, time.Hour, time.Minute, time.Minute},           // capped
		{2 * time.Minute, s, time.Minute, 2 * time.Minute}, // never below the delay
	} {
		if got := Backoff(c.delay, c.retryAfter, c.max); got != c.want {
			t.Errorf("Backoff(%s, %s, %s) = %s, want %s", c.delay, c.retryAfter, c.max, got, c.want)
		}
	}
}

// TestPageReportIsAlwaysReportable: whatever a backend answers, the page's
// result passes the level report's checks and holds clean text.
func TestPageReportIsAlwaysReportable(t *testing.T) {
	t.Parallel()
	const crawlID = "9072b625-0c1e-4b5e-9d8e-3f1a2b3c4d5e"
	now := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	task := "2B9E63EC-1C1E-4B5E-9D8E-3F1A2B3C4D5E"
	for _, c := range []struct {
		name  string
		out   CaptureOutcome
		check func(crawl.PageReport) string
	}{
		{"success", CaptureOutcome{TaskID: task, ManifestLocation: "s3://b/k.result.json", Captured: true, LinksLocation: "s3://b/k.links.json", FinalURL: "HTTP://Example.com:80/x#frag"},
			func(p crawl.PageReport) string {
				if p.Status != crawl.StatusCaptured || p.TaskID != strings.ToLower(task) || p.FinalURL != "http://example.com/x" {
					return "not captured as given"
				}
				return ""
			}},
		{"no manifest outcome", CaptureOutcome{TaskID: task, Captured: true},
			func(p crawl.PageReport) string {
				if p.ManifestError == "" {
					return "a task id without a manifest outcome"
				}
				return ""
			}},
		{"task id not a uuid", CaptureOutcome{TaskID: "task-7", ManifestLocation: "s3://b/k", Captured: true},
			func(p crawl.PageReport) string {
				if p.TaskID != "" || p.ManifestLocation != "" || p.Status != crawl.StatusFailed {
					return "kept a task id that is not a UUID"
				}
				return ""
			}},
		{"hostile strings", CaptureOutcome{TaskID: task, ManifestLocation: "s3://b/\x00k", Failure: "bad\x00\xffreason" + strings.Repeat("é", 3000), FinalURL: "javascript:alert(1)"},
			func(p crawl.PageReport) string {
				if p.ManifestLocation != "" || p.ManifestError == "" || strings.ContainsRune(p.SkipReason, 0) ||
					!utf8.ValidString(p.SkipReason) || utf8.RuneCountInString(p.SkipReason) > maxText {
					return "unclean text kept"
				}
				return ""
			}},
		{"refused, no task", CaptureOutcome{Failure: "400 ValidationException: url"},
			func(p crawl.PageReport) string {
				if p.TaskID != "" || p.ManifestError != "" || p.Status != crawl.StatusFailed {
					return "a manifest outcome without a task"
				}
				return ""
			}},
	} {
		p := pageReport("https://example.com/", crawlID, c.out, now, now.Add(time.Second))
		if msg := c.check(p); msg != "" {
			t.Errorf("%s: %s: %+v", c.name, msg, p)
		}
		if err := (crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{p}}).Validate(); err != nil {
			t.Errorf("%s: the report refuses the result: %v", c.name, err)
		}
	}
}

func TestParseRobots(t *testing.T) {
	t.Parallel()
	u := func(s string) *url.URL {
		v, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	body := []byte("Disallow: /before-any-agent\n" + // ignored, not fatal
		"User-agent: *\nDisallow: /private\nCrawl-delay: abc\nCrawl-delay: 2\n\n" +
		"User-agent: LedgerCTL\nDisallow: /ours\nAllow: /ours/open\n")
	r := ParseRobots(200, body, "ledgerctl")
	if r.Outcome != RobotsFetched {
		t.Fatalf("outcome %s (%s)", r.Outcome, r.Error)
	}
	for path, want := range map[string]bool{"/private": true, "/ours": false, "/ours/open": true, "/ours?q=1": false, "/": true} {
		if got := r.Allowed(u("https://example.com" + path)); got != want {
			t.Errorf("our group, %s: allowed %v, want %v", path, got, want)
		}
	}
	if r.HasDelay {
		t.Errorf("our group has no Crawl-delay, got %s", r.CrawlDelay)
	}
	star := ParseRobots(200, body, "otherbot")
	if star.Allowed(u("https://example.com/private/x")) || !star.HasDelay || star.CrawlDelay != 2*time.Second {
		t.Errorf("the * group: %+v", star)
	}
	for _, status := range []int{404, 403, 500, 301} {
		if r := ParseRobots(status, []byte("User-agent: *\nDisallow: /"), "ledgerctl"); r.Outcome != RobotsAbsent || !r.Allowed(u("https://example.com/")) {
			t.Errorf("status %d: %+v, want no rules", status, r)
		}
	}
}

// FuzzParseRobots: any robots.txt body reads without panicking, and a body
// that cannot be read means no rules.
func FuzzParseRobots(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /private\nCrawl-delay: 3\n"), "/private/x")
	f.Add([]byte("User-agent: ledgerctl\nAllow: /$\nDisallow: /*.php$\n"), "/index.php?x=1")
	f.Add([]byte("Crawl-delay: 1e400\nUser-agent: *\nCrawl-delay: 1e300\n"), "/")
	f.Add([]byte("\x00\xff\xfe"), "/")
	f.Add([]byte("User-agent: *\r\nDisallow: /a\rDisallow: /b"), "/b")
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		r := ParseRobots(200, body, "ledgerctl")
		u, err := url.Parse("https://example.com/" + strings.TrimPrefix(path, "/"))
		if err != nil {
			return
		}
		allowed := r.Allowed(u)
		if r.Outcome != RobotsFetched && !allowed {
			t.Fatalf("outcome %s disallowed %s", r.Outcome, path)
		}
		if r.HasDelay && r.CrawlDelay <= 0 {
			t.Fatalf("a Crawl-delay of %s", r.CrawlDelay)
		}
		if d, _ := EffectiveDelay(0, r, time.Minute); d < 0 || d > time.Minute {
			t.Fatalf("effective delay %s out of bounds", d)
		}
	})
}
