package strictjson

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// ScanString reads the JSON string token starting at data[i] (a '"') and
// returns the index just past it, and why its value may not be kept ("" when
// it may): ledger.ReasonNUL for U+0000, raw or escaped, and
// ledger.ReasonNotUTF8 for bytes that are not UTF-8 and for escaped lone
// surrogates ("\ud800"), which encoding/json would silently turn into
// U+FFFD. data must be valid JSON.
func ScanString(data []byte, i int) (int, string) {
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
					return len(data), ledger.ReasonNotUTF8
				}
				i += 6
				switch {
				case r == 0:
					return i, ledger.ReasonNUL
				case 0xD800 <= r && r < 0xDC00:
					// A high surrogate must be followed by an escaped low one.
					if i+1 >= len(data) || data[i] != '\\' || data[i+1] != 'u' {
						return i, ledger.ReasonNotUTF8
					}
					lo, ok := hex4(data, i+2)
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return i, ledger.ReasonNotUTF8
					}
					i += 6
				case 0xDC00 <= r && r <= 0xDFFF:
					return i, ledger.ReasonNotUTF8
				}
				continue
			}
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				return i + 1, ledger.ReasonNotUTF8
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

// reasonTwice is the refusal of a property given twice in one object.
const reasonTwice = "must NOT appear more than once"

// CheckStrings refuses the JSON value raw (valid JSON) when any string in
// it, property names included, holds U+0000 or is not valid UTF-8, or when
// an object holds a property twice. The *ledger.FieldError names the first
// such place ("results/3/skipReason"); a bad property name is named at its
// object, a property given twice at itself.
func CheckStrings(raw []byte) error {
	w := stringWalker{data: raw}
	return w.value("")
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
func (w *stringWalker) value(field string) error {
	w.space()
	if w.i >= len(w.data) {
		return nil
	}
	switch w.data[w.i] {
	case '"':
		end, reason := ScanString(w.data, w.i)
		w.i = end
		if reason != "" {
			return refuse(field, reason)
		}
		return nil
	case '{':
		w.i++
		var seen map[string]bool
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
			end, reason := ScanString(w.data, w.i)
			w.i = end
			if reason != "" {
				return refuse(field, "property name "+reason)
			}
			var key string
			_ = json.Unmarshal(w.data[start:end], &key)
			// encoding/json keeps the last of a key given twice (and
			// "a" and "\u0061" are one key): a body is refused rather
			// than read differently by different readers.
			if seen[key] {
				return refuse(Join(field, pointerEscape(key)), reasonTwice)
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[key] = true
			w.space()
			w.i++ // ':'
			if err := w.value(Join(field, pointerEscape(key))); err != nil {
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
			if err := w.value(Join(field, strconv.Itoa(n))); err != nil {
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

// Join is the place of key inside the place parent ("" is the root).
func Join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "/" + key
}
