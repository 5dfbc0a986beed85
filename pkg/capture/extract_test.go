package capture

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

func TestParseSrcset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a.png", []string{"a.png"}},
		{"a.png 1x, b.png 2x", []string{"a.png", "b.png"}},
		{"  a.png   1x ,\n\tb.png 2x  ", []string{"a.png", "b.png"}},
		{"a.png 480w, b.png 800w", []string{"a.png", "b.png"}},
		// A comma inside a URL is part of it; trailing commas end it.
		{"img.php?w=1,2 1x, c.png 2x", []string{"img.php?w=1,2", "c.png"}},
		{"a.png,b.png", []string{"a.png,b.png"}},
		{"a.png, b.png,", []string{"a.png", "b.png"}},
		{"a.png,, ,b.png 2x", []string{"a.png", "b.png"}},
		// Descriptors with parentheses hold commas.
		{"a.png (1, 2), b.png", []string{"a.png", "b.png"}},
		{"data:image/png;base64,AAAA 1x, b.png 2x", []string{"data:image/png;base64,AAAA", "b.png"}},
		{",,,", nil},
		{"日本.png 1x", []string{"日本.png"}},
	}
	for _, tt := range tests {
		if got := ParseSrcset(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("ParseSrcset(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParseSrcset(f *testing.F) {
	for _, s := range []string{"a.png 1x, b.png 2x", "x,y", "a (1,2), b", ",,", "  u\t1x\n,v", "\x00, \xff 2x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, u := range ParseSrcset(s) {
			if u == "" || strings.ContainsAny(u, " \t\n\f\r") {
				t.Fatalf("candidate %q from %q", u, s)
			}
			if strings.HasSuffix(u, ",") || !strings.Contains(s, u) {
				t.Fatalf("candidate %q is not a comma-free-ended substring of %q", u, s)
			}
		}
	})
}

func refs(rs []CSSRef) []string {
	var out []string
	for _, r := range rs {
		s := r.URL
		if r.Import {
			s = "@" + s
		}
		out = append(out, s)
	}
	return out
}

