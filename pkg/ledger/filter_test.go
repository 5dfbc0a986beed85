package ledger

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseArchiveFilter(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	f, err := ParseArchiveFilter(map[string][]string{
		"crawl": {"0F1E2D3C-4B5A-4978-8695-A4B3C2D1E0F9"}, "host": {"Example.COM"},
		"from": {"2026-11-21"}, "to": {"2026-11-21"}, "q": {"プラム"},
	}, true)
	want := ArchiveFilter{CrawlID: "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9", Host: "example.com", From: day, To: day.AddDate(0, 0, 1), Text: "プラム"}
	if err != nil || f != want {
		t.Fatalf("%+v %v, want %+v", f, err, want)
	}
	f, err = ParseArchiveFilter(map[string][]string{"to": {"2026-11-21T09:00:00+09:00"}, "host": {"[::1]"}, "crawl": {""}}, false)
	if err != nil || !f.To.Equal(time.Date(2026, 11, 21, 0, 0, 0, 1000, time.UTC)) || f.Host != "[::1]" || f.CrawlID != "" {
		t.Fatalf("%+v %v", f, err)
	}
	if f, err := ParseArchiveFilter(nil, true); err != nil || !f.IsZero() || f.Key() != "" {
		t.Fatalf("no filter: %+v %v", f, err)
	}
	for _, tc := range []struct {
		values map[string][]string
		field  string
	}{
		{map[string][]string{"q": {"x"}}, "q"}, // not a search filter
		{map[string][]string{"host": {"a b"}}, "host"},
		{map[string][]string{"host": {"[::1"}}, "host"},
		{map[string][]string{"host": {"ex\u00e4mple.com"}}, "host"},
		{map[string][]string{"host": {strings.Repeat("a", 256)}}, "host"},
		{map[string][]string{"crawl": {"\xff"}}, "crawl"},
		{map[string][]string{"from": {"2026-11-21T25:00:00Z"}}, "from"},
		{map[string][]string{"to": {"1 Nov 2026"}}, "to"},
		{map[string][]string{"from": {"2026-11-22T00:00:00Z"}, "to": {"2026-11-21T23:59:59Z"}}, "to"},
	} {
		_, err := ParseArchiveFilter(tc.values, false)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%v: %v, want a field error on %s", tc.values, err, tc.field)
		}
	}
	a := ArchiveFilter{Host: "a", Text: "b"}
	b := ArchiveFilter{Host: "a\x00text\x00b"}
	if a.Key() == b.Key() {
		t.Error("two filters share a key")
	}
}

// FuzzParseArchiveFilter: any value either parses into a filter of clean
// values or is refused with an error naming its field; never a panic, and
// never a control character or invalid UTF-8 let through.
func FuzzParseArchiveFilter(f *testing.F) {
	for _, s := range []string{"", "example.com", "[::1]", "2026-11-21", "2026-11-21T09:00:00Z", "\x00", "\xed\xa0\x80", "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9", "9999-12-31"} {
		f.Add("host", s)
		f.Add("from", s)
		f.Add("to", s)
		f.Add("crawl", s)
		f.Add("q", s)
	}
	f.Fuzz(func(t *testing.T, field, value string) {
		got, err := ParseArchiveFilter(map[string][]string{field: {value}}, true)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != field {
				t.Fatalf("%q=%q: %v names no field or another", field, value, err)
			}
			return
		}
		for _, v := range []string{got.CrawlID, got.Host, got.Text} {
			if !utf8.ValidString(v) || strings.ContainsAny(v, "\x00\r\n") {
				t.Fatalf("%q=%q let through %q", field, value, v)
			}
		}
		if !got.From.IsZero() && !got.To.IsZero() && !got.From.Before(got.To) {
			t.Fatalf("%q=%q: empty range %+v", field, value, got)
		}
	})
}
