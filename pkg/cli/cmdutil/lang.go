package cmdutil

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/capture-ledger/ledgerctl/pkg/i18n"
)

// Lang is the language of the sentences a command prints for people:
// English, or Japanese when the terminal's locale prefers it (LC_ALL, else
// LC_MESSAGES, else LANG; see i18n.FromLocale). It is read from the process
// environment, as settings are, but never from .env files: the locale is the
// reader's, not the deployment's. --json output never depends on it.
func (f *Factory) Lang() i18n.Lang {
	return i18n.FromLocale(func(name string) string { v, _ := f.LookupEnv(name); return v })
}

// Words are a command's sentences for people, by key, in English and
// Japanese ({English, Japanese}), each a fmt format whose arguments both
// take (Japanese may take them in another order: %[2]s).
type Words map[string][2]string

// Say is the sentence key in lang, with args. A key that is not there is
// a programming error, and panics.
func (w Words) Say(lang i18n.Lang, key string, args ...any) string {
	s, ok := w[key]
	if !ok {
		panic("cmdutil: no words for " + key)
	}
	f := s[0]
	if lang == i18n.Japanese {
		f = s[1]
	}
	return fmt.Sprintf(f, args...)
}

// verb finds a fmt verb: %%, or % with flags, width and precision and an
// explicit argument index before or after them, then the verb's letter.
var verb = regexp.MustCompile(`%(%|[-+# 0]*(?:\[(\d+)\])?\d*(?:\.\d+)?(?:\[(\d+)\])?[a-zA-Z])`)

// Mismatched lists the keys whose English and Japanese take different
// arguments: each verb's argument (its explicit index, or the one fmt
// gives it) with its letter, so a sentence can say its arguments in
// another order but never leave one out, add one or read one as another
// kind.
func (w Words) Mismatched() []string {
	args := func(f string) string {
		var out []string
		next := 1 // as fmt: a verb without an index takes the one after the last
		for _, m := range verb.FindAllStringSubmatch(f, -1) {
			if m[1] == "%" {
				continue
			}
			if idx := m[2] + m[3]; idx != "" {
				next, _ = strconv.Atoi(idx)
			}
			out = append(out, fmt.Sprintf("%d%s", next, m[1][len(m[1])-1:]))
			next++
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	var bad []string
	for k, s := range w {
		if args(s[0]) != args(s[1]) {
			bad = append(bad, k)
		}
	}
	slices.Sort(bad)
	return bad
}
