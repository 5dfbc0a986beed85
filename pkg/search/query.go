package search

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// MaxQueryRunes is the longest query accepted, in characters.
const MaxQueryRunes = 256

// MaxTerms is how many words (or quoted phrases) a query may have.
const MaxTerms = 16

// Query is a parsed search: every hit contains every term, in its title or
// its text.
type Query struct {
	Terms []Term
}

// Term is one word of a query, or one phrase typed in double quotes. A term
// matches where its characters appear in order: CJK text as consecutive
// bigrams (レスポンシブ matches レスポンシブなデザイン; 東京 does not match
// 京都), other text word by word, with case folded. A term without CJK
// characters also matches on English stems (running matches runs).
type Term struct {
	Text string
	// English is set for a term with no CJK character, which is also
	// matched against the English-analysed fields.
	English bool
}

// String is the query in one canonical form (terms separated by a space,
// phrases quoted): two queries with the same String search the same.
func (q Query) String() string {
	parts := make([]string, len(q.Terms))
	for i, t := range q.Terms {
		if strings.ContainsFunc(t.Text, unicode.IsSpace) {
			parts[i] = `"` + t.Text + `"`
		} else {
			parts[i] = t.Text
		}
	}
	return strings.Join(parts, " ")
}

// QueryError is a query that cannot be searched; Reason completes a
// sentence about it ("must not be empty").
type QueryError struct{ Reason string }

func (e *QueryError) Error() string { return "query " + e.Reason }

// ParseQuery checks and splits what a person typed. It is refused when it
// is not valid UTF-8, holds control characters (NUL included), is empty,
// longer than MaxQueryRunes characters or has more than MaxTerms terms, or
// has nothing to search for (only punctuation). Words are separated by
// white space (the ideographic space too); "double quotes" keep a phrase
// together. English stop words ("the", "of") are dropped when other words
// remain: one index ignores them and the other would not.
func ParseQuery(raw string) (Query, error) {
	switch {
	case !utf8.ValidString(raw):
		return Query{}, &QueryError{"must be valid UTF-8"}
	case strings.ContainsFunc(raw, func(r rune) bool { return unicode.IsControl(r) && !unicode.IsSpace(r) }):
		return Query{}, &QueryError{"must not contain control characters"}
	case utf8.RuneCountInString(raw) > MaxQueryRunes:
		return Query{}, &QueryError{"must NOT have more than 256 characters"}
	case strings.TrimSpace(raw) == "":
		return Query{}, &QueryError{"must not be empty"}
	}
	words := splitTerms(raw)
	if len(words) > MaxTerms {
		return Query{}, &QueryError{"must NOT have more than 16 words"}
	}
	var terms, stops []Term
	for _, w := range words {
		if len(tokens(cjkAnalyzer, w)) == 0 {
			continue // punctuation only
		}
		t := Term{Text: w, English: !hasCJK(w)}
		if t.English && len(tokens(enAnalyzer, w)) == 0 {
			stops = append(stops, t)
			continue
		}
		terms = append(terms, t)
	}
	if len(terms) == 0 {
		terms = stops
	}
	if len(terms) == 0 {
		return Query{}, &QueryError{"has nothing to search for (only punctuation)"}
	}
	return Query{Terms: terms}, nil
}

// splitTerms splits at white space outside double quotes; a quote left
// open runs to the end. White space inside a phrase becomes one space.
func splitTerms(raw string) []string {
	var out []string
	var cur strings.Builder
	quoted, space := false, false
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for _, r := range raw {
		switch {
		case r == '"' || r == '“' || r == '”':
			flush()
			quoted = !quoted
		case unicode.IsSpace(r) && !quoted:
			flush()
		case unicode.IsSpace(r):
			space = true
			continue
		default:
			if space && cur.Len() > 0 {
				cur.WriteByte(' ')
			}
			cur.WriteRune(r)
		}
		space = false
	}
	flush()
	return out
}

// hasCJK says whether s holds a Han, Hiragana, Katakana or Hangul
// character: the scripts the CJK analyzer cuts into bigrams.
func hasCJK(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
	})
}

// The two analyzers every field is indexed with, taken from Bleve and used
// by both backends' queries and by the highlighter: cjk (Unicode words,
// width folding, lower case, CJK bigrams) and en (possessives, lower case,
// English stop words, Porter stems). OpenSearch's built-in cjk and english
// analyzers do the same.
var cjkAnalyzer, enAnalyzer = mustAnalyzer(cjk.AnalyzerName), mustAnalyzer(en.AnalyzerName)

func mustAnalyzer(name string) analysis.Analyzer {
	a, err := registry.NewCache().AnalyzerNamed(name)
	if err != nil {
		panic("search: analyzer " + name + ": " + err.Error())
	}
	return a
}

func tokens(a analysis.Analyzer, s string) analysis.TokenStream { return a.Analyze([]byte(s)) }

// NewRequest checks a search as asked: the query text, the page size (0
// is DefaultLimit) and an optional cursor. Errors are *ledger.FieldError
// naming "q", "limit" or "cursor"; each edge names the place its own way
// (the API's querystring/q, the CLI's QUERY and --limit).
func NewRequest(q string, limit int, cursor string) (Request, error) {
	query, err := ParseQuery(q)
	var qe *QueryError
	if errors.As(err, &qe) {
		return Request{}, &ledger.FieldError{Field: "q", Reason: qe.Reason, Err: err}
	}
	if err != nil {
		return Request{}, err
	}
	req := Request{Query: query, Limit: DefaultLimit}
	if limit != 0 {
		if limit < 1 || limit > MaxLimit {
			return Request{}, &ledger.FieldError{Field: "limit", Reason: fmt.Sprintf("must be an integer between 1 and %d", MaxLimit)}
		}
		req.Limit = limit
	}
	if cursor != "" {
		if err := CheckCursor(cursor); err != nil {
			return Request{}, &ledger.FieldError{Field: "cursor", Reason: err.Error(), Err: err}
		}
		req.Cursor = cursor
	}
	return req, nil
}
