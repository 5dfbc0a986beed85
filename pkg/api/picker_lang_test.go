package api_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"unicode"

	"github.com/capture-ledger/ledgerctl/pkg/api"
)

// pickerPage renders the picker for cfg with the given Accept-Language
// headers (none when empty).
func pickerPage(t testing.TB, cfg api.PickerConfig, acceptLanguage ...string) (*httptest.ResponseRecorder, string) {
	t.Helper()
	s := &api.Server{Picker: cfg}
	req := httptest.NewRequest("GET", "/", nil)
	for _, h := range acceptLanguage {
		req.Header.Add("Accept-Language", h)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("picker: %d", rec.Code)
	}
	return rec, rec.Body.String()
}

func isJapanese(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || (r >= 0xFF00 && r <= 0xFFEF) || (r >= 0x3000 && r <= 0x303F)
}

func TestPickerSpeaksTheReadersLanguage(t *testing.T) {
	t.Parallel()
	views := []api.PickerConfig{
		{View: api.ViewNames, Host: "0.0.0.0", Port: 7070},
		{View: api.ViewToken, Issuer: "http://127.0.0.1:7071"},
		{View: api.ViewNone},
	}
	// Strings only the English page has, and only the Japanese one.
	english := map[api.PickerView][]string{
		api.ViewNames: {"<title>Choose an archive — capture-ledger</title>", "<h1>Choose an archive</h1>", "Organizations (comma-separated)", ">Load</button>", ">Load more</button>",
			"anyone can be anyone", "This API listens on 0.0.0.0:7070", `"loading":"Loading…"`, "could not load the list", "the server is busy. Try again in {n} s.", `"dateLanguage":"en"`, "The list shows only the archives you may view", `"gone":"404 — this archive is not there`},
		api.ViewToken: {"Paste a token", "This API takes the caller\u0026#39;s name from a JWT (http://127.0.0.1:7071)", "To mint a token:", "this token is not accepted", "Viewing as {subject} ({orgs})"},
		api.ViewNone:  {"everyone gets 401", "<h1>Choose an archive</h1>"},
	}
	japanese := map[api.PickerView][]string{
		api.ViewNames: {"<title>アーカイブを選ぶ — capture-ledger</title>", "<h1>アーカイブを選ぶ</h1>", "組織（カンマ区切り）", ">読み込む</button>", ">さらに読む</button>",
			"誰でも誰にでもなれる", "この API は 0.0.0.0:7070 で待ちながら", `"loading":"読み込み中…"`, "一覧を取れなかった", "{n} 秒ほど置いてからもう一度", `"dateLanguage":"ja"`, "一覧に出るのは見てよいアーカイブだけ", `"gone":"404 — このアーカイブは無いか`},
		api.ViewToken: {"トークンを貼って「読み込む」", "この API は JWT で名乗る設定（http://127.0.0.1:7071）", "トークンの刷り方:", "このトークンは通らない", "{subject}（{orgs}）として見ている"},
		api.ViewNone:  {"全員 401", "<h1>アーカイブを選ぶ</h1>"},
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
			rec, body := pickerPage(t, cfg, tc.header...)
			what := tc.name + ", view " + string(cfg.View)
			if got := rec.Header().Get("Content-Language"); got != tc.lang {
				t.Errorf("%s: Content-Language %q, want %q", what, got, tc.lang)
			}
			if vary := strings.Join(rec.Header().Values("Vary"), ","); !strings.Contains(vary, "Accept-Language") {
				t.Errorf("%s: Vary %q lacks Accept-Language", what, vary)
			}
			if !strings.Contains(body, `<html lang="`+tc.lang+`">`) {
				t.Errorf("%s: <html lang> is not %q", what, tc.lang)
			}
			want, other := english[cfg.View], japanese[cfg.View]
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
			if tc.lang == "en" && strings.ContainsFunc(body, isJapanese) {
				i := strings.IndexFunc(body, isJapanese)
				t.Errorf("%s: the English page has Japanese: …%s…", what, body[max(0, i-40):min(len(body), i+40)])
			}
			// Time stamps carry their time zone in either language.
			if cfg.View != api.ViewNone && !strings.Contains(body, `timeZoneName: "short"`) {
				t.Errorf("%s: time stamps without a time zone", what)
			}
		}
	}
}

