package capture

import (
	"bytes"
	"mime"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"

	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// resourceKind is how a page uses a subresource; it picks the Accept header
// and says whether the body is parsed for more URLs.
type resourceKind int

const (
	kindOther resourceKind = iota
	kindStylesheet
	kindScript
	kindImage
	kindFont
	kindMedia
	// kindFrame is an iframe's, object's or embed's document: when it is
	// HTML, what it names is fetched too.
	kindFrame
)

// resource is a subresource named by a page or a stylesheet.
type resource struct {
	URL  string // absolute http(s), fragment dropped
	Kind resourceKind
}

// document is what the http engine reads off an HTML page.
type document struct {
	Title     string
	Text      string
	Links     []wacz.Link
	Resources []resource
	// NeedsJS says why the page seems to need JavaScript to show its
	// content ("" when it does not): NeedsJSEmpty or NeedsJSNoscript.
	NeedsJS string
}

// Why a page seems to need JavaScript (Result.NeedsJS).
const (
	// NeedsJSEmpty: the body has no visible text, and scripts.
	NeedsJSEmpty = "empty-with-scripts"
	// NeedsJSNoscript: a <noscript> in the body speaks of JavaScript.
	NeedsJSNoscript = "noscript-warning"
)

// needsJS judges the parsed page: no visible text but scripts, or a
// <noscript> in the body that mentions JavaScript (as "Please enable
// JavaScript" notices do, in any language that writes the word).
func needsJS(root, body *html.Node, text string) string {
	scripts, warning := 0, false
	walk(root, func(n *html.Node) {
		if n.Type != html.ElementNode || n.Namespace != "" {
			return
		}
		switch n.DataAtom {
		case atom.Script:
			switch strings.ToLower(strings.TrimSpace(attr(n, "type"))) {
			case "application/ld+json", "application/json", "importmap", "speculationrules", "text/template":
			default:
				scripts++
			}
		}
	})
	walk(body, func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Noscript && n.Namespace == "" &&
			strings.Contains(strings.ToLower(textContent(n)), "javascript") {
			warning = true
		}
	})
	switch {
	case strings.TrimSpace(text) == "" && scripts > 0:
		return NeedsJSEmpty
	case warning:
		return NeedsJSNoscript
	}
	return ""
}

// MaxLinkTextUnits is the longest link text kept, in UTF-16 code units, as
// BrowserHive cuts it.
const MaxLinkTextUnits = 200

// decodeHTML returns body as UTF-8, decoded from the charset the BOM, the
// Content-Type header or a <meta> in the first 1024 bytes declares. Without a
// declaration, a body that is valid UTF-8 is read as UTF-8 (where the
// standard's fallback would say windows-1252), which is what a browser's
// detector concludes for such pages too.
func decodeHTML(body []byte, contentType string) string {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if !certain && name == "windows-1252" && utf8.Valid(body) {
		enc = encoding.Nop
	}
	if enc == encoding.Nop || name == "utf-8" {
		return strings.ToValidUTF8(string(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))), "\uFFFD")
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	return strings.ToValidUTF8(string(out), "\uFFFD")
}

// isHTML reports whether a Content-Type (or, when absent, the body) says
// HTML or XHTML.
func isHTML(contentType string, body []byte) bool {
	if contentType == "" {
		head := bytes.ToLower(bytes.TrimLeft(body[:min(len(body), 512)], " \t\r\n\ufeff"))
		return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html")) ||
			bytes.Contains(head, []byte("<head")) || bytes.Contains(head, []byte("<body"))
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// parseHTML reads a page's title, visible text, links and the subresources
// it names. docURL is the document's final URL; a <base href> overrides it
// for resolving.
func parseHTML(body []byte, contentType string, docURL *url.URL) document {
	root, err := html.Parse(strings.NewReader(decodeHTML(body, contentType)))
	if err != nil { // html.Parse only fails on a reader error
		return document{}
	}
	base := docURL
	if b := find(root, func(n *html.Node) bool { return n.DataAtom == atom.Base && hasAttr(n, "href") }); b != nil {
		if u, err := resolve(docURL, attr(b, "href")); err == nil {
			base = u
		}
	}
	var d document
	if t := find(root, func(n *html.Node) bool { return n.DataAtom == atom.Title && n.Namespace == "" }); t != nil {
		d.Title = collapseSpace(textContent(t))
	}
	body0 := find(root, func(n *html.Node) bool { return n.DataAtom == atom.Body })
	if body0 == nil {
		body0 = root
	}
	d.Text = innerText(body0)
	d.NeedsJS = needsJS(root, body0, d.Text)
	d.Links = links(root, base)
	d.Resources = resources(root, base)
	return d
}

func find(n *html.Node, pred func(*html.Node) bool) *html.Node {
	if n.Type == html.ElementNode && pred(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, pred); f != nil {
			return f
		}
	}
	return nil
}

func walk(n *html.Node, visit func(*html.Node)) {
	visit(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, visit)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return true
		}
	}
	return false
}

