package crawl

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Strings the ledger refuses in a request body. PostgreSQL text cannot hold
// U+0000 (it fails the write with SQLSTATE 22021, a 500 the runner would
// resend forever), and encoding/json silently turns bytes that are not UTF-8
// and escaped lone surrogates ("\ud800") into U+FFFD, so what was stored
// would not be what was sent. Both are a 400 naming the place; they are
// looked for in the raw bytes, before encoding/json has hidden them.
const (
	reasonNUL     = "must NOT contain U+0000 (NUL)"
	reasonNotUTF8 = "must be valid UTF-8"
)

// textProblem is stringProblem for a Go string that did not come through
// the JSON decoder (a flag, a value built in code).
func textProblem(s string) string {
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return reasonNUL
	case !utf8.ValidString(s):
		return reasonNotUTF8
	}
	return ""
}

// stringProblem returns why the JSON string token raw (quotes included) may
// not be kept, or "" when it may. raw must be valid JSON.
func stringProblem(raw []byte) string {
	_, reason := scanString(raw, 0)
	return reason
}

// scanString reads the string token starting at data[i] (a '"') and returns
// the index just past it, and why its value may not be kept ("" when it
// may). data must be valid JSON.
func scanString(data []byte, i int) (int, string) {
	i++ // the opening quote
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			return i + 1, ""
		case c == '\\':
			if i+1 < len(data) && data[i+1] == 'u' {
				r, ok := hex4(data, i+2)
				if !ok {
					return len(data), reasonNotUTF8
				}
				i += 6
				switch {
				case r == 0:
					return i, reasonNUL
				case 0xD800 <= r && r < 0xDC00:
					// A high surrogate must be followed by an escaped low one.
					if i+1 >= len(data) || data[i] != '\\' || data[i+1] != 'u' {
						return i, reasonNotUTF8
					}
					lo, ok := hex4(data, i+2)
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return i, reasonNotUTF8
					}
					i += 6
				case 0xDC00 <= r && r <= 0xDFFF:
					return i, reasonNotUTF8
				}
				continue
			}
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				return i + 1, reasonNotUTF8
			}
			i += size
		}
	}
	return i, ""
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// checkStrings refuses the JSON value raw (valid JSON) when any string in
// it, property names included, holds U+0000 or is not valid UTF-8. The
// *ValidationError names the first such place below path
// ("body/results/3/skipReason"); a bad property name is named at its object.
func checkStrings(raw []byte, path string) error {
	w := stringWalker{data: raw}
	return w.value(path)
}

type stringWalker struct {
	data []byte
	i    int
}

func (w *stringWalker) space() {
	for w.i < len(w.data) {
		switch w.data[w.i] {
		case ' ', '\t', '\r', '\n':
			w.i++
		default:
			return
		}
	}
}

// value walks one value at w.i, leaving w.i just past it.
func (w *stringWalker) value(path string) error {
	w.space()
	if w.i >= len(w.data) {
		return nil
	}
	switch w.data[w.i] {
	case '"':
		end, reason := scanString(w.data, w.i)
		w.i = end
		if reason != "" {
			return invalid(path, "%s", reason)
		}
		return nil
	case '{':
		w.i++
		for {
			w.space()
			if w.i >= len(w.data) || w.data[w.i] == '}' {
				w.i++
				return nil
			}
			if w.data[w.i] == ',' {
				w.i++
				w.space()
			}
			start := w.i
			end, reason := scanString(w.data, w.i)
			w.i = end
			if reason != "" {
				return invalid(path, "property name %s", reason)
			}
			var key string
			_ = json.Unmarshal(w.data[start:end], &key)
			w.space()
			w.i++ // ':'
			if err := w.value(path + "/" + pointerEscape(key)); err != nil {
				return err
			}
		}
	case '[':
		w.i++
		for n := 0; ; n++ {
			w.space()
			if w.i >= len(w.data) || w.data[w.i] == ']' {
				w.i++
				return nil
			}
			if w.data[w.i] == ',' {
				w.i++
			}
			if err := w.value(fmt.Sprintf("%s/%d", path, n)); err != nil {
				return err
			}
		}
	}
	// A number, true, false or null.
	for w.i < len(w.data) {
		switch w.data[w.i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return nil
		}
		w.i++
	}
	return nil
}

// pointerEscape writes a property name as a JSON Pointer token.
func pointerEscape(key string) string {
	if !strings.ContainsAny(key, "~/") {
		return key
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}
