// Package i18n chooses the reader's language: English by default, Japanese
// when the browser's Accept-Language or the terminal's locale prefers it.
// It only chooses; each caller keeps its own texts (English and
// Japanese). Standard library only.
package i18n

import (
	"strconv"
	"strings"
)

// Lang is a language ledgerctl speaks, named by its BCP 47 tag.
type Lang string

// The languages ledgerctl speaks. English is the default.
const (
	English  Lang = "en"
	Japanese Lang = "ja"
)

// Supported lists the languages, the default first.
var Supported = []Lang{English, Japanese}

// String is the BCP 47 tag (for Content-Language and <html lang>).
func (l Lang) String() string { return string(l) }

// match is the supported language a language range names, or "" for none
// (and for "*", which the caller treats separately).
func match(tag string) Lang {
	tag = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(tag), "_", "-"))
	for _, l := range Supported {
		if tag == string(l) || strings.HasPrefix(tag, string(l)+"-") {
			return l
		}
	}
	return ""
}

// FromAcceptLanguage chooses from an Accept-Language header (RFC 9110
// §12.5.4): the supported language with the highest q-value (a language
// named twice, as ja-JP and ja, takes its higher weight), the one named first
// on a tie; "*" stands for every supported language not named, after those
// named; q=0 refuses.
// A missing, empty, malformed or unsupported header gives English. Any input
// gives a supported language and never panics.
func FromAcceptLanguage(header string) Lang {
	var order []Lang // supported languages in the order first named
	weight := map[Lang]float64{}
	starQ := -1.0
	for _, item := range strings.Split(header, ",") {
		tag, params, _ := strings.Cut(item, ";")
		tag = strings.TrimSpace(tag)
		if tag == "" {
			continue
		}
		q, ok := qvalue(params)
		if !ok {
			continue // a malformed entry says nothing
		}
		if tag == "*" {
			starQ = max(starQ, q)
			continue
		}
		l := match(tag)
		if l == "" {
			continue
		}
		if w, seen := weight[l]; !seen {
			order = append(order, l)
			weight[l] = q
		} else {
			weight[l] = max(w, q) // ja-JP;q=0.9, ja;q=0.5: the reader takes ja at 0.9
		}
	}
	if starQ > 0 {
		for _, l := range Supported {
			if _, seen := weight[l]; !seen {
				order = append(order, l)
				weight[l] = starQ
			}
		}
	}
	best, bestQ := English, 0.0
	for _, l := range order {
		if weight[l] > bestQ {
			best, bestQ = l, weight[l]
		}
	}
	return best
}

// qvalue reads the weight in an entry's parameters ("q=0.8"); none is 1.
// A weight that is not a number in [0, 1] makes the entry malformed.
func qvalue(params string) (float64, bool) {
	q := 1.0
	for _, p := range strings.Split(params, ";") {
		name, val, found := strings.Cut(strings.TrimSpace(p), "=")
		if !found || !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || !(f >= 0 && f <= 1) { // also refuses NaN
			return 0, false
		}
		q = f
	}
	return q, true
}

// FromLocale chooses from the POSIX locale variables, read through getenv:
// the first non-empty of LC_ALL, LC_MESSAGES and LANG decides; Japanese when
// it starts with "ja" ("ja", "ja_JP.UTF-8", "ja-JP"), English otherwise
// (including "C", "POSIX" and nothing set).
func FromLocale(getenv func(string) string) Lang {
	for _, name := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		v := getenv(name)
		if v == "" {
			continue
		}
		// "ja_JP.UTF-8@modifier": the language is what precedes _ . @ or -.
		lang := v
		if i := strings.IndexAny(lang, "_.@-"); i >= 0 {
			lang = lang[:i]
		}
		if strings.EqualFold(lang, "ja") {
			return Japanese
		}
		return English
	}
	return English
}