func textContent(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	})
	return b.String()
}

// isHTMLSpace is the HTML standard's ASCII whitespace.
func isHTMLSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
}

func collapseSpace(s string) string {
	return strings.Join(strings.FieldsFunc(s, isHTMLSpace), " ")
}

// jsTrim trims what JavaScript's String.prototype.trim does.
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' })
}

// cutUTF16 keeps the first max UTF-16 code units of s, never splitting a
// surrogate pair.
func cutUTF16(s string, max int) string {
	units := 0
	for i, r := range s {
		n := utf16.RuneLen(r)
		if n < 0 {
			n = 1
		}
		if units+n > max {
			return s[:i]
		}
		units += n
	}
	return s
}

// resolve resolves ref against base as a browser resolves an attribute URL:
// leading and trailing spaces and control characters are stripped, tabs and
// newlines removed, and the fragment kept.
func resolve(base *url.URL, ref string) (*url.URL, error) {
	ref = strings.TrimFunc(ref, func(r rune) bool { return r <= ' ' })
	ref = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, ref)
	// For http(s) a backslash in the path is a slash (not in the query).
	if end := strings.IndexAny(ref, "?#"); end >= 0 {
		ref = strings.ReplaceAll(ref[:end], `\`, "/") + ref[end:]
	} else {
		ref = strings.ReplaceAll(ref, `\`, "/")
	}
	u, err := base.Parse(fixPercents(ref))
	if err != nil {
		return nil, err
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		u.Host = strings.ToLower(u.Host)
		if u.Path == "" && u.Opaque == "" {
			u.Path = "/"
		}
		u.RawQuery = escapeLoose(u.RawQuery)
	}
	return u, nil
}

// fixPercents escapes a "%" that does not start a %XX escape, as browsers
// leave such a URL usable where url.Parse rejects it.
func fixPercents(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])) {
			b.WriteString("%25")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// escapeLoose percent-encodes the bytes a browser encodes in a query
// (controls, space, quotes, angle brackets, non-ASCII as UTF-8), so that
// the URL can be sent on a request line.
func escapeLoose(q string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c <= ' ' || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '`' || c == '\'' {
			if b.Len() == 0 {
				b.WriteString(q[:i])
			}
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(c)
		}
	}
	if b.Len() == 0 {
		return q
	}
	return b.String()
}

