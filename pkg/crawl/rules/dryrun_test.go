package rules

import (
	"errors"
	"strings"
	"testing"
)

func TestTry(t *testing.T) {
	ans, err := Try([]string{"https://www.example.com/"}, []string{"skip:ads.example.com", "follow:same-site"},
		[]string{"https://ads.example.com/x", "https://blog.example.com/", "https://other.example.org/", "not a url"})
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
	ans, err = Try([]string{"https://www.example.com/"}, []string{"skip:Not A Host", "follow:same-site"}, []string{"https://blog.example.com/"})
	if err != nil || ans.OK || ans.URLs[0].Rule != 2 {
		t.Errorf("with an invalid rule 1: %+v, %v", ans, err)
	}
	var spec *SpecError
	if _, err := Try(nil, []string{"follow:same-site", "bogus"}, nil); !errors.As(err, &spec) || spec.Index != 1 {
		t.Errorf("bad spec: %v", err)
	}
	var many *TooManyRulesError
	if _, err := Try(nil, strings.Split(strings.Repeat("follow:any,", MaxRules+1), ",")[:MaxRules+1], nil); !errors.As(err, &many) {
		t.Errorf("too many rules: %v", err)
	}
}
