package api_test

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/search"
)

// pagedSearcher answers /api/search from two fixed pages (the second for
// its cursor) and records who asked; the page builder is what is tested.
type pagedSearcher struct {
	cursor string
	mu     sync.Mutex
	asked  []string // subject|orgs|cursor
}

// wellShapedCursor is a token of the shape the API lets through to the
// searcher (search.CheckCursor); it opens nothing.
func wellShapedCursor(t *testing.T) string {
	t.Helper()
	for n := 1; n < 512; n++ {
		c := search.CursorTokenPrefix + base64.RawURLEncoding.EncodeToString(make([]byte, n))
		if search.CheckCursor(c) == nil {
			return c
		}
	}
	t.Fatal("no cursor shape found")
	return ""
}

func (p *pagedSearcher) Search(_ context.Context, subject string, orgs []string, req search.Request) (search.Page, error) {
	p.mu.Lock()
	p.asked = append(p.asked, subject+"|"+strings.Join(orgs, ",")+"|"+req.Cursor)
	p.mu.Unlock()
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	if req.Cursor == p.cursor {
		return search.Page{Hits: []search.Hit{{ArchiveID: "00000000-0000-4000-8000-000000000002", URL: "https://b.test/", Title: "second", TitleHighlight: "second", CapturedAt: at}}}, nil
	}
	total, next := 2, p.cursor
	return search.Page{Total: &total, TotalExact: true, Next: &next, Hits: []search.Hit{{
		ArchiveID: "00000000-0000-4000-8000-000000000001", URL: "https://a.test/?x=<img>",
		Title:          `<img src=x onerror=alert(1)> plum`,
		TitleHighlight: `&lt;img src=x onerror=alert(1)&gt; <mark>plum</mark>`,
		Highlight:      []string{`a &amp;lt; b &#39;q&#34; <mark>plum</mark> tree <mark>&lt;b&gt;</mark>`},
		CapturedAt:     at,
	}}}, nil
}

// In a browser, the search form asks /api/search as the list's caller,
// shows the hits' titles and snippets with only the marks as elements
// (the escaped text stays text, decoded once), and "more" follows the cursor.
func TestPickerSearchInTheBrowser(t *testing.T) {
	t.Parallel()
	chromium := needChromium(t)
	searcher := &pagedSearcher{cursor: wellShapedCursor(t)}
	s := &api.Server{Picker: api.PickerConfig{View: api.ViewNames, Host: "127.0.0.1", Port: 7070}, Identity: identity.Headers{}, Search: searcher}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	ctx := browserTab(t, chromium, 2*time.Minute)

	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible("#subject"),
		chromedp.SendKeys("#subject", "alice"),
		chromedp.SendKeys("#orgs", "acme"),
		chromedp.SendKeys("#q", "plum"),
		chromedp.Click("#find button"),
		chromedp.WaitVisible("#hits-more:not([disabled])"),
	); err != nil {
		t.Fatalf("search: %v", err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[
		document.querySelector("#hits li a").textContent,
		Array.from(document.querySelectorAll("#hits mark")).map(function (m) { return m.textContent; }).join("|"),
		document.querySelector("#hits .snippet").textContent,
		String(document.querySelectorAll("#hits img, #hits b").length),
		document.getElementById("found").textContent]`))
	if err != nil || len(got) != 5 {
		t.Fatalf("reading the hits: %v %q", err, got)
	}
	titleText, marks, snippet, imgs, found := got[0], got[1], got[2], got[3], got[4]
	if titleText != "<img src=x onerror=alert(1)> plum" {
		t.Errorf("title shows %q", titleText)
	}
	if marks != "plum|plum|<b>" {
		t.Errorf("marks %q, want plum|plum|<b>", marks)
	}
	if snippet != `a &lt; b 'q" plum tree <b>` {
		t.Errorf("snippet shows %q", snippet)
	}
	if imgs != "0" {
		t.Errorf("%s elements made from the server's text", imgs)
	}
	if found != "2 matching pages" {
		t.Errorf("status %q", found)
	}

	if err := chromedp.Do(ctx, chromedp.Click("#hits-more"), chromedp.WaitNotVisible("#hits-more")); err != nil {
		t.Fatalf("more: %v", err)
	}
	count, err := chromedp.Run(ctx, chromedp.Evaluate[string](`String(document.querySelectorAll("#hits li").length)`))
	if err != nil {
		t.Fatalf("more: %v", err)
	}
	if count != "2" {
		t.Errorf("%s hits after more, want 2", count)
	}
	searcher.mu.Lock()
	defer searcher.mu.Unlock()
	if got := strings.Join(searcher.asked, " "); got != "alice|acme| alice|acme|"+searcher.cursor {
		t.Errorf("asked %q", got)
	}
}
