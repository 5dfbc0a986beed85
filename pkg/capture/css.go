package capture

import (
	"path"
	"strings"
	"unicode/utf8"
)

// CSSRef is a URL a stylesheet names: in url(…), in @import "…", or as a
// string inside image-set(…).
type CSSRef struct {
	URL    string // as written, escapes decoded, not resolved
	Import bool   // named by @import
}

func (r CSSRef) kind() resourceKind {
	if r.Import {
		return kindStylesheet
	}
	p := strings.ToLower(r.URL)
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	switch path.Ext(p) {
	case ".woff", ".woff2", ".ttf", ".otf", ".eot":
		return kindFont
	case ".css":
		return kindStylesheet
	}
	return kindImage
}

// CSSURLs returns the URLs a stylesheet (or a style attribute) names, in
// order: url() tokens (quoted or not), @import strings, and the strings of
// image-set(). Comments are skipped, CSS escapes decoded; empty URLs and
// fragment-only URLs (#id, used by SVG filters) are dropped. It never fails:
// malformed CSS yields what could be read.
func CSSURLs(css string) []CSSRef {
	s := cssScanner{src: css}
	var out []CSSRef
	add := func(u string, imp bool) {
		u = strings.TrimFunc(u, func(r rune) bool { return r <= ' ' })
		if u == "" || strings.HasPrefix(u, "#") {
			return
		}
		out = append(out, CSSRef{URL: u, Import: imp})
	}
	importPending := false // after @import, until its URL or a ';'
	imageSet := []int{}    // paren depths at which an image-set( opened
	depth := 0
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == '/' && s.peek(1) == '*':
			end := strings.Index(s.src[s.i+2:], "*/")
			if end < 0 {
				return out
			}
			s.i += 2 + end + 2
		case c == '"' || c == '\'':
			str := s.readString()
			if importPending {
				add(str, true)
				importPending = false
			} else if len(imageSet) > 0 {
				add(str, false)
			}
		case c == '@':
			s.i++
			name := strings.ToLower(s.readIdent())
			importPending = name == "import"
		case c == ';' || c == '{' || c == '}':
			importPending = false
			s.i++
		case c == '(':
			depth++
			s.i++
		case c == ')':
			if n := len(imageSet); n > 0 && imageSet[n-1] == depth {
				imageSet = imageSet[:n-1]
			}
			if depth > 0 {
				depth--
			}
			s.i++
		case c == '\\' || isNameStart(c) || c == '-':
			name := strings.ToLower(s.readIdent())
			if name == "" { // a lone '-' or an escape that decoded to nothing
				s.i++
				continue
			}
			if s.peek(0) != '(' {
				continue
			}
			switch name {
			case "url":
				s.i++ // (
				u, ok := s.readURL()
				if ok {
					add(u, importPending)
					importPending = false
				} else {
					// url( followed by a string behaves as a function.
					depth++
				}
			case "image-set", "-webkit-image-set":
				depth++
				s.i++
				imageSet = append(imageSet, depth)
			}
		default:
			s.i++
		}
	}
	return out
}

type cssScanner struct {
	src string
	i   int
}

func (s *cssScanner) peek(k int) byte {
	if s.i+k < len(s.src) {
		return s.src[s.i+k]
	}
	return 0
}

func isNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isNameChar(c byte) bool {
	return isNameStart(c) || c >= '0' && c <= '9' || c == '-'
}

func isCSSSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// readIdent reads a name (with escapes) starting at s.i.
func (s *cssScanner) readIdent() string {
	var b strings.Builder
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == '\\':
			if s.peek(1) == '\n' || s.i+1 >= len(s.src) {
				return b.String()
			}
			s.i++
			b.WriteString(s.readEscape())
		case isNameChar(c):
			b.WriteByte(c)
			s.i++
		default:
			return b.String()
		}
	}
	return b.String()
}

// readEscape decodes the escape whose backslash was just consumed.
func (s *cssScanner) readEscape() string {
	if s.i >= len(s.src) {
		return "\uFFFD"
	}
	j := s.i
	for j < len(s.src) && j-s.i < 6 && isHex(s.src[j]) {
		j++
	}
	if j == s.i {
		r, n := utf8.DecodeRuneInString(s.src[s.i:])
		s.i += n
		return string(r)
	}
	var v rune
	for _, c := range s.src[s.i:j] {
		v = v*16 + rune(hexVal(byte(c)))
	}
	s.i = j
	if s.i < len(s.src) && isCSSSpace(s.src[s.i]) {
		if s.src[s.i] == '\r' && s.peek(1) == '\n' {
			s.i++
		}
		s.i++
	}
	if v == 0 || v > utf8.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
		return "\uFFFD"
	}
	return string(v)
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// readString reads a quoted string starting at its quote.
func (s *cssScanner) readString() string {
	q := s.src[s.i]
	s.i++
	var b strings.Builder
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == q:
			s.i++
			return b.String()
		case c == '\n':
			return b.String() // bad string: ends at the newline
		case c == '\\':
			s.i++
			if s.i >= len(s.src) {
				return b.String()
			}
			if s.src[s.i] == '\n' {
				s.i++
				continue
			}
			if s.src[s.i] == '\r' {
				s.i++
				if s.peek(0) == '\n' {
					s.i++
				}
				continue
			}
			b.WriteString(s.readEscape())
		default:
			b.WriteByte(c)
			s.i++
		}
	}
	return b.String()
}

// readURL reads the rest of url( after its parenthesis. A quoted argument is
// read as a string; ok is false when the argument is neither a string nor
// an unquoted URL (the scanner is then left where it was).
func (s *cssScanner) readURL() (string, bool) {
	start := s.i
	for s.i < len(s.src) && isCSSSpace(s.src[s.i]) {
		s.i++
	}
	if s.i < len(s.src) && (s.src[s.i] == '"' || s.src[s.i] == '\'') {
		u := s.readString()
		for s.i < len(s.src) && isCSSSpace(s.src[s.i]) {
			s.i++
		}
		if s.peek(0) == ')' {
			s.i++
		}
		return u, true
	}
	var b strings.Builder
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == ')':
			s.i++
			return b.String(), true
		case isCSSSpace(c):
			for s.i < len(s.src) && isCSSSpace(s.src[s.i]) {
				s.i++
			}
			if s.peek(0) == ')' {
				s.i++
				return b.String(), true
			}
			return b.String(), true // bad url: keep what was read
		case c == '\\':
			if s.peek(1) == '\n' {
				return b.String(), true
			}
			s.i++
			b.WriteString(s.readEscape())
		case c == '"' || c == '\'' || c == '(':
			// Not a URL token; let the main loop read it.
			s.i = start
			return "", false
		default:
			b.WriteByte(c)
			s.i++
		}
	}
	return b.String(), true
}
