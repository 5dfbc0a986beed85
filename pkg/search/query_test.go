package search_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/search"
)

func TestParseQuery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw     string
		want    string // Query.String(), or the error's reason
		english []bool
	}{
		{"レスポンシブ", "レスポンシブ", []bool{false}},
		{"  running   shoes ", "running shoes", []bool{true, true}},
		{"東京\u3000天気", "東京 天気", []bool{false, false}},
		{`"responsive  web design" layout`, `"responsive web design" layout`, []bool{true, true}},
		{`“東京 タワー”`, `"東京 タワー"`, []bool{false}},
		{`"unclosed phrase`, `"unclosed phrase"`, []bool{true}},
		{"JSON形式", "JSON形式", []bool{false}},
		{"the beatles", "beatles", []bool{true}},
		{"the who", "the who", []bool{true, true}},
		{"!!! ??? responsive", "responsive", []bool{true}},
		{"tab\tand\nnewline", "tab newline", []bool{true, true}},
		{"", "must not be empty", nil},
		{"   \u3000 ", "must not be empty", nil},
		{"!!! ...", "has nothing to search for (only punctuation)", nil},
		{"nul\x00byte", "must not contain control characters", nil},
		{"bell\x07", "must not contain control characters", nil},
		{"bad \xff utf8", "must be valid UTF-8", nil},
		{strings.Repeat("a", 257), "must NOT have more than 256 characters", nil},
		{strings.Repeat("東", 256), strings.Repeat("東", 256), []bool{false}},
		{strings.Repeat("w ", 17), "must NOT have more than 16 words", nil},
	} {
		q, err := search.ParseQuery(tc.raw)
		if tc.english == nil {
			var qe *search.QueryError
			if !errors.As(err, &qe) || qe.Reason != tc.want {
				t.Errorf("ParseQuery(%q): %v, want the error %q", tc.raw, err, tc.want)
			}
			continue
		}
		if err != nil || q.String() != tc.want {
			t.Errorf("ParseQuery(%q) = %q, %v; want %q", tc.raw, q.String(), err, tc.want)
			continue
		}
		for i, term := range q.Terms {
			if term.English != tc.english[i] {
				t.Errorf("ParseQuery(%q): term %q English %v", tc.raw, term.Text, term.English)
			}
		}
		// The canonical form reads back as the same query.
		if again, err := search.ParseQuery(q.String()); err != nil || again.String() != q.String() {
			t.Errorf("ParseQuery(%q.String()) = %q, %v", tc.raw, again.String(), err)
		}
	}
}

// FuzzParseQuery: any string is either refused with a QueryError or gives
// terms that are valid UTF-8, free of control characters, at most
// MaxTerms, and stable through String.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"レスポンシブ", `"a b" c`, "東京\u3000京都", "the", "\x00", "\xff", `"`, `""`, "a\"b\"c", "ｒｕｎｎｉｎｇ", "한국어"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := search.ParseQuery(raw)
		if err != nil {
			var qe *search.QueryError
			if !errors.As(err, &qe) {
				t.Fatalf("%q: error %T %v", raw, err, err)
			}
			return
		}
		if len(q.Terms) == 0 || len(q.Terms) > search.MaxTerms {
			t.Fatalf("%q: %d terms", raw, len(q.Terms))
		}
		for _, term := range q.Terms {
			if term.Text == "" || !utf8.ValidString(term.Text) || strings.ContainsRune(term.Text, 0) {
				t.Fatalf("%q: term %q", raw, term.Text)
			}
		}
		again, err := search.ParseQuery(q.String())
		if err != nil || again.String() != q.String() {
			t.Fatalf("%q: String %q reads back as %q, %v", raw, q.String(), again.String(), err)
		}
	})
}