func isWebURL(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

// links returns the page's a[href] links as BrowserHive extracts them:
// resolved (fragment kept), http(s) only, deduplicated by href in document
// order, text trimmed and cut at MaxLinkTextUnits, rel verbatim.
func links(root *html.Node, base *url.URL) []wacz.Link {
	out := []wacz.Link{}
	seen := map[string]bool{}
	walk(root, func(n *html.Node) {
		if n.Type != html.ElementNode || n.DataAtom != atom.A || n.Namespace != "" || !hasAttr(n, "href") {
			return
		}
		u, err := resolve(base, attr(n, "href"))
		if err != nil || !isWebURL(u) {
			return
		}
		href := u.String()
		if seen[href] {
			return
		}
		seen[href] = true
		out = append(out, wacz.Link{
			Href: href,
			Text: cutUTF16(jsTrim(textContent(n)), MaxLinkTextUnits),
			Rel:  attr(n, "rel"),
		})
	})
	return out
}

// resources lists the subresources a page names, in document order, each
// once: stylesheets (and @import/url() in <style> and style attributes),
// icons, preloads, scripts, images (src and every srcset candidate), media
// sources and posters, lazy-loading attributes of images (data-src,
// data-srcset, data-lazy-src), and the documents of iframes, objects and
// embeds (kindFrame).
func resources(root *html.Node, base *url.URL) []resource {
	var out []resource
	seen := map[string]bool{}
	add := func(ref string, kind resourceKind) {
		if strings.TrimSpace(ref) == "" {
			return
		}
		u, err := resolve(base, ref)
		if err != nil || !isWebURL(u) {
			return
		}
		u.Fragment, u.RawFragment = "", ""
		s := u.String()
		if !seen[s] {
			seen[s] = true
			out = append(out, resource{URL: s, Kind: kind})
		}
	}
	addSrcset := func(v string, kind resourceKind) {
		for _, c := range ParseSrcset(v) {
			add(c, kind)
		}
	}
	addCSS := func(css string) {
		for _, ref := range CSSURLs(css) {
			add(ref.URL, ref.kind())
		}
	}
	walk(root, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		if n.Namespace == "svg" {
			if n.Data == "image" {
				href := attr(n, "href")
				for _, a := range n.Attr {
					if href == "" && a.Namespace == "xlink" && a.Key == "href" {
						href = a.Val
					}
				}
				add(href, kindImage)
			}
			return
		}
		if n.Namespace != "" {
			return
		}
		if s := attr(n, "style"); s != "" {
			addCSS(s)
		}
		switch n.DataAtom {
		case atom.Link:
			rels := strings.Fields(strings.ToLower(attr(n, "rel")))
			has := func(t string) bool {
				for _, r := range rels {
					if r == t {
						return true
					}
				}
				return false
			}
			switch {
			case has("stylesheet") && !has("alternate"):
				add(attr(n, "href"), kindStylesheet)
			case has("icon") || has("apple-touch-icon") || has("apple-touch-icon-precomposed") || has("mask-icon"):
				add(attr(n, "href"), kindImage)
			case has("preload") || has("modulepreload"):
				kind := kindOther
				switch strings.ToLower(attr(n, "as")) {
				case "style":
					kind = kindStylesheet
				case "script":
					kind = kindScript
				case "font":
					kind = kindFont
				case "image":
					kind = kindImage
					addSrcset(attr(n, "imagesrcset"), kindImage)
				}
				if has("modulepreload") {
					kind = kindScript
				}
				add(attr(n, "href"), kind)
			}
		case atom.Style:
			addCSS(textContent(n))
		case atom.Script:
			add(attr(n, "src"), kindScript)
		case atom.Img:
			add(attr(n, "src"), kindImage)
			addSrcset(attr(n, "srcset"), kindImage)
			add(attr(n, "data-src"), kindImage)
			add(attr(n, "data-lazy-src"), kindImage)
			addSrcset(attr(n, "data-srcset"), kindImage)
		case atom.Iframe:
			add(attr(n, "src"), kindFrame)
		case atom.Object:
			add(attr(n, "data"), kindFrame)
		case atom.Embed:
			add(attr(n, "src"), kindFrame)
		case atom.Source:
			kind := kindImage
			if p := n.Parent; p != nil && (p.DataAtom == atom.Video || p.DataAtom == atom.Audio) {
				kind = kindMedia
			}
			add(attr(n, "src"), kind)
			addSrcset(attr(n, "srcset"), kind)
			addSrcset(attr(n, "data-srcset"), kind)
		case atom.Track:
			add(attr(n, "src"), kindMedia)
		case atom.Video:
			add(attr(n, "poster"), kindImage)
			add(attr(n, "src"), kindMedia)
		case atom.Audio:
			add(attr(n, "src"), kindMedia)
		case atom.Input:
			if strings.EqualFold(attr(n, "type"), "image") {
				add(attr(n, "src"), kindImage)
			}
		case atom.Body, atom.Table, atom.Td, atom.Th:
			add(attr(n, "background"), kindImage)
		}
	})
	return out
}

// ParseSrcset returns the URLs of a srcset attribute's candidates, in order,
// following the HTML standard's parsing algorithm: a URL is a run of
// non-whitespace, trailing commas end it, and descriptors run to the next
// comma outside parentheses. Descriptors are not validated; every candidate
// is returned, since an archive should hold each one a viewer might pick.
func ParseSrcset(s string) []string {
	var out []string
	i := 0
	for {
		for i < len(s) && (isHTMLSpace(rune(s[i])) || s[i] == ',') {
			i++
		}
		if i >= len(s) {
			return out
		}
		start := i
		for i < len(s) && !isHTMLSpace(rune(s[i])) {
			i++
		}
		u := s[start:i]
		if strings.HasSuffix(u, ",") {
			u = strings.TrimRight(u, ",")
			if u != "" {
				out = append(out, u)
			}
			continue
		}
		depth := 0
		for ; i < len(s); i++ {
			c := s[i]
			if c == '(' {
				depth++
			} else if c == ')' && depth > 0 {
				depth--
			} else if c == ',' && depth == 0 {
				i++
				break
			}
		}
		if u != "" {
			out = append(out, u)
		}
	}
}

