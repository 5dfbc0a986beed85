package search_test

import (
	"html"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/search"
)

func mustQuery(t testing.TB, raw string) search.Query {
	t.Helper()
	q, err := search.ParseQuery(raw)
	if err != nil {
		t.Fatalf("ParseQuery(%q): %v", raw, err)
	}
	return q
}

func TestHighlight(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("前置きの文章です。", 40) + "ここにレスポンシブなデザインの話。" + strings.Repeat("後書き。", 60)
	for _, tc := range []struct {
		name, text, q string
		want          []string
	}{
		{"katakana", "画面に合わせるレスポンシブなデザイン。", "レスポンシブ",
			[]string{"画面に合わせる<mark>レスポンシブ</mark>なデザイン。"}},
		{"not 京都 for 東京", "京都と東京", "東京", []string{"京都と<mark>東京</mark>"}},
		{"stems and case", "She RUNS.\n\nThe runner's   guide: running!", "run",
			[]string{"She <mark>RUNS</mark>. The runner&#39;s guide: <mark>running</mark>!"}},
		{"phrase", "responsive web layouts and a responsive layout", `"responsive layout"`,
			[]string{"responsive web layouts and a <mark>responsive layout</mark>"}},
		{"escaped", `<script>alert("x")</script> run & hide`, "run",
			[]string{`&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; <mark>run</mark> &amp; hide`}},
		{"markup in the query is text", "a <b>bold</b> claim", "<b>bold</b>",
			[]string{"a &lt;<mark>b&gt;bold&lt;/b</mark>&gt; claim"}},
		{"title only: the start", "nothing relevant here", "absent", []string{"nothing relevant here"}},
		{"empty", "  \n ", "run", nil},
		{"cut both ends", long, "レスポンシブ", nil}, // checked below
	} {
		got := search.Highlight(tc.text, mustQuery(t, tc.q), 3)
		if tc.name == "cut both ends" {
			if len(got) != 1 || !strings.HasPrefix(got[0], "…") || !strings.HasSuffix(got[0], "…") ||
				!strings.Contains(got[0], "<mark>レスポンシブ</mark>") || utf8.RuneCountInString(got[0]) > 200 {
				t.Errorf("%s: %q", tc.name, got)
			}
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Highlight = %q, want %q", tc.name, got, tc.want)
		}
	}
	// Matches far apart are separate fragments, at most the limit.
	spread := "run " + strings.Repeat("filler ", 80) + "run " + strings.Repeat("filler ", 80) + "run " + strings.Repeat("filler ", 80) + "run"
	if got := search.Highlight(spread, mustQuery(t, "run"), 3); len(got) != 3 {
		t.Errorf("spread matches: %d fragments %q", len(got), got)
	}
	if got := search.HighlightTitle(`Tokyo & <東京>`, mustQuery(t, "東京")); got != "Tokyo &amp; &lt;<mark>東京</mark>&gt;" {
		t.Errorf("title: %q", got)
	}
}

// FuzzHighlight: whatever the text and query, a fragment is valid UTF-8
// whose only markup is balanced <mark> pairs, and unescaping it (marks
// removed) gives back text that was on the page.
func FuzzHighlight(f *testing.F) {
	f.Add("画面に合わせるレスポンシブなデザイン。", "レスポンシブ")
	f.Add(`<script>alert(1)</script> run & hide`, "run")
	f.Add("a\x00b \xff run", "run")
	f.Add("東京東京東京", "東京")
	f.Add(strings.Repeat("x ", 300)+"needle", "needle")
	f.Fuzz(func(t *testing.T, text, raw string) {
		q, err := search.ParseQuery(raw)
		if err != nil {
			return
		}
		page := strings.Join(strings.Fields(strings.ToValidUTF8(text, "\uFFFD")), " ")
		check := func(frag string) {
			if !utf8.ValidString(frag) {
				t.Fatalf("invalid UTF-8: %q", frag)
			}
			plain := strings.ReplaceAll(strings.ReplaceAll(frag, search.MarkOpen, ""), search.MarkClose, "")
			if strings.ContainsAny(plain, "<>\"'") {
				t.Fatalf("unescaped markup in %q", frag)
			}
			if strings.Count(frag, search.MarkOpen) != strings.Count(frag, search.MarkClose) {
				t.Fatalf("unbalanced marks in %q", frag)
			}
			body := strings.TrimSuffix(strings.TrimPrefix(html.UnescapeString(plain), "…"), "…")
			if !strings.Contains(page, strings.TrimSpace(body)) {
				t.Fatalf("%q is not text of the page %q", body, page)
			}
		}
		for _, frag := range search.Highlight(text, q, 3) {
			check(frag)
		}
		check(search.HighlightTitle(text, q))
	})
}
