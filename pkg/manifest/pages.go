package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"unicode"
)

// Page is one page line of a WACZ's `pages/pages.jsonl`, the source of a
// search document. Absent or non-string text members read as "".
type Page struct {
	ID    string
	URL   string // never empty
	TS    string // as written (RFC 3339); not parsed
	Title string
	// Text is the rendered page text (document.body.innerText), verbatim.
	Text string
	// TextTruncated is true only when the line says `"textTruncated": true`.
	TextTruncated bool
	// TextWithheld is BrowserHive's DocumentWithheld reason (url-policy,
	// content-type, no-archive, deny, unattributed, or a later one); nil when
	// absent. It keeps "withheld by policy" apart from "empty capture".
	TextWithheld *string
}

// DecodePages reads `pages/pages.jsonl`. The input is split on "\n" and each
// line trimmed; blank lines, lines that are not JSON, JSON that is not an
// object, and objects without a non-empty string `url` are skipped (that
// drops the `{"format":"json-pages-1.0",…}` header line). Lines have no length
// limit: a page's text alone may be a million characters.
//
// The only errors are the reader's.
func DecodePages(r io.Reader) ([]Page, error) {
	br := bufio.NewReader(r)
	pages := []Page{}
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if p, ok := decodePage(line); ok {
				pages = append(pages, p)
			}
		}
		if errors.Is(err, io.EOF) {
			return pages, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// trimSpace trims what JavaScript's String.prototype.trim does, which
// includes a byte order mark.
func trimSpace(b []byte) []byte {
	return bytes.TrimFunc(b, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' })
}

func decodePage(line []byte) (Page, bool) {
	line = trimSpace(line)
	if len(line) == 0 {
		return Page{}, false
	}
	obj, ok := asObject(line)
	if !ok {
		return Page{}, false
	}
	var p Page
	if raw, ok := obj["url"]; ok {
		p.URL, _ = asString(raw)
	}
	if p.URL == "" {
		return Page{}, false
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"id", &p.ID}, {"ts", &p.TS}, {"title", &p.Title}, {"text", &p.Text}} {
		if raw, ok := obj[f.key]; ok {
			*f.dst, _ = asString(raw)
		}
	}
	if raw, ok := obj["textTruncated"]; ok {
		p.TextTruncated, _ = asBool(raw)
	}
	if raw, ok := obj["textWithheld"]; ok {
		if s, ok := asString(raw); ok {
			p.TextWithheld = &s
		}
	}
	return p, true
}
