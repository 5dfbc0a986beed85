package wacz

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParsePageLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		line string
		kind lineKind
		want PageEntry
	}{
		{"blank", "  \r\n", lineBlank, PageEntry{}},
		{"header", pagesHeader, lineHeader, PageEntry{}},
		{"v2.1 header", `{"format":"json-pages-1.0","id":"pages","title":"All Pages"}`, lineHeader, PageEntry{}},
		{"full", `{"id":"p1","url":"https://a.test/","ts":"2026-01-01T00:00:00Z","title":"T","text":"本文","textTruncated":true}`,
			linePage, PageEntry{ID: "p1", URL: "https://a.test/", TS: "2026-01-01T00:00:00Z", Title: "T", Text: "本文", TextTruncated: true}},
		{"withheld", `{"id":"p","url":"https://a.test/","ts":"2026-01-01T00:00:00Z","textWithheld":"no-archive"}`,
			linePage, PageEntry{ID: "p", URL: "https://a.test/", TS: "2026-01-01T00:00:00Z", TextWithheld: "no-archive"}},
		{"nulls are absent", `{"url":"u","title":null,"text":null,"textTruncated":null}`, linePage, PageEntry{URL: "u"}},
		{"bom and crlf", "\uFEFF{\"url\":\"u\"}\r\n", linePage, PageEntry{URL: "u"}},
		{"extra kept", `{"url":"u","size":12,"favIconUrl":"f"}`, linePage,
			PageEntry{URL: "u", Extra: map[string]json.RawMessage{"size": json.RawMessage(`12`), "favIconUrl": json.RawMessage(`"f"`)}}},
		{"not json", `{"url":`, lineMalformed, PageEntry{}},
		{"array", `["url"]`, lineMalformed, PageEntry{}},
		{"string", `"url"`, lineMalformed, PageEntry{}},
		{"null", `null`, lineMalformed, PageEntry{}},
		{"no url", `{"title":"x"}`, lineMalformed, PageEntry{}},
		{"empty url", `{"url":""}`, lineMalformed, PageEntry{}},
		{"null url", `{"url":null}`, lineMalformed, PageEntry{}},
		{"numeric url", `{"url":5}`, lineMalformed, PageEntry{}},
		{"numeric title", `{"url":"u","title":5}`, lineMalformed, PageEntry{}},
		{"string flag", `{"url":"u","textTruncated":"true"}`, lineMalformed, PageEntry{}},
		{"object text", `{"url":"u","text":{}}`, lineMalformed, PageEntry{}},
		{"two values", `{"url":"u"} {"url":"v"}`, lineMalformed, PageEntry{}},
	} {
		got, kind := parsePageLine([]byte(tc.line))
		if kind != tc.kind || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v %+v, want %v %+v", tc.name, kind, got, tc.kind, tc.want)
		}
	}
}

func FuzzParsePageLine(f *testing.F) {
	for _, s := range []string{
		pagesHeader,
		`{"id":"p1","url":"https://a.test/","ts":"2026-01-01T00:00:00Z","title":"T","text":"本文","textTruncated":true}`,
		`{"url":"u","textWithheld":"deny","size":1}`,
		`{"url":"\u0000\ud800","text":"\xff"}`,
		`{"url":5}`, `{"format":1}`, "\uFEFF {}", `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		p, kind := parsePageLine(line)
		switch kind {
		case linePage:
			if p.URL == "" {
				t.Fatal("a page without a url")
			}
			for k := range p.Extra {
				if knownPageMembers[k] {
					t.Fatalf("known member %q in Extra", k)
				}
			}
			// A page Write would emit for it reads back the same.
			line := pageLine{ID: p.ID, URL: p.URL, TS: p.TS, Title: &p.Title, Text: &p.Text, TextTruncated: p.TextTruncated, TextWithheld: p.TextWithheld}
			b, err := json.Marshal(line)
			if err != nil {
				t.Fatal(err)
			}
			again, k := parsePageLine(b)
			again.Extra = p.Extra
			if k != linePage || !reflect.DeepEqual(again, p) {
				t.Fatalf("round trip of %+v: %v %+v", p, k, again)
			}
		case lineBlank:
			if s := strings.TrimSpace(strings.ReplaceAll(string(line), "\uFEFF", "")); s != "" && utf8.ValidString(s) {
				t.Fatalf("%q counted as blank", line)
			}
		case lineHeader, lineMalformed:
			if !reflect.DeepEqual(p, PageEntry{}) {
				t.Fatalf("a skipped line returned %+v", p)
			}
		}
	})
}
