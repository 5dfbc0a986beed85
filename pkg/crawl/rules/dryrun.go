package rules

import (
	"fmt"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// URLDecision says which rule decides one URL (a dry run on any link).
type URLDecision struct {
	URL     string `json:"url"`
	Rule    int    `json:"rule"`
	Action  Action `json:"action,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	Error   string `json:"error,omitempty"`
}

// DryRun is the answer of GET /api/crawl-rules/check and the JSON of
// `ledgerctl rules check`: the checks a crawl start runs, and the decision
// on each URL asked about.
type DryRun struct {
	Report
	URLs []URLDecision `json:"urls,omitempty"`
}

// CheckRequest is a rules check as a caller asks it: the seeds, the rules
// as ACTION:PATTERN texts in order (none means the default list), and URLs
// to decide with them.
type CheckRequest struct {
	Seeds []string
	Rules []string
	URLs  []string
}

// FieldRule names the rules in a *ledger.FieldError: "rule" for the list,
// "rule/N" for the rule at N (from 0); FieldSeed and FieldURL name a seed
// and a URL to decide the same way ("seed/N", "url/N").
const (
	FieldRule = "rule"
	FieldSeed = "seed"
	FieldURL  = "url"
)

// TooManyRulesError is a rule list longer than MaxRules.
type TooManyRulesError struct{ N int }

func (e *TooManyRulesError) Error() string {
	return fmt.Sprintf("must NOT have more than %d items (got %d)", MaxRules, e.N)
}

// Try is the rules check of GET /api/crawl-rules/check and `ledgerctl rules
// check`, the one function behind both: it runs the checks of a crawl start
// on the seeds and rules, and decides each URL with the rules whose patterns
// are valid, in their places. A rule that is not ACTION:PATTERN, or more than
// MaxRules, or a seed, rule or URL holding U+0000 or bytes that are not
// UTF-8, is a *ledger.FieldError (on "rule/N", "seed/N", "url/N", or "rule"
// holding a *TooManyRulesError) that each edge names its own way;
// everything else is reported in the answer.
func Try(req CheckRequest) (DryRun, error) {
	seeds, specs, urls := req.Seeds, req.Rules, req.URLs
	// What the ledger would not keep as it was sent is refused, never
	// reported back rewritten.
	for _, f := range []struct {
		field string
		texts []string
	}{{FieldSeed, seeds}, {FieldRule, specs}, {FieldURL, urls}} {
		for i, t := range f.texts {
			if reason := ledger.TextProblem(t); reason != "" {
				return DryRun{}, &ledger.FieldError{Field: fmt.Sprintf("%s/%d", f.field, i), Reason: reason}
			}
		}
	}
	var rs []Rule
	for i, spec := range specs {
		r, err := ParseSpec(spec)
		if err != nil {
			return DryRun{}, &ledger.FieldError{Field: fmt.Sprintf("%s/%d", FieldRule, i), Reason: err.Error(), Err: err}
		}
		rs = append(rs, r)
	}
	if len(rs) > MaxRules {
		many := &TooManyRulesError{N: len(rs)}
		return DryRun{}, &ledger.FieldError{Field: FieldRule, Reason: many.Error(), Err: many}
	}
	if len(rs) == 0 {
		rs = Default()
	}
	ans := DryRun{Report: Check(seeds, rs)}
	if len(urls) == 0 {
		return ans, nil
	}
	var parsed []URL
	for _, s := range seeds {
		if u, err := ParseURL(s); err == nil {
			parsed = append(parsed, u)
		}
	}
	var usable []Rule
	index := map[int]int{}
	for i, r := range rs {
		if _, _, err := NormalizePattern(r.Pattern); err == nil {
			index[len(usable)+1] = i + 1
			usable = append(usable, r)
		}
	}
	set, err := NewSet(usable, parsed)
	if err != nil {
		return DryRun{}, err
	}
	for _, raw := range urls {
		u, err := ParseURL(raw)
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
