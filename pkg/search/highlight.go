package search

import (
	"html"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
)

// Snippets are computed here, the same way for both backends, from the
// stored text and the parsed query: the places the query matches are found
// with the analyzers the index uses, and the text around them is cut into
// fragments, HTML-escaped, with each match wrapped in <mark>…</mark>. Nothing
// of the page's text reaches the output unescaped.

// MarkOpen and MarkClose wrap a match in a highlighted fragment.
const (
	MarkOpen  = "<mark>"
	MarkClose = "</mark>"
)

const (
	// fragmentRunes is about how long one fragment is.
	fragmentRunes = 160
	// leadRunes is how much text a fragment shows before its first match.
	leadRunes = 50
	// snippetScanBytes is how much of a page's text is searched for the
	// matches to show: pages run to a million characters, and analysing
	// all of one for a snippet would cost more than the search. A match
	// further in shows the start of the text.
	snippetScanBytes = 256 << 10
)

// Highlight returns up to limit fragments of text around the matches of q,
// in text order, HTML-escaped with the matches marked, and white space
// runs shown as one space. Without a match in the text (a page found by
// its title) it returns the text's start; an empty text gives none.
func Highlight(text string, q Query, limit int) []string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	if strings.TrimSpace(text) == "" || limit <= 0 {
		return nil
	}
	scan := text
	if len(scan) > snippetScanBytes {
		scan = cutValid(scan, snippetScanBytes)
	}
	spans := matchSpans(scan, q)
	if len(spans) == 0 {
		end := runeOffset(text, 0, fragmentRunes)
		return []string{render(text, 0, end, nil)}
	}
	var out []string
	for i := 0; i < len(spans) && len(out) < limit; {
		start := runeOffset(text, spans[i].start, -leadRunes)
		end := max(runeOffset(text, start, fragmentRunes), spans[i].end)
		j := i + 1 // the span that opens the fragment is in it, even an empty one at the end
		for j < len(spans) && spans[j].start < end {
			end = max(end, spans[j].end)
			j++
		}
		out = append(out, render(text, start, end, spans[i:j]))
		i = j
	}
	return out
}

// HighlightTitle returns the whole title HTML-escaped with the matches of
// q marked.
func HighlightTitle(title string, q Query) string {
	title = strings.ToValidUTF8(title, "\uFFFD")
	return render(title, 0, len(title), matchSpans(title, q))
}

// span is bytes [start, end) of a text.
type span struct{ start, end int }

// matchSpans finds where the terms of q match in text, sorted and merged.
func matchSpans(text string, q Query) []span {
	var spans []span
	var views []analysis.TokenStream
	for _, t := range q.Terms {
		if views == nil {
			views = []analysis.TokenStream{tokens(cjkAnalyzer, text), nil}
		}
		spans = append(spans, phraseSpans(views[0], tokens(cjkAnalyzer, t.Text))...)
		if t.English {
			if views[1] == nil {
				views[1] = tokens(enAnalyzer, text)
			}
			spans = append(spans, phraseSpans(views[1], tokens(enAnalyzer, t.Text))...)
		}
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	var out []span
	for _, s := range spans {
		if n := len(out); n > 0 && s.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// phraseSpans finds the places the phrase's tokens occur in text at the
// same relative positions (the way a phrase query matches), as byte spans.
func phraseSpans(text, phrase analysis.TokenStream) []span {
	if len(phrase) == 0 || len(text) == 0 {
		return nil
	}
	byPos := make(map[int]*analysis.Token, len(text))
	for _, tok := range text {
		if _, ok := byPos[tok.Position]; !ok {
			byPos[tok.Position] = tok
		}
	}
	first := phrase[0]
	var out []span
	for _, tok := range text {
		if string(tok.Term) != string(first.Term) {
			continue
		}
		s, ok := span{tok.Start, tok.End}, true
		for _, p := range phrase[1:] {
			at, found := byPos[tok.Position+p.Position-first.Position]
			if !found || string(at.Term) != string(p.Term) {
				ok = false
				break
			}
			s.start, s.end = min(s.start, at.Start), max(s.end, at.End)
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// render escapes text[start:end] with the spans (inside it) marked,
// folding white space runs to one space and marking cut ends with "…".
func render(text string, start, end int, spans []span) string {
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	at := start
	for _, s := range spans {
		s.start, s.end = max(s.start, start), min(s.end, end)
		if s.start >= s.end {
			continue
		}
		b.WriteString(escape(text[at:s.start]))
		b.WriteString(MarkOpen)
		b.WriteString(escape(text[s.start:s.end]))
		b.WriteString(MarkClose)
		at = s.end
	}
	b.WriteString(escape(text[at:end]))
	out := strings.TrimSpace(b.String())
	if end < len(text) && strings.TrimSpace(text[end:]) != "" {
		out += "…"
	}
	return out
}

// escape HTML-escapes s and folds each run of white space (newlines of
// innerText included) to one space.
func escape(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return html.EscapeString(b.String())
}

// runeOffset moves from byte offset at by n runes (backwards when n < 0),
// stopping at the ends of s.
func runeOffset(s string, at, n int) int {
	for ; n > 0 && at < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[at:])
		at += size
	}
	for ; n < 0 && at > 0; n++ {
		_, size := utf8.DecodeLastRuneInString(s[:at])
		at -= size
	}
	return at
}

// cutValid cuts s to at most n bytes without splitting a character.
func cutValid(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
