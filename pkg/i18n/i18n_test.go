package i18n_test

import (
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/i18n"
)

func TestFromAcceptLanguage(t *testing.T) {
	for header, want := range map[string]i18n.Lang{
		"":                                    i18n.English,
		"ja":                                  i18n.Japanese,
		"ja-JP":                               i18n.Japanese,
		"ja-JP, ja;q=0.9":                     i18n.Japanese,
		"JA-jp":                               i18n.Japanese,
		"ja_JP":                               i18n.Japanese,
		"ja-JP,ja;q=0.9,en-US;q=0.8,en;q=0.7": i18n.Japanese,
		"en":                                  i18n.English,
		"en-US,en;q=0.9,ja;q=0.8":             i18n.English,
		"*":                                   i18n.English,
		"fr":                                  i18n.English,
		"de-DE, fr;q=0.8":                     i18n.English,
		"fr, ja;q=0.5":                        i18n.Japanese, // English is not acceptable, Japanese is
		"ja;q=0":                              i18n.English,
		"ja;q=0, *":                           i18n.English,
		"*;q=0.5, ja;q=0.4":                   i18n.English,
		"*;q=0.5, ja":                         i18n.Japanese,
		"en;q=0.5, ja;q=0.5":                  i18n.English, // tie: the first named
		"ja;q=0.5, en;q=0.5":                  i18n.Japanese,
		"jav":                                 i18n.English, // Javanese is not Japanese
		"ja;q=2":                              i18n.English, // malformed weight: ignored
		"ja;q=NaN":                            i18n.English,
		"ja;q=":                               i18n.English,
		"ja;level=1":                          i18n.Japanese,
		" , ;, ja ;  q = 0.3 ":                i18n.Japanese,
		"en;q=0, ja;q=0.001":                  i18n.Japanese,
	} {
		if got := i18n.FromAcceptLanguage(header); got != want {
			t.Errorf("%q: got %s, want %s", header, got, want)
		}
	}
}

func TestFromLocale(t *testing.T) {
	for _, tc := range []struct {
		all, messages, lang string
		want                i18n.Lang
	}{
		{"", "", "", i18n.English},
		{"", "", "ja_JP.UTF-8", i18n.Japanese},
		{"", "", "ja", i18n.Japanese},
		{"", "", "en_US.UTF-8", i18n.English},
		{"", "", "C", i18n.English},
		{"", "", "POSIX", i18n.English},
		{"", "", "C.UTF-8", i18n.English},
		{"C", "", "ja_JP.UTF-8", i18n.English},           // LC_ALL beats LANG
		{"", "en_US.UTF-8", "ja_JP.UTF-8", i18n.English}, // LC_MESSAGES beats LANG
		{"ja_JP.eucJP", "en_US.UTF-8", "", i18n.Japanese},
		{"", "ja_JP@euro", "C", i18n.Japanese},
		{"", "", "jv_ID", i18n.English},
	} {
		env := map[string]string{"LC_ALL": tc.all, "LC_MESSAGES": tc.messages, "LANG": tc.lang}
		if got := i18n.FromLocale(func(k string) string { return env[k] }); got != tc.want {
			t.Errorf("LC_ALL=%q LC_MESSAGES=%q LANG=%q: got %s, want %s", tc.all, tc.messages, tc.lang, got, tc.want)
		}
	}
}
