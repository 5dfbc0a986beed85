package web_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/capture-ledger/ledgerctl/pkg/web"
)

// consolePage renders path of a console built from cfg with the given
// Accept-Language headers (none when empty).
func consolePage(t testing.TB, cfg web.Config, path string, acceptLanguage ...string) (*httptest.ResponseRecorder, string) {
	t.Helper()
	mux := http.NewServeMux()
	(&web.Console{Config: cfg}).Register(mux)
	req := httptest.NewRequest("GET", path, nil)
	for _, h := range acceptLanguage {
		req.Header.Add("Accept-Language", h)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("%s: %d", path, rec.Code)
	}
	return rec, rec.Body.String()
}

// asset is the body of one of the console's embedded assets.
func asset(t testing.TB, name string) string {
	t.Helper()
	mux := http.NewServeMux()
	(&web.Console{}).Register(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/assets/"+name, nil))
	if rec.Code != 200 {
		t.Fatalf("asset %s: %d", name, rec.Code)
	}
	return rec.Body.String()
}

func isJapanese(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || (r >= 0xFF00 && r <= 0xFFEF) || (r >= 0x3000 && r <= 0x303F)
}

// langSwitch is the language switch (its link, and its text in the page's
// texts), the one place a page names the other language in that language.
var langSwitch = regexp.MustCompile(`<a class="lang"[^>]*>[^<]*</a>|"langSwitch":"[^"]*"`)

var allFeatures = web.Features{Crawls: true, Search: true, Replay: true, Captures: true, Shares: true, Delete: true}

// TestConsoleSpeaksTheReadersLanguage: the home and search screens, in
// each identity form, answer in the language Accept-Language prefers
// (Japanese when it prefers Japanese, English otherwise), say which
// (Content-Language, <html lang>, Vary), carry only that language's texts
// (the script's among them) and write dates with their time zone.
func TestConsoleSpeaksTheReadersLanguage(t *testing.T) {
	t.Parallel()
	views := []web.Config{
		{Who: web.WhoNames, Host: "0.0.0.0", Port: 7070, Features: allFeatures},
		{Who: web.WhoToken, Issuer: "http://127.0.0.1:7071", Features: allFeatures},
		{Who: web.WhoNone, Features: allFeatures},
	}
	// Strings only the English page has, and only the Japanese one.
	english := map[web.Who][]string{
		web.WhoNames: {"<title>Archives · capture-ledger</title>", "<h1>Archives</h1>", ">Load more</button>", "> Group by crawl</label>", ">Apply</button>",
			"whoever can reach this address", `"loading":"Loading…"`, `"dateLanguage":"en"`, "The list shows only the archives you may view", `"goneArchive":"This archive is not there`, `"replayCrawl":"Replay this crawl"`},
		web.WhoToken: {">Token <input", `"unauthorized":"Say who you are first (above)."`, "<h1>Archives</h1>"},
		web.WhoNone:  {"This server accepts nobody", "<h1>Archives</h1>"},
	}
	japanese := map[web.Who][]string{
		web.WhoNames: {"<title>アーカイブ · capture-ledger</title>", "<h1>アーカイブ</h1>", ">さらに読む</button>", "> クロールごとにまとめる</label>", ">絞り込む</button>",
			"このアドレスに届く誰でも信用します", `"loading":"読み込み中…"`, `"dateLanguage":"ja"`, "一覧に出るのは見てよいアーカイブだけです", `"goneArchive":"このアーカイブは無いか`, `"replayCrawl":"このクロールをリプレイ"`},
		web.WhoToken: {">トークン <input", `"unauthorized":"先に利用者を入力してください（上）。"`, "<h1>アーカイブ</h1>"},
		web.WhoNone:  {"このサーバーは誰も受け付けません", "<h1>アーカイブ</h1>"},
	}
	for _, tc := range []struct {
		name   string
		header []string
		lang   string
	}{
		{"no header", nil, "en"},
		{"en", []string{"en"}, "en"},
		{"en-US", []string{"en-US,en;q=0.9,ja;q=0.8"}, "en"},
		{"*", []string{"*"}, "en"},
		{"fr", []string{"fr-FR, de;q=0.5"}, "en"},
		{"ja;q=0", []string{"ja;q=0, fr"}, "en"},
		{"ja-JP", []string{"ja-JP,ja;q=0.9"}, "ja"},
		{"ja", []string{"ja"}, "ja"},
		{"ja preferred", []string{"en;q=0.5, ja-JP;q=0.8"}, "ja"},
		{"two headers", []string{"fr", "ja;q=0.9"}, "ja"},
	} {
		for _, cfg := range views {
			for _, path := range []string{"/", "/search"} {
				rec, body := consolePage(t, cfg, path, tc.header...)
				what := tc.name + ", " + string(cfg.Who) + ", " + path
				if got := rec.Header().Get("Content-Language"); got != tc.lang {
					t.Errorf("%s: Content-Language %q, want %q", what, got, tc.lang)
				}
				if vary := strings.Join(rec.Header().Values("Vary"), ","); !strings.Contains(vary, "Accept-Language") {
					t.Errorf("%s: Vary %q lacks Accept-Language", what, vary)
				}
				if !strings.Contains(body, `<html lang="`+tc.lang+`">`) {
					t.Errorf("%s: <html lang> is not %q", what, tc.lang)
				}
				if path == "/" {
					want, other := english[cfg.Who], japanese[cfg.Who]
					if tc.lang == "ja" {
						want, other = other, want
					}
					for _, w := range want {
						if !strings.Contains(body, w) {
							t.Errorf("%s: lacks %q", what, w)
						}
					}
					for _, w := range other {
						if strings.Contains(body, w) {
							t.Errorf("%s: has the other language's %q", what, w)
						}
					}
				}
				if rest := langSwitch.ReplaceAllString(body, ""); tc.lang == "en" && strings.ContainsFunc(rest, isJapanese) {
					i := strings.IndexFunc(rest, isJapanese)
					t.Errorf("%s: the English page has Japanese: …%s…", what, rest[max(0, i-40):min(len(rest), i+40)])
				}
			}
		}
	}
	// Time stamps carry their time zone in either language (the shared
	// script writes them; the screens use it).
	if js := asset(t, "console.js"); !strings.Contains(js, `timeZoneName: "short"`) {
		t.Error("time stamps without a time zone")
	}
	for _, name := range []string{"archives.js", "search.js"} {
		if js := asset(t, name); !strings.Contains(js, "L.time(") {
			t.Errorf("%s writes dates without L.time", name)
		}
	}
}

// TestConsoleEscapesAndChoosesTheForm: every value the server puts into a
// page is escaped for its context, in both languages; the identity mode
// decides the form (names, token, or a notice and no forms at all); no
// script of the console uses innerHTML or parses markup.
func TestConsoleEscapesAndChoosesTheForm(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"", "ja"} {
		for _, tc := range []struct {
			cfg     web.Config
			want    []string
			notWant []string
		}{
			{web.Config{Who: web.WhoNone}, []string{`id="notice"`}, []string{`id="filters"`, `id="find"`, `id="subject"`}},
			{web.Config{Who: web.WhoToken, Issuer: `http://x/"><script>alert(1)</script>`}, []string{`id="token"`, `id="filters"`, `\u003cscript\u003ealert(1)`}, []string{"<script>alert(", `id="subject"`}},
			{web.Config{Who: web.WhoNames, Host: `<b>h</b>`, Port: 7070}, []string{`id="subject"`, `class="warn"`, `id="filters"`}, []string{"<b>h</b>", `'"</script>`}},
		} {
			var header []string
			if lang != "" {
				header = []string{lang}
			}
			rec, body := consolePage(t, tc.cfg, "/", header...)
			if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
				t.Errorf("Content-Type %q", rec.Header().Get("Content-Type"))
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("lang %q, %s: lacks %q", lang, tc.cfg.Who, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(body, w) {
					t.Errorf("lang %q, %s: has %q", lang, tc.cfg.Who, w)
				}
			}
		}
	}
	for _, name := range []string{"archives.js", "search.js", "console.js"} {
		js := asset(t, name)
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "DOMParser", "createContextualFragment"} {
			if strings.Contains(js, bad) {
				t.Errorf("%s uses %s", name, bad)
			}
		}
	}
}