// blockBreaks are the elements innerText separates from their neighbours by
// a line break (two for <p>, as the standard's "required line break count").
var blockBreaks = map[atom.Atom]int{
	atom.P: 2, atom.Div: 1, atom.H1: 1, atom.H2: 1, atom.H3: 1, atom.H4: 1, atom.H5: 1, atom.H6: 1,
	atom.Li: 1, atom.Ul: 1, atom.Ol: 1, atom.Dl: 1, atom.Dt: 1, atom.Dd: 1, atom.Tr: 1, atom.Table: 1,
	atom.Section: 1, atom.Article: 1, atom.Header: 1, atom.Footer: 1, atom.Nav: 1, atom.Main: 1,
	atom.Aside: 1, atom.Blockquote: 1, atom.Pre: 1, atom.Form: 1, atom.Fieldset: 1, atom.Figure: 1,
	atom.Figcaption: 1, atom.Address: 1, atom.Details: 1, atom.Summary: 1, atom.Hr: 1, atom.Caption: 1,
	atom.Center: 1, atom.Legend: 1, atom.Menu: 1, atom.Hgroup: 1, atom.Dialog: 1, atom.Search: 1,
}

// hiddenElements never render text.
var hiddenElements = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Head: true,
	atom.Title: true, atom.Iframe: true, atom.Object: true, atom.Embed: true, atom.Canvas: true,
	atom.Video: true, atom.Audio: true, atom.Img: true, atom.Input: true, atom.Textarea: true,
	atom.Datalist: true, atom.Param: true, atom.Source: true, atom.Track: true,
}

// innerText approximates document.body.innerText on a page that runs no
// script and has no stylesheet applied: script, style, noscript, template
// and [hidden] contribute nothing, whitespace collapses as CSS collapses it
// (kept inside <pre>), block elements and <br> break lines, and table cells
// are separated by tabs.
func innerText(root *html.Node) string {
	w := &textWriter{}
	var visit func(n *html.Node, pre bool)
	visit = func(n *html.Node, pre bool) {
		switch n.Type {
		case html.TextNode:
			w.text(n.Data, pre)
			return
		case html.ElementNode:
			if n.Namespace == "" && (hiddenElements[n.DataAtom] || hasAttr(n, "hidden")) {
				return
			}
			if n.Namespace == "" {
				switch n.DataAtom {
				case atom.Br:
					w.newline()
					return
				case atom.Td, atom.Th:
					if prevElement(n) != nil {
						w.tab()
					}
				case atom.Pre, atom.Listing, atom.Xmp, atom.Plaintext:
					pre = true
				}
			}
		case html.DocumentNode:
		default:
			return
		}
		brk := 0
		if n.Type == html.ElementNode && n.Namespace == "" {
			brk = blockBreaks[n.DataAtom]
		}
		w.block(brk)
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, pre)
		}
		w.block(brk)
	}
	visit(root, false)
	return w.String()
}

func prevElement(n *html.Node) *html.Node {
	for p := n.PrevSibling; p != nil; p = p.PrevSibling {
		if p.Type == html.ElementNode {
			return p
		}
	}
	return nil
}

// textWriter joins text runs with at most the breaks and spaces that
// separate them, never leading or trailing.
type textWriter struct {
	b       strings.Builder
	breaks  int  // line breaks owed before the next text
	space   bool // a collapsed space owed before the next text
	pending string
}

func (w *textWriter) block(n int) {
	if n > w.breaks {
		w.breaks = n
	}
}

func (w *textWriter) newline() {
	// <br> always breaks, even twice in a row.
	if w.b.Len() == 0 {
		return
	}
	w.flush()
	w.b.WriteByte('\n')
	w.space = false
}

func (w *textWriter) tab() { w.pending = "\t" }

func (w *textWriter) flush() {
	if w.b.Len() > 0 {
		switch {
		case w.breaks > 0:
			w.b.WriteString(strings.Repeat("\n", w.breaks))
		case w.pending != "":
			w.b.WriteString(w.pending)
		case w.space:
			w.b.WriteByte(' ')
		}
	}
	w.breaks, w.space, w.pending = 0, false, ""
}

func (w *textWriter) text(s string, pre bool) {
	if pre {
		if s == "" {
			return
		}
		w.flush()
		w.b.WriteString(s)
		return
	}
	first := true
	for _, word := range strings.FieldsFunc(s, isHTMLSpace) {
		if first {
			if s != "" && isHTMLSpace(rune(s[0])) {
				w.space = true
			}
			first = false
		} else {
			w.space = true
		}
		w.flush()
		w.b.WriteString(word)
	}
	if first {
		// whitespace only
		if s != "" {
			w.space = true
		}
		return
	}
	if isHTMLSpace(rune(s[len(s)-1])) {
		w.space = true
	}
}

// String is the text without a leading or trailing line break. Collapsed
// spaces are only ever written between words, so no line ends in one.
func (w *textWriter) String() string { return strings.Trim(w.b.String(), "\n") }
