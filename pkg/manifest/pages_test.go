package manifest

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestDecodePagesFixtures(t *testing.T) {
	tests := []struct {
		file string
		want []Page
	}{
		{"v2.pages.jsonl", []Page{{
			ID:  "0f8e4b2a-93c1-4d57-a6b0-5e2f1c7d9a31",
			URL: "https://news.example.org/article/42",
			TS:  "2026-07-29T12:01:35.760Z",
		}}},
		{"v13.pages.jsonl", []Page{
			{
				ID:    "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4",
				URL:   "https://example.com/",
				TS:    "2026-09-24T00:00:00.100Z",
				Title: "Example Domain",
				Text:  "Example Domain\nThis domain is for use in illustrative examples in documents.\n日本語の本文",
			},
			{ID: "p2", URL: "https://example.com/withheld", TS: "2026-09-24T00:00:00.200Z", TextWithheld: ptr("no-archive")},
			{ID: "p3", URL: "https://example.com/long", TS: "2026-09-24T00:00:00.300Z", Title: "Long", Text: "cut here", TextTruncated: true},
		}},
		{"messy.pages.jsonl", []Page{
			{URL: "https://crlf.example/", Title: "CRLF line"},
			{URL: "https://types.example/"},
			{URL: "https://no-final-newline.example/", Text: "last", TextWithheld: ptr("deny")},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := DecodePages(bytes.NewReader(readFixture(t, tt.file)))
			if err != nil {
				t.Fatalf("DecodePages: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecodePages:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDecodePagesLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Page
	}{
		{"empty", "", []Page{}},
		{"header only", `{"format":"json-pages-1.0","id":"pages","title":"All Pages"}` + "\n", []Page{}},
		{"only newlines", "\n\n\r\n", []Page{}},
		{"two pages", `{"url":"https://a/"}` + "\n" + `{"url":"https://b/"}`, []Page{{URL: "https://a/"}, {URL: "https://b/"}}},
		{"textTruncated must be true", `{"url":"https://a/","textTruncated":1}`, []Page{{URL: "https://a/"}}},
		{"textWithheld null", `{"url":"https://a/","textWithheld":null}`, []Page{{URL: "https://a/"}}},
		{"textWithheld empty kept", `{"url":"https://a/","textWithheld":""}`, []Page{{URL: "https://a/", TextWithheld: ptr("")}}},
		{"url of spaces counts", `{"url":" "}`, []Page{{URL: " "}}},
		{"escaped newline in text", `{"url":"https://a/","text":"a\nb"}`, []Page{{URL: "https://a/", Text: "a\nb"}}},
		{"BOM and no-break space trimmed like JS trim", "\uFEFF" + `{"url":"https://a/"}` + "\u00a0\n", []Page{{URL: "https://a/"}}},
		{"CR only is not a separator", `{"url":"https://a/"}` + "\r" + `{"url":"https://b/"}`, []Page{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodePages(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("DecodePages: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecodePages = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// BrowserHive truncates text at 1,000,000 characters; a line holding it is
// far longer than bufio.Scanner's default 64 KiB token.
func TestDecodePagesLongLine(t *testing.T) {
	text := strings.Repeat("本文", 500_000) // 1,000,000 characters, 3,000,000 bytes
	line := `{"id":"p","url":"https://long.example/","title":"T","text":"` + text + `","textTruncated":true}`
	in := `{"format":"json-pages-1.0","id":"pages","title":"All Pages"}` + "\n" + line + "\n" + `{"url":"https://after.example/"}` + "\n"
	// OneByteReader makes sure nothing depends on getting a line in one read.
	for name, r := range map[string]io.Reader{
		"whole":    strings.NewReader(in),
		"one byte": iotest.OneByteReader(strings.NewReader(in)),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := DecodePages(r)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Fatalf("got %d pages, want 2", len(got))
			}
			if got[0].Text != text || !got[0].TextTruncated || got[0].URL != "https://long.example/" {
				t.Errorf("long page lost: url %q, %d chars, truncated %v", got[0].URL, len([]rune(got[0].Text)), got[0].TextTruncated)
			}
			if got[1].URL != "https://after.example/" {
				t.Errorf("page after the long line = %+v", got[1])
			}
		})
	}
}

func TestDecodePagesReaderError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader(`{"url":"https://a/"}`+"\n"), iotest.ErrReader(boom))
	got, err := DecodePages(r)
	if !errors.Is(err, boom) {
		t.Fatalf("DecodePages = %v, %v; want the reader's error", got, err)
	}
	if got != nil {
		t.Errorf("pages %v returned with the error", got)
	}
}
