package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// URLDecision says which rule decides one URL (a dry run on any link).
type URLDecision struct {
	URL     string       `json:"url"`
	Rule    int          `json:"rule"`
	Action  rules.Action `json:"action,omitempty"`
	Pattern string       `json:"pattern,omitempty"`
	Error   string       `json:"error,omitempty"`
}

// RulesCheckAnswer is the body of GET /api/crawl-rules/check and the JSON of
// `ledgerctl rules check`.
type RulesCheckAnswer struct {
	rules.Report
	URLs []URLDecision `json:"urls,omitempty"`
}

// RulesCheck runs the checks of POST /api/crawls on ?seed=…&rule=action:pattern
// (both repeatable; no rule means the default) and decides each ?url=… with
// them. It is the one function behind the endpoint and the CLI. A rule that
// is not action:pattern is a 400; everything else is reported in the answer.
func RulesCheck(q url.Values) (RulesCheckAnswer, error) {
	var rs []rules.Rule
	for i, spec := range q["rule"] {
		r, err := rules.ParseSpec(spec)
		if err != nil {
			return RulesCheckAnswer{}, &BadRequest{Message: fmt.Sprintf("querystring/rule/%d %v", i, err)}
		}
		rs = append(rs, r)
	}
	if len(rs) > rules.MaxRules {
		return RulesCheckAnswer{}, &BadRequest{Message: fmt.Sprintf("querystring/rule must NOT have more than %d items", rules.MaxRules)}
	}
	if len(rs) == 0 {
		rs = rules.Default()
	}
	ans := RulesCheckAnswer{Report: rules.Check(q["seed"], rs)}
	if len(q["url"]) == 0 {
		return ans, nil
	}
	var seeds []rules.URL
	for _, s := range q["seed"] {
		if u, err := rules.ParseURL(s); err == nil {
			seeds = append(seeds, u)
		}
	}
	// Decide with the rules whose patterns are valid, in their places.
	var usable []rules.Rule
	index := map[int]int{}
	for i, r := range rs {
		if _, _, err := rules.NormalizePattern(r.Pattern); err == nil {
			index[len(usable)+1] = i + 1
			usable = append(usable, r)
		}
	}
	set, err := rules.NewSet(usable, seeds)
	if err != nil {
		return RulesCheckAnswer{}, err
	}
	for _, raw := range q["url"] {
		u, err := rules.ParseURL(raw)
		if err != nil {
			ans.URLs = append(ans.URLs, URLDecision{URL: raw, Error: err.Error()})
			continue
		}
		d := set.Decide(u)
		out := URLDecision{URL: u.Normalized, Rule: index[d.Rule], Action: d.Action}
		if d.Rule > 0 {
			out.Pattern = set.Rules()[d.Rule-1].Pattern
		}
		ans.URLs = append(ans.URLs, out)
	}
	return ans, nil
}

func (s *Server) rulesCheck() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (RulesCheckAnswer, error) { return RulesCheck(r.URL.Query()) },
		func(_ context.Context, _ identity.Identity, ans RulesCheckAnswer) (any, error) { return ans, nil })
}
