package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAssetsServeOnlyWhatTheBinaryHolds: assets are the embedded files,
// with their types and nosniff; other names (paths, dot files) are 404.
func TestAssetsServeOnlyWhatTheBinaryHolds(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	(&Console{}).Register(mux)
	for _, tc := range []struct {
		path, typ string
		code      int
	}{
		{"/assets/console.js", "text/javascript; charset=utf-8", 200},
		{"/assets/console.css", "text/css; charset=utf-8", 200},
		{"/assets/missing.js", "", 404},
		{"/assets/..%2fweb.go", "", 404},
		{"/assets/.hidden", "", 404},
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Code != tc.code {
			t.Errorf("%s: %d, want %d", tc.path, rec.Code, tc.code)
			continue
		}
		if tc.code == 200 && (rec.Header().Get("Content-Type") != tc.typ || rec.Header().Get("X-Content-Type-Options") != "nosniff") {
			t.Errorf("%s: headers %v", tc.path, rec.Header())
		}
	}
}

// TestLanguageChoice: ?lang= wins and is remembered in a cookie; then the
// cookie; then Accept-Language; English otherwise.
func TestLanguageChoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query, cookie, accept, want string
		sets                        bool
	}{
		{"", "", "", "en", false},
		{"", "", "ja-JP,ja;q=0.9", "ja", false},
		{"", "en", "ja", "en", false},
		{"lang=ja", "en", "en", "ja", true},
		{"lang=xx", "ja", "en", "ja", false},
		{"", "zz", "ja", "ja", false},
	} {
		r := httptest.NewRequest("GET", "/?"+tc.query, nil)
		if tc.cookie != "" {
			r.AddCookie(&http.Cookie{Name: LangCookie, Value: tc.cookie})
		}
		if tc.accept != "" {
			r.Header.Set("Accept-Language", tc.accept)
		}
		rec := httptest.NewRecorder()
		if got := Language(rec, r); got.String() != tc.want {
			t.Errorf("%+v: %s", tc, got)
		}
		set := strings.Contains(rec.Header().Get("Set-Cookie"), LangCookie+"="+tc.want)
		if set != tc.sets {
			t.Errorf("%+v: Set-Cookie %q", tc, rec.Header().Get("Set-Cookie"))
		}
	}
}

// TestEveryScreenRenders: every registered screen renders in both
// languages with the console's security headers, and every text key a
// template names exists in both languages.
func TestEveryScreenRenders(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	c := &Console{Config: Config{Who: WhoNames, Host: "127.0.0.1", Features: Features{Crawls: true, Search: true, Replay: true, Captures: true, Shares: true, Delete: true}}}
	c.Register(mux)
	for _, s := range screens {
		for k, v := range s.Text {
			if v.En == "" || v.Ja == "" {
				t.Errorf("screen %s: text %q lacks a language", s.Name, k)
			}
		}
		path := strings.TrimPrefix(s.Pattern, "GET ")
		path = strings.ReplaceAll(strings.ReplaceAll(path, "{$}", ""), "{id}", "00000000-0000-0000-0000-000000000001")
		for _, lang := range []string{"en", "ja"} {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest("GET", path+"?lang="+lang, nil))
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != 200 || !strings.Contains(string(body), `<html lang="`+lang+`">`) {
				t.Errorf("%s %s: %d %.200s", s.Name, lang, rec.Code, body)
			}
			// Every screen's entry in the navigation has its label on
			// every page (a label only the screen itself carried was
			// blank elsewhere).
			if strings.Contains(string(body), "></a></li>") {
				t.Errorf("%s %s: a navigation entry without a label", s.Name, lang)
			}
			if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
				t.Errorf("%s: CSP %q", s.Name, csp)
			}
		}
	}
	for k, v := range common {
		if v.En == "" || v.Ja == "" {
			t.Errorf("common text %q lacks a language", k)
		}
	}
}
