package rules

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

func TestTry(t *testing.T) {
	ans, err := Try(CheckRequest{Seeds: []string{"https://www.example.com/"}, Rules: []string{"skip:ads.example.com", "follow:same-site"},
		URLs: []string{"https://ads.example.com/x", "https://blog.example.com/", "https://other.example.org/", "not a url"}})
	if err != nil || !ans.OK || len(ans.URLs) != 4 {
		t.Fatalf("Try = %+v, %v", ans, err)
	}
	want := []struct {
		rule   int
		action Action
	}{{1, Skip}, {2, Follow}, {0, Skip}} // no rule matches: dropped
	for i, w := range want {
		if ans.URLs[i].Rule != w.rule || ans.URLs[i].Action != w.action {
			t.Errorf("url %d: %+v, want rule %d %s", i, ans.URLs[i], w.rule, w.action)
		}
	}
	if ans.URLs[3].Error == "" {
		t.Errorf("an unreadable URL has no error: %+v", ans.URLs[3])
	}
	// An invalid pattern keeps its place: rule numbers stay those given.
	ans, err = Try(CheckRequest{Seeds: []string{"https://www.example.com/"}, Rules: []string{"skip:Not A Host", "follow:same-site"}, URLs: []string{"https://blog.example.com/"}})
	if err != nil || ans.OK || ans.URLs[0].Rule != 2 {
		t.Errorf("with an invalid rule 1: %+v, %v", ans, err)
	}
	// A rule that is not ACTION:PATTERN names its place; too many rules name
	// the list.
	var fe *ledger.FieldError
	if _, err := Try(CheckRequest{Rules: []string{"follow:same-site", "bogus"}}); !errors.As(err, &fe) || fe.Field != "rule/1" || fe.Reason == "" {
		t.Errorf("bad spec: %#v", err)
	}
	var many *TooManyRulesError
	_, err = Try(CheckRequest{Rules: strings.Split(strings.Repeat("follow:any,", MaxRules+1), ",")[:MaxRules+1]})
	if !errors.As(err, &fe) || fe.Field != "rule" || !errors.As(err, &many) || many.N != MaxRules+1 {
		t.Errorf("too many rules: %#v", err)
	}
}

// FuzzTry: whatever a caller sends as seeds, rules and URLs (NUL, invalid
// UTF-8, no colon), the check answers, or refuses with a field error naming
// a rule — never another error or a panic; an answer has one report per
// seed and per rule given (or the default rule), one decision per URL, and
// says ok only when every seed and rule passed.
func FuzzTry(f *testing.F) {
	f.Add("https://www.example.com/", "follow:same-site", "https://www.example.com/a")
	f.Add("ftp://x/", "skip:ads.example.com", "not a url")
	f.Add("https://e.com/\x00", "follow:https://e.com/\xff", "\xff")
	f.Add("", "", "")
	f.Add("https://xn--n3h.com/", "capture:Not A Host", "https://[::1]/")
	f.Fuzz(func(t *testing.T, seed, rule, u string) {
		var req CheckRequest
		for _, s := range strings.Split(seed, " ") {
			if s != "" {
				req.Seeds = append(req.Seeds, s)
			}
		}
		if rule != "" {
			req.Rules = strings.Split(rule, "|")
		}
		if u != "" {
			req.URLs = []string{u}
		}
		ans, err := Try(req)
		if err != nil {
			var fe *ledger.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("%+v: not a field error: %T %v", req, err, err)
			}
			// A seed or URL is refused only for what the ledger would not
			// keep as sent, and then the value named is that one.
			name, at, _ := strings.Cut(fe.Field, "/")
			texts := map[string][]string{FieldSeed: req.Seeds, FieldURL: req.URLs, FieldRule: req.Rules}[name]
			i, convErr := strconv.Atoi(at)
			switch {
			case name == FieldRule && (at == "" || convErr == nil):
			case (name == FieldSeed || name == FieldURL) && convErr == nil && i < len(texts) && ledger.TextProblem(texts[i]) == fe.Reason:
			default:
				t.Fatalf("%+v: refused at %q (%s)", req, fe.Field, fe.Reason)
			}
			return
		}
		for _, text := range slices.Concat(req.Seeds, req.Rules, req.URLs) {
			if ledger.TextProblem(text) != "" {
				t.Fatalf("%+v: %q answered, not refused", req, text)
			}
		}
		wantRules := len(req.Rules)
		if wantRules == 0 {
			wantRules = 1
		}
		if len(ans.Seeds) != len(req.Seeds) || len(ans.Rules) != wantRules || len(ans.URLs) != len(req.URLs) {
			t.Fatalf("%+v: %d seeds, %d rules, %d urls answered", req, len(ans.Seeds), len(ans.Rules), len(ans.URLs))
		}
		if ans.OK != (ans.Err() == nil && len(req.Seeds) > 0) {
			t.Fatalf("%+v: ok %v but Err %v", req, ans.OK, ans.Err())
		}
		for _, d := range ans.URLs {
			if d.Error == "" && !utf8.ValidString(d.URL) {
				t.Fatalf("a decided URL is not valid UTF-8: %q", d.URL)
			}
		}
	})
}
