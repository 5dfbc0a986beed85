package rules

import "fmt"

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

// SpecError is a rule given as text that is not ACTION:PATTERN; Index counts
// from 0 in the order given. Each caller names the place its own way (the
// API as querystring/rule/N, the CLI as --rule #N).
type SpecError struct {
	Index int
	Err   error
}

func (e *SpecError) Error() string { return fmt.Sprintf("rule %d: %v", e.Index, e.Err) }

func (e *SpecError) Unwrap() error { return e.Err }

// TooManyRulesError is a rule list longer than MaxRules.
type TooManyRulesError struct{ N int }

func (e *TooManyRulesError) Error() string {
	return fmt.Sprintf("must NOT have more than %d items (got %d)", MaxRules, e.N)
}

// Try runs the checks of a crawl start on seeds and rules given as
// ACTION:PATTERN texts (none means the default), and decides each of urls
// with the rules whose patterns are valid, in their places. It is the one
// function behind the endpoint and the CLI. A rule that is not
// ACTION:PATTERN is a *SpecError and too many rules a *TooManyRulesError;
// everything else is reported in the answer.
func Try(seeds, specs, urls []string) (DryRun, error) {
	var rs []Rule
	for i, spec := range specs {
		r, err := ParseSpec(spec)
		if err != nil {
			return DryRun{}, &SpecError{Index: i, Err: err}
		}
		rs = append(rs, r)
	}
	if len(rs) > MaxRules {
		return DryRun{}, &TooManyRulesError{N: len(rs)}
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