func TestCSSURLs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{`a { background: url(a.png) }`, []string{"a.png"}},
		{`a { background: url( "b c.png" ) }`, []string{"b c.png"}},
		{`a { background: URL('d.png') }`, []string{"d.png"}},
		{`@import "x.css"; @import url(y.css) screen; @IMPORT 'z.css';`, []string{"@x.css", "@y.css", "@z.css"}},
		{`/* url(no.png) */ b { src: url(yes.woff2) format("woff2") }`, []string{"yes.woff2"}},
		{`a { content: "url(not-a-url.png)" }`, nil},
		{`a { background: url(a\).png) }`, []string{"a).png"}},
		{`a { background: url("\66 oo.png") }`, []string{"foo.png"}},
		{`a { background: u\72l(esc.png) }`, []string{"esc.png"}},
		{`a { filter: url(#shadow) }`, nil},
		{`a { background: url() }`, nil},
		{`a { background-image: image-set("a.png" 1x, url(b.png) 2x) }`, []string{"a.png", "b.png"}},
		{`a { background-image: -webkit-image-set('c.png' 1x) } b { content: "d.png" }`, []string{"c.png"}},
		{`a { background: url(unclosed.png`, []string{"unclosed.png"}},
		{`a { background: url("unterminated`, []string{"unterminated"}},
		{`/* unterminated comment url(x.png)`, nil},
		{`@font-face{src:url(/f.woff2)format("woff2"),url(/f.ttf)}`, []string{"/f.woff2", "/f.ttf"}},
	}
	for _, tt := range tests {
		if got := refs(CSSURLs(tt.in)); !slices.Equal(got, tt.want) {
			t.Errorf("CSSURLs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	kinds := map[string]resourceKind{"a.woff2?v=1": kindFont, "b.TTF": kindFont, "c.png": kindImage, "d.css": kindStylesheet}
	for u, want := range kinds {
		if got := (CSSRef{URL: u}).kind(); got != want {
			t.Errorf("kind(%s) = %d, want %d", u, got, want)
		}
	}
}

// countTokens counts the places a URL can come from, ASCII case-folded.
func countTokens(s string) int {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 32
		}
	}
	low := string(b)
	return strings.Count(low, "url(") + strings.Count(low, "import") + strings.Count(low, "\"") + strings.Count(low, "'") +
		strings.Count(low, `\`) // an escape can spell url
}

func FuzzCSSURLs(f *testing.F) {
	for _, s := range []string{styleCSS, `@import url("a.css");`, `a{b:url(\"x)}`, "/*", `url(`, `image-set("a" 1x`, `\75 rl(x)`, "u\\\nrl(x)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := CSSURLs(s)
		if len(got) > countTokens(s) {
			t.Fatalf("%d URLs from %q, more than the tokens that can name one", len(got), s)
		}
		for _, r := range got {
			if r.URL == "" || strings.HasPrefix(r.URL, "#") {
				t.Fatalf("empty or fragment URL %q from %q", r.URL, s)
			}
		}
	})
}

func TestInnerText(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("http://example.com/dir/page.html")
	tests := []struct{ html, want string }{
		{`<p>one</p><p>two</p>`, "one\n\ntwo"},
		{`<div>a</div><div>b</div>`, "a\nb"},
		{`<p>  lots   of
		   space  </p>`, "lots of space"},
		{`<span>a</span><span>b</span> <span>c</span>`, "ab c"},
		{`a<br>b<br><br>c`, "a\nb\n\nc"},
		{`<pre>  keep
  this </pre>`, "  keep\n  this "},
		{`<script>var x = "no";</script><style>p{}</style><noscript>no</noscript><template>no</template>yes`, "yes"},
		{`<div hidden>secret</div>shown`, "shown"},
		{`<table><tr><td>a</td><td>b</td></tr><tr><th>c</th><td>d</td></tr></table>`, "a\tb\nc\td"},
		{`<ul><li>x</li><li>y</li></ul>`, "x\ny"},
		{`<h1>Title</h1>text <b>bold</b> more`, "Title\ntext bold more"},
		{`<p>日本語の<em>文章</em>です。</p>`, "日本語の文章です。"},
		{``, ""},
	}
	for _, tt := range tests {
		d := parseHTML([]byte("<html><body>"+tt.html+"</body></html>"), "text/html; charset=utf-8", base)
		if d.Text != tt.want {
			t.Errorf("innerText(%q) = %q, want %q", tt.html, d.Text, tt.want)
		}
	}
}

func TestParseHTMLResourcesAndLinks(t *testing.T) {
	t.Parallel()
	page := `<!doctype html><html><head>
<base href="/base/">
<title>The &amp; title</title>
<link rel="stylesheet" href="s.css"><link rel="alternate stylesheet" href="alt.css">
<link rel="shortcut icon" href="/favicon.ico"><link rel="preload" as="font" href="f.woff2" crossorigin>
<link rel="modulepreload" href="m.js"><link rel="preload" as="image" href="p.png" imagesrcset="p1.png 1x, p2.png 2x">
<style>body { background: url(bg.png) }</style>
<script src="app.js"></script><script src="data:text/javascript,1"></script>
</head><body style="background-image:url('inline.png')" background="legacy.gif">
<img src="i.png" srcset="i2.png 2x, i3.png 3x"><img src="i.png">
<picture><source srcset="w.webp" type="image/webp"><img src="fallback.jpg"></picture>
<video poster="poster.jpg"><source src="v.mp4"></video>
<input type="image" src="button.png"><iframe src="frame.html"></iframe>
<svg><image href="svg.png"/></svg>
<a href="page2#sec">Two</a> <a href="  /abs?q=a b  ">Abs</a> <a href="javascript:void(0)">JS</a>
<a href="HTTP://Other.EXAMPLE/x" rel="nofollow">Other</a><a href="page2#sec">dup</a>
<a href="mailto:x@y">mail</a><a>no href</a><a href="">empty</a>
<a href="/long">` + strings.Repeat("長い", 150) + `</a>
</body></html>`
	base, _ := url.Parse("http://example.com/dir/page.html")
	d := parseHTML([]byte(page), "text/html", base)
	if d.Title != "The & title" {
		t.Errorf("Title = %q", d.Title)
	}
	var got []string
	for _, r := range d.Resources {
		got = append(got, strings.TrimPrefix(r.URL, "http://example.com"))
	}
	want := []string{
		"/base/s.css", "/favicon.ico", "/base/f.woff2", "/base/m.js", "/base/p1.png", "/base/p2.png", "/base/p.png",
		"/base/bg.png", "/base/app.js", "/base/legacy.gif", "/base/inline.png", "/base/i.png", "/base/i2.png", "/base/i3.png",
		"/base/w.webp", "/base/fallback.jpg", "/base/poster.jpg", "/base/v.mp4", "/base/button.png", "/base/frame.html", "/base/svg.png",
	}
	if !sameSet(got, want) {
		t.Errorf("Resources =\n%q\nwant (any order)\n%q", got, want)
	}
	wantLinks := []wacz.Link{
		{Href: "http://example.com/base/page2#sec", Text: "Two"},
		{Href: "http://example.com/abs?q=a%20b", Text: "Abs"},
		{Href: "http://other.example/x", Text: "Other", Rel: "nofollow"},
		{Href: "http://example.com/base/", Text: "empty"},
		{Href: "http://example.com/long", Text: strings.Repeat("長い", 100)},
	}
	if !slices.Equal(d.Links, wantLinks) {
		t.Errorf("Links =\n%+v\nwant\n%+v", d.Links, wantLinks)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestDecodeHTMLCharsets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, ct string
		body     []byte
		want     string
	}{
		{"meta Shift_JIS", "text/html", sjis(t, `<meta charset="shift_jis"><p>`+jaText), jaText},
		{"header EUC-JP", "text/html; charset=euc-jp", eucjp(t, `<p>`+eucText), eucText},
		{"header wins over meta", "text/html; charset=EUC-JP", eucjp(t, `<meta charset="utf-8"><p>`+eucText), eucText},
		{"undeclared UTF-8", "text/html", []byte(`<p>` + jaText), jaText},
		{"BOM", "", append([]byte("\xef\xbb\xbf"), []byte(`<p>`+jaText)...), jaText},
	}
	for _, tt := range tests {
		if got := decodeHTML(tt.body, tt.ct); !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q lacks %q", tt.name, got, tt.want)
		}
	}
}

func FuzzParseHTML(f *testing.F) {
	f.Add([]byte(indexHTML), "text/html")
	f.Add([]byte(`<base href="javascript:x"><a href="//h/p">x</a><img srcset=",">`), "")
	f.Add([]byte("<meta charset=shift_jis>\x82\xa0<a href='\x00'>"), "text/html; charset=bogus")
	f.Add([]byte(`<style>@import "`), "text/html")
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		base, _ := url.Parse("https://example.com/a/b?c")
		d := parseHTML(body, ct, base)
		for _, s := range []string{d.Title, d.Text} {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 %q", s)
			}
		}
		for _, l := range d.Links {
			u, err := url.Parse(l.Href)
			if err != nil || !isWebURL(u) {
				t.Fatalf("link %q is not an absolute http(s) URL", l.Href)
			}
			if n := len(utf16.Encode([]rune(l.Text))); n > MaxLinkTextUnits {
				t.Fatalf("link text of %d UTF-16 units", n)
			}
		}
		seen := map[string]bool{}
		for _, r := range d.Resources {
			u, err := url.Parse(r.URL)
			if err != nil || !isWebURL(u) || u.Fragment != "" {
				t.Fatalf("resource %q is not an absolute http(s) URL without fragment", r.URL)
			}
			if seen[r.URL] {
				t.Fatalf("resource %q listed twice", r.URL)
			}
			seen[r.URL] = true
			if strings.ContainsAny(r.URL, " \x00\n") {
				t.Fatalf("resource %q cannot go on a request line", r.URL)
			}
		}
	})
}
