package cmdutil

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestTextLogFormat: one line per record, the time, the padded level, the
// message, then key=value pairs; values with spaces quoted, a newline in a
// message kept on its line; colour only when asked.
func TestTextLogFormat(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	log := slog.New(newTextLogHandler(&b, slog.LevelInfo, false))
	log.Debug("hidden")
	log.Info("Archive API listening on 127.0.0.1:7070", "host", "127.0.0.1", "port", 7070, "crawls", true)
	log.With("crawl", "c1").WithGroup("page").Warn("capture failed\nsecond line", "url", "http://www.demo.localhost/", "error", "status 503 from origin", "empty", "")
	log.Error("x", slog.Group("g", "a", 1), slog.Duration("took", 1500*time.Millisecond))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines, got %d:\n%s", len(lines), b.String())
	}
	want := []string{
		`^\d\d:\d\d:\d\d INFO  Archive API listening on 127\.0\.0\.1:7070  host=127\.0\.0\.1 port=7070 crawls=true$`,
		`^\d\d:\d\d:\d\d WARN  capture failed\\nsecond line  crawl=c1 page\.url=http://www\.demo\.localhost/ page\.error="status 503 from origin" page\.empty=""$`,
		`^\d\d:\d\d:\d\d ERROR x  g\.a=1 took=1\.5s$`,
	}
	for i, re := range want {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("line %d:\n got %q\nwant %s", i, lines[i], re)
		}
	}
	if strings.Contains(b.String(), "\x1b[") {
		t.Errorf("colour without asking: %q", b.String())
	}

	b.Reset()
	slog.New(newTextLogHandler(&b, slog.LevelInfo, true)).Warn("slow", "host", "a")
	if got := b.String(); !strings.Contains(got, "\x1b[1m\x1b[33mWARN \x1b[0m slow") || !strings.Contains(got, "\x1b[2mhost=\x1b[0ma") {
		t.Errorf("coloured line: %q", got)
	}
}

// TestLoggerChoice: JSON on anything but a terminal (unless text is asked
// for, then without colour); on a terminal text, coloured unless NO_COLOR
// is set to anything non-empty; --log-format json wins on a terminal.
func TestLoggerChoice(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) (string, bool) {
		return func(name string) (string, bool) {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == name {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	var b bytes.Buffer
	newLogger(&b, "", "info", env()).Info("hello", "port", 7070)
	var rec map[string]any
	if err := json.Unmarshal(b.Bytes(), &rec); err != nil || rec["msg"] != "hello" || rec["port"] != float64(7070) {
		t.Fatalf("not a terminal: want JSON, got %q (%v)", b.String(), err)
	}
	b.Reset()
	newLogger(&b, LogText, "info", env()).Info("hello")
	if got := b.String(); !strings.Contains(got, "INFO  hello") || strings.Contains(got, "\x1b[") {
		t.Fatalf("text asked, not a terminal: %q", got)
	}

	tty := testenv.OpenPTY(t)
	for i, tc := range []struct {
		format string
		env    func(string) (string, bool)
		want   string // json, color, plain
	}{
		{"", env(), "color"},
		{"", env("NO_COLOR", "1"), "plain"},
		{"", env("NO_COLOR", "0"), "plain"}, // any non-empty value
		{"", env("NO_COLOR", ""), "color"},  // empty is unset
		{LogText, env(), "color"},
		{LogJSON, env(), "json"},
	} {
		h := newLogger(tty, tc.format, "info", tc.env).Handler()
		got := "json"
		if th, ok := h.(*textLogHandler); ok {
			got = map[bool]string{true: "color", false: "plain"}[th.color]
		} else if _, ok := h.(*slog.JSONHandler); !ok {
			got = "?"
		}
		if got != tc.want {
			t.Errorf("case %d: terminal, format %q: %s, want %s", i, tc.format, got, tc.want)
		}
	}
	if !slog.New(newTextLogHandler(&b, slog.LevelWarn, false)).Enabled(context.Background(), slog.LevelWarn) {
		t.Error("level")
	}
}
