package web_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/testenv"
	"github.com/capture-ledger/ledgerctl/pkg/web"
)

var (
	highlightOnce sync.Once
	highlightTab  context.Context
)

// highlightPage is a Chromium tab on the search screen, whose script's
// highlight reader (L.highlight) the fuzz test feeds.
func highlightPage(t testing.TB) context.Context {
	t.Helper()
	highlightOnce.Do(func() {
		mux := http.NewServeMux()
		(&web.Console{Config: web.Config{Who: web.WhoNames, Host: "127.0.0.1", Features: web.Features{Search: true}}}).Register(mux)
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		tab := testenv.BrowserTab(t, 10*time.Minute)
		if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/search"), chromedp.WaitVisible("#q")); err != nil {
			t.Fatal(err)
		}
		highlightTab = tab
	})
	if highlightTab == nil {
		t.Fatal("no search page")
	}
	return highlightTab
}

// highlighted is what the reader made of s: the text, the marked pieces,
// the tags of every element it made, and whether any script ran.
type highlighted struct {
	Text  string   `json:"text"`
	Marks []string `json:"marks"`
	Tags  []string `json:"tags"`
	Ran   bool     `json:"ran"`
}

func readHighlight(t *testing.T, tab context.Context, s string) highlighted {
	t.Helper()
	arg, _ := json.Marshal(s)
	js := `(function () {
  var p = L.highlight(` + string(arg) + `);
  return JSON.stringify({text: p.textContent,
    marks: Array.from(p.querySelectorAll("mark")).map(function (m) { return m.textContent; }),
    tags: Array.from(p.querySelectorAll("*")).map(function (e) { return e.tagName + (e.parentNode === p ? "" : "<nested>") + (e.attributes.length ? "@" : ""); }),
    ran: window.__pwned !== undefined});
})()`
	out, err := chromedp.Run(tab, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatal(err)
	}
	var h highlighted
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// FuzzSearchHighlight feeds the search screen's highlight reader, in
// Chromium, (1) any string, as a hostile or broken API could send: it makes
// only <mark> elements, flat and bare, and nothing runs; and (2) what the
// API sends for a page text: the text HTML-escaped (html.EscapeString, as
// the search package does) with one part between <mark> and </mark>: the
// reader gives back exactly the text, and exactly that part marked.
func FuzzSearchHighlight(f *testing.F) {
	for _, s := range []string{"", "plum", `<img src=x onerror="window.__pwned=1">`, "a &amp;lt; b", "&#0; &#xD800; &#1114112;", "<mark><mark>x</mark>", "</mark>y<mark>",
		"東京の桜 &lt;script&gt;", "<svg onload=window.__pwned=2>", "&bogus; &amp &#x41;", "\x00\ufffd"} {
		f.Add(s, uint8(1), uint8(3))
	}
	tab := highlightPage(f)
	f.Fuzz(func(t *testing.T, s string, from, to uint8) {
		raw := readHighlight(t, tab, s)
		if raw.Ran {
			t.Fatalf("%q: a script ran", s)
		}
		for _, tag := range raw.Tags {
			if tag != "MARK" {
				t.Fatalf("%q: made %s", s, tag)
			}
		}
		if !utf8.ValidString(s) {
			return
		}
		r := []rune(s)
		a, b := int(from)%(len(r)+1), int(to)%(len(r)+1)
		if a > b {
			a, b = b, a
		}
		before, part, after := string(r[:a]), string(r[a:b]), string(r[b:])
		api := html.EscapeString(before) + "<mark>" + html.EscapeString(part) + "</mark>" + html.EscapeString(after)
		got := readHighlight(t, tab, api)
		wantMarks := []string{}
		if part != "" {
			wantMarks = []string{part}
		}
		if got.Text != s || strings.Join(got.Marks, "\x00") != strings.Join(wantMarks, "\x00") || len(got.Marks) != len(wantMarks) {
			t.Fatalf("%q sent as %q reads %q marked %q, want %q marked %q", s, api, got.Text, got.Marks, s, wantMarks)
		}
	})
}
