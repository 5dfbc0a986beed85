package manifest

import (
	"errors"
	"reflect"
	"testing"
)

func TestDecodeLinksFixtures(t *testing.T) {
	tests := []struct {
		file string
		want []Link
	}{
		{"v2.links.json", []Link{
			{Href: "https://news.example.org/"},
			{Href: "https://news.example.org/article/43#comments"},
			{Href: "https://ads.example.net/click?id=9", Rel: ptr("nofollow noreferrer")},
		}},
		{"v12.links.json", []Link{
			{Href: "https://www.example.com/about"},
			{Href: "https://www.example.com/日本語/ページ?q=a b", Rel: ptr("")},
			{Href: "http://other.example.org/", Rel: ptr("external")},
		}},
		{"messy.links.json", []Link{
			{Href: "https://ok.example/1"},
			{Href: "https://ok.example/2", Rel: ptr("nofollow")},
			{Href: ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := DecodeLinks(readFixture(t, tt.file))
			if err != nil {
				t.Fatalf("DecodeLinks: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecodeLinks:\n got %s\nwant %s", showLinks(got), showLinks(tt.want))
			}
		})
	}
}

func showLinks(links []Link) string {
	s := "["
	for _, l := range links {
		rel := "<nil>"
		if l.Rel != nil {
			rel = *l.Rel
		}
		s += "{" + l.Href + " rel=" + rel + "} "
	}
	return s + "]"
}

func TestDecodeLinksEmpty(t *testing.T) {
	got, err := DecodeLinks([]byte(`{"links":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || len(got) != 0 {
		t.Errorf("DecodeLinks = %#v, want empty non-nil", got)
	}
}

func TestDecodeLinksNotALinksFile(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
	}{
		{"empty", ``, "links: not a BrowserHive links file: not valid JSON"},
		{"garbage", `<html>`, "links: not a BrowserHive links file: not valid JSON"},
		{"truncated", `{"links":[{"href":"https://a/"}`, "links: not a BrowserHive links file: not valid JSON"},
		{"array", `[{"href":"https://a/"}]`, "links: not a BrowserHive links file: want a JSON object, got an array"},
		{"string", `"https://a/"`, "links: not a BrowserHive links file: want a JSON object, got a string"},
		{"null", `null`, "links: not a BrowserHive links file: want a JSON object, got null"},
		{"no links", `{"taskId":"x"}`, "links: not a BrowserHive links file: links: missing"},
		{"links null", `{"links":null}`, "links: not a BrowserHive links file: links: want an array, got null"},
		{"links object", `{"links":{"href":"https://a/"}}`, "links: not a BrowserHive links file: links: want an array, got an object"},
		{"Links capitalised", `{"Links":[]}`, "links: not a BrowserHive links file: links: missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeLinks([]byte(tt.in))
			if err == nil {
				t.Fatalf("DecodeLinks = %v, want error", got)
			}
			if !errors.Is(err, ErrNotLinksFile) {
				t.Errorf("error %v does not wrap ErrNotLinksFile", err)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("error = %q, want %q", err, tt.wantErr)
			}
			if got != nil {
				t.Errorf("links %v returned with the error", got)
			}
		})
	}
}
