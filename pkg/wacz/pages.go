package wacz

import (
	"bytes"
	"encoding/json"
	"time"
	"unicode"
)

// pagesHeader is the first line of pages/pages.jsonl. hasText tells
// ReplayWeb.page that the lines carry the pages' text for its own search.
const pagesHeader = `{"format":"json-pages-1.0","id":"pages","title":"All Pages","hasText":true}`

// PagesFormat is the format the pages.jsonl header line names.
const PagesFormat = "json-pages-1.0"

// pageLine is one page as Write puts it in pages.jsonl (BrowserHive ≥ v13).
// Title and text are pointers so a withheld page omits them while a page
// with an empty title still says "".
type pageLine struct {
	ID            string  `json:"id"`
	URL           string  `json:"url"`
	TS            string  `json:"ts"`
	Title         *string `json:"title,omitempty"`
	Text          *string `json:"text,omitempty"`
	TextTruncated bool    `json:"textTruncated,omitempty"`
	TextWithheld  string  `json:"textWithheld,omitempty"`
	Behaviors     any     `json:"behaviors,omitempty"`
	NeedsJS       string  `json:"needsJavaScript,omitempty"`
}

// PageEntry is one page line read back from pages/pages.jsonl.
type PageEntry struct {
	ID    string
	URL   string // never empty
	TS    string // as written (RFC 3339 when the writer kept the spec); not parsed
	Title string
	// Text is the page's visible text (document.body.innerText), verbatim.
	Text string
	// TextTruncated is true when the writer cut Text at its cap.
	TextTruncated bool
	// TextWithheld is why title and text are absent (BrowserHive's
	// DocumentWithheld), or "".
	TextWithheld string
	// Extra holds the members this package does not know (e.g. "size"),
	// untouched, so a later writer's additions are not lost.
	Extra map[string]json.RawMessage
}

// lineKind is what one pages.jsonl line turned out to be.
type lineKind int

const (
	lineBlank     lineKind = iota // empty or white space: ignored
	lineHeader                    // the {"format":…} line
	linePage                      // a page
	lineMalformed                 // not a JSON object, a known member of the wrong type, or no url
)

// knownPageMembers are the page-line members PageEntry has fields for.
var knownPageMembers = map[string]bool{
	"id": true, "url": true, "ts": true, "title": true, "text": true,
	"textTruncated": true, "textWithheld": true,
}

// parsePageLine classifies and reads one line of pages.jsonl. A line is a
// page when it is a JSON object with a non-empty string url and every known
// member has its type (null counts as absent); a header is an object with a
// "format" member and no url. White space around the line, including a byte
// order mark, is ignored as JavaScript's trim() would.
func parsePageLine(line []byte) (PageEntry, lineKind) {
	line = bytes.TrimFunc(line, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' })
	if len(line) == 0 {
		return PageEntry{}, lineBlank
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(line, &obj) != nil || obj == nil {
		return PageEntry{}, lineMalformed
	}
	if _, hasURL := obj["url"]; !hasURL {
		if _, ok := obj["format"]; ok {
			return PageEntry{}, lineHeader
		}
		return PageEntry{}, lineMalformed
	}
	var p PageEntry
	for _, f := range []struct {
		key string
		dst *string
	}{{"url", &p.URL}, {"id", &p.ID}, {"ts", &p.TS}, {"title", &p.Title}, {"text", &p.Text}, {"textWithheld", &p.TextWithheld}} {
		raw, ok := obj[f.key]
		if !ok || isNull(raw) {
			continue
		}
		if json.Unmarshal(raw, f.dst) != nil {
			return PageEntry{}, lineMalformed
		}
	}
	if p.URL == "" {
		return PageEntry{}, lineMalformed
	}
	if raw, ok := obj["textTruncated"]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &p.TextTruncated) != nil {
			return PageEntry{}, lineMalformed
		}
	}
	for k, v := range obj {
		if !knownPageMembers[k] {
			if p.Extra == nil {
				p.Extra = map[string]json.RawMessage{}
			}
			p.Extra[k] = v
		}
	}
	return p, linePage
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// encodePages renders pages.jsonl: the header, then one line per page with
// its text cut at MaxTextRunes.
func encodePages(c Capture) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(pagesHeader + "\n")
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, p := range c.Pages {
		line := pageLine{
			ID:        pageID(c.Created, i, p.URL),
			URL:       p.URL,
			TS:        formatTS(p.Date),
			Behaviors: p.Behaviors,
			NeedsJS:   p.NeedsJS,
		}
		if p.TextWithheld != "" {
			line.TextWithheld = p.TextWithheld
		} else {
			title, _ := truncateRunes(p.Title, MaxTitleRunes)
			text, cut := truncateRunes(p.Text, MaxTextRunes)
			line.Title, line.Text = &title, &text
			line.TextTruncated = cut || p.TextTruncated
		}
		if err := enc.Encode(line); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// truncateRunes cuts s after max runes (an invalid byte counts as one).
func truncateRunes(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i], true
		}
		n++
	}
	return s, false
}

// formatTS is the page and datapackage date format: RFC 3339 in UTC with
// milliseconds, as BrowserHive writes it.
func formatTS(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