// FuzzConsoleAcceptLanguage: any Accept-Language header gives the home
// page, in English or Japanese, saying which.
func FuzzConsoleAcceptLanguage(f *testing.F) {
	for _, s := range []string{"", "ja", "ja-JP,ja;q=0.9", "en", "*", "ja;q=0", "ja;q=abc", ",;=", "日本語;q=1"} {
		f.Add(s)
	}
	cfg := web.Config{Who: web.WhoNames, Host: "127.0.0.1", Port: 7070}
	f.Fuzz(func(t *testing.T, header string) {
		rec, body := consolePage(t, cfg, "/", header)
		lang := rec.Header().Get("Content-Language")
		if (lang != "en" && lang != "ja") || !strings.Contains(body, `<html lang="`+lang+`">`) {
			t.Fatalf("%q: Content-Language %q", header, lang)
		}
	})
}

// TestSearchScreenHasTheForm: the search screen has its form (words and
// the list's filters), its results and "more" button and the strings its
// script shows, in either language; its script asks /api/search and
// builds snippets from text nodes and <mark> elements it makes. Without
// an identity setting nobody can search: no form. Without search on the
// server there is no screen and no navigation entry.
func TestSearchScreenHasTheForm(t *testing.T) {
	t.Parallel()
	common := []string{`<form id="find" class="filters" role="search">`, `<input id="q" name="q" type="search"`, `<div id="hits" class="hits"></div>`, `<button id="hits-more" type="button" hidden>`,
		`id="f-host" name="host"`, `id="f-crawl" name="crawl"`, `id="f-from" name="from" type="date"`, `id="f-to" name="to" type="date"`, `<script src="/assets/search.js" defer>`}
	english := []string{"Search archived pages <input", ">Search</button>", ">More results</button>", `"searching":"Searching…"`, `"noHits":"No page you can see matches"`,
		`"hitsExact":"{n} matching pages"`, `"hitsAtLeast":"At least {n} matching pages"`, `"searchBad":"400 — the search was refused: {reason}"`,
		`"searchOff":"404 — this server has no full-text search`, `"searchFailed":"{n} — could not search"`, `"searchEmpty":"Type the words to search for"`, `"withheld":"text not kept in the archive ({reason})"`,
		`"otherCaptures":"{n} other captures of this page"`}
	japanese := []string{"保存したページを検索 <input", ">検索</button>", ">検索結果をさらに</button>", `"searching":"検索中…"`, `"noHits":"見えるページに一致するものはありません"`,
		`"hitsExact":"{n} ページが一致しました"`, `"hitsAtLeast":"少なくとも {n} ページが一致しました"`, `"searchBad":"400 — 検索を受け付けませんでした: {reason}"`,
		`"searchOff":"404 — このサーバーには全文検索がありません`, `"searchFailed":"{n} — 検索できませんでした"`, `"searchEmpty":"探す語を入力してください"`, `"withheld":"本文はアーカイブに入っていません（{reason}）"`,
		`"otherCaptures":"このページの他の取得 {n} 件"`}
	for _, cfg := range []web.Config{
		{Who: web.WhoNames, Host: "127.0.0.1", Port: 7070, Features: allFeatures},
		{Who: web.WhoToken, Issuer: "http://127.0.0.1:7071", Features: allFeatures},
	} {
		for _, lang := range []string{"en", "ja"} {
			_, body := consolePage(t, cfg, "/search", lang)
			want, other := english, japanese
			if lang == "ja" {
				want, other = other, want
			}
			for _, w := range append(want, common...) {
				if !strings.Contains(body, w) {
					t.Errorf("%s, %s: lacks %q", lang, cfg.Who, w)
				}
			}
			for _, w := range other {
				if strings.Contains(body, w) {
					t.Errorf("%s, %s: has the other language's %q", lang, cfg.Who, w)
				}
			}
			if !regexp.MustCompile(`<a href="/search"[^>]*>` + map[string]string{"en": "Search", "ja": "検索"}[lang] + `</a>`).MatchString(body) {
				t.Errorf("%s, %s: no navigation entry for search", lang, cfg.Who)
			}
			// Every screen's entry is named on every page.
			if !regexp.MustCompile(`<a href="/">` + map[string]string{"en": "Archives", "ja": "アーカイブ"}[lang] + `</a>`).MatchString(body) {
				t.Errorf("%s, %s: the search page's navigation does not name the archives", lang, cfg.Who)
			}
		}
	}
	js := asset(t, "search.js")
	for _, w := range []string{`L.api("GET", "/api/search?" + p.toString())`, `p.set("cursor", cursor)`, `document.createTextNode(unescape(p))`, `document.createElement("mark")`, `L.replay("/api/archives/" + encodeURIComponent(h.archiveId) + "/replay", { page: h.url }, note)`} {
		if !strings.Contains(js, w) {
			t.Errorf("search.js lacks %q", w)
		}
	}
	_, body := consolePage(t, web.Config{Who: web.WhoNone, Features: allFeatures}, "/search")
	if strings.Contains(body, `id="find"`) {
		t.Error("the console without identity has a search form")
	}
	mux := http.NewServeMux()
	(&web.Console{Config: web.Config{Who: web.WhoNames, Host: "127.0.0.1"}}).Register(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/search", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("/search without search on the server: %d", rec.Code)
	}
	_, home := consolePage(t, web.Config{Who: web.WhoNames, Host: "127.0.0.1"}, "/")
	if strings.Contains(home, `href="/search"`) {
		t.Error("the navigation offers search on a server without it")
	}
}

// TestConsoleJapaneseTerms: every screen's Japanese texts name a replay
// リプレイ (as the hints and buttons beside them do), never 再生, which
// reads as playing media.
func TestConsoleJapaneseTerms(t *testing.T) {
	t.Parallel()
	cfg := web.Config{Who: web.WhoNames, Features: allFeatures}
	for _, path := range []string{"/", "/search", "/crawls", "/crawls/new", "/crawls/00000000-0000-0000-0000-000000000001", "/capture", "/archives/00000000-0000-0000-0000-000000000001"} {
		_, body := consolePage(t, cfg, path, "ja")
		if i := strings.Index(body, "再生"); i >= 0 {
			t.Errorf("%s says 再生: …%s…", path, body[max(0, i-60):min(len(body), i+30)])
		}
		if !strings.Contains(body, "リプレイ") && path != "/capture" && path != "/crawls/new" {
			t.Errorf("%s names no リプレイ", path)
		}
	}
}