// The picker escapes every value it puts into HTML in both languages.
func TestPickerEscapesInEveryLanguage(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"", "ja"} {
		for _, cfg := range []api.PickerConfig{
			{View: api.ViewToken, Issuer: `http://x/"><script>alert(1)</script>`},
			{View: api.ViewNames, Host: `<b>h</b>`, Port: 7070},
		} {
			var header []string
			if lang != "" {
				header = []string{lang}
			}
			_, body := pickerPage(t, cfg, header...)
			for _, bad := range []string{"<script>alert(", `'"</script>`, "<b>h</b>"} {
				if strings.Contains(body, bad) {
					t.Errorf("lang %q, view %s: unescaped %q", lang, cfg.View, bad)
				}
			}
			if strings.Contains(body, "innerHTML") {
				t.Error("the picker must not use innerHTML")
			}
		}
	}
}

// FuzzPickerAcceptLanguage: any Accept-Language header gives the page, in
// English or Japanese, saying which.
func FuzzPickerAcceptLanguage(f *testing.F) {
	for _, s := range []string{"", "ja", "ja-JP,ja;q=0.9", "en", "*", "ja;q=0", "ja;q=abc", ",;=", "日本語;q=1"} {
		f.Add(s)
	}
	cfg := api.PickerConfig{View: api.ViewNames, Host: "127.0.0.1", Port: 7070}
	f.Fuzz(func(t *testing.T, header string) {
		rec, body := pickerPage(t, cfg, header)
		lang := rec.Header().Get("Content-Language")
		if (lang != "en" && lang != "ja") || !strings.Contains(body, `<html lang="`+lang+`">`) {
			t.Fatalf("%q: Content-Language %q", header, lang)
		}
	})
}

// The picker has the search form in either language: the form, its
// results' list and "more" button, the strings the script shows, and a
// script that asks /api/search and builds snippets from text nodes and
// <mark> elements it makes (never parsing the server's text as markup).
func TestPickerHasTheSearchForm(t *testing.T) {
	t.Parallel()
	common := []string{`<form id="find" role="search">`, `<input id="q" name="q" type="search"`, `<ul id="hits"></ul>`, `<button id="hits-more" hidden>`,
		`"/api/search?q=" + encodeURIComponent(query)`, `"&cursor=" + encodeURIComponent(hitCursor)`, `fetch(url, { headers: searchWho })`,
		`document.createTextNode(unescape(p))`, `document.createElement("mark")`, `open({ id: h.archiveId, sourceUrl: h.url }, note, who)`}
	english := []string{"Search archived pages <input", ">Search</button>", ">More results</button>", `"searching":"Searching…"`, `"noHits":"No page you can see matches"`,
		`"hitsExact":"{n} matching pages"`, `"hitsAtLeast":"At least {n} matching pages"`, `"searchBad":"400 — the search was refused: {reason}"`,
		`"searchOff":"404 — this server has no full-text search`, `"searchFailed":"{n} — could not search"`, `"searchEmpty":"Type the words to search for"`, `"withheld":"text not kept in the archive ({reason})"`}
	japanese := []string{"保存したページを検索 <input", ">検索</button>", ">検索結果をさらに</button>", `"searching":"検索中…"`, `"noHits":"見えるページに当たりが無い"`,
		`"hitsExact":"{n} ページが当たった"`, `"hitsAtLeast":"少なくとも {n} ページが当たった"`, `"searchBad":"400 — 検索を受け付けなかった: {reason}"`,
		`"searchOff":"404 — このサーバには全文検索が無い`, `"searchFailed":"{n} — 検索できなかった"`, `"searchEmpty":"探す語を入れる"`, `"withheld":"本文はアーカイブに入っていない（{reason}）"`}
	for _, cfg := range []api.PickerConfig{
		{View: api.ViewNames, Host: "127.0.0.1", Port: 7070},
		{View: api.ViewToken, Issuer: "http://127.0.0.1:7071"},
	} {
		for _, lang := range []string{"en", "ja"} {
			_, body := pickerPage(t, cfg, lang)
			want, other := english, japanese
			if lang == "ja" {
				want, other = other, want
			}
			for _, w := range append(want, common...) {
				if !strings.Contains(body, w) {
					t.Errorf("%s, view %s: lacks %q", lang, cfg.View, w)
				}
			}
			for _, w := range other {
				if strings.Contains(body, w) {
					t.Errorf("%s, view %s: has the other language's %q", lang, cfg.View, w)
				}
			}
		}
	}
	// Without an identity setting nobody can search: no form.
	_, body := pickerPage(t, api.PickerConfig{View: api.ViewNone})
	if strings.Contains(body, `id="find"`) || strings.Contains(body, "/api/search") {
		t.Error("the picker without identity has a search form")
	}
}
