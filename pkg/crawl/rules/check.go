package rules

import (
	"errors"
	"fmt"
	"strings"
)

var errUnknownAction = errors.New("the action is not follow, capture or skip")

// BodyError is an error the API answers with 400 and a named JSON body.
type BodyError interface {
	error
	// Body returns the response body as a JSON-marshalable value.
	Body() any
}

// InvalidPattern names a rule whose pattern is none of the three kinds.
// Rule is 1-based; Pattern is the pattern as written.
type InvalidPattern struct {
	Rule    int    `json:"rule"`
	Pattern string `json:"pattern"`
	Reason  string `json:"-"`
}

// InvalidPatternsError is the 400
// {"error":"invalid rule patterns","rules":[{"rule":n,"pattern":"…"}]}.
type InvalidPatternsError struct {
	Rules []InvalidPattern
}

func (e *InvalidPatternsError) Error() string {
	parts := make([]string, len(e.Rules))
	for i, r := range e.Rules {
		parts[i] = fmt.Sprintf("rule %d (%q): %s", r.Rule, truncate(r.Pattern, 100), r.Reason)
	}
	return "invalid rule patterns: " + strings.Join(parts, "; ")
}

// InvalidPatternsBody is the JSON body of an InvalidPatternsError.
type InvalidPatternsBody struct {
	Error string           `json:"error"`
	Rules []InvalidPattern `json:"rules"`
}

// Body returns {"error":"invalid rule patterns","rules":[…]}.
func (e *InvalidPatternsError) Body() any {
	return InvalidPatternsBody{Error: "invalid rule patterns", Rules: nonNil(e.Rules)}
}

// Shadowed names a rule that can never match because an earlier rule
// (CoveredBy, the first such) matches every URL it could match. Both are
// 1-based.
type Shadowed struct {
	Rule      int `json:"rule"`
	CoveredBy int `json:"coveredBy"`
}

// ShadowedRulesError is the 400
// {"error":"rules that can never match","rules":[{"rule":n,"coveredBy":m}]}.
type ShadowedRulesError struct {
	Rules []Shadowed
}

func (e *ShadowedRulesError) Error() string {
	parts := make([]string, len(e.Rules))
	for i, r := range e.Rules {
		parts[i] = fmt.Sprintf("rule %d is covered by rule %d", r.Rule, r.CoveredBy)
	}
	return "rules that can never match: " + strings.Join(parts, "; ")
}

// ShadowedRulesBody is the JSON body of a ShadowedRulesError.
type ShadowedRulesBody struct {
	Error string     `json:"error"`
	Rules []Shadowed `json:"rules"`
}

// Body returns {"error":"rules that can never match","rules":[…]}.
func (e *ShadowedRulesError) Body() any {
	return ShadowedRulesBody{Error: "rules that can never match", Rules: nonNil(e.Rules)}
}

// UnfollowedSeedsError is the 400
// {"error":"seeds the rules do not follow","seeds":["url"]}: seeds whose
// first matching rule is capture or skip, or that no rule matches. Seeds
// are normalised URLs.
type UnfollowedSeedsError struct {
	Seeds []string
}

func (e *UnfollowedSeedsError) Error() string {
	return "seeds the rules do not follow: " + strings.Join(e.Seeds, ", ")
}

// UnfollowedSeedsBody is the JSON body of an UnfollowedSeedsError.
type UnfollowedSeedsBody struct {
	Error string   `json:"error"`
	Seeds []string `json:"seeds"`
}

// Body returns {"error":"seeds the rules do not follow","seeds":[…]}.
func (e *UnfollowedSeedsError) Body() any {
	return UnfollowedSeedsBody{Error: "seeds the rules do not follow", Seeds: nonNil(e.Seeds)}
}

// InvalidSeedsError is the 400 {"error":"every seed must be an http(s) URL"}
// of POST /api/crawls. Seeds holds the offending inputs (not in the body).
type InvalidSeedsError struct {
	Seeds []string
}

func (e *InvalidSeedsError) Error() string {
	return "every seed must be an http(s) URL: " + strings.Join(quoteAll(e.Seeds), ", ")
}

// ErrorBody is a body with only an error message.
type ErrorBody struct {
	Error string `json:"error"`
}

// Body returns {"error":"every seed must be an http(s) URL"}.
func (e *InvalidSeedsError) Body() any { return ErrorBody{Error: "every seed must be an http(s) URL"} }

// ParseSeeds parses every seed; if any is not an absolute http(s) URL it
// returns *InvalidSeedsError (seeds are never silently dropped). Duplicates
// are kept: the crawl_pages insert collapses them.
func ParseSeeds(raw []string) ([]URL, error) {
	out := make([]URL, 0, len(raw))
	var bad []string
	for _, r := range raw {
		u, err := ParseURL(r)
		if err != nil {
			bad = append(bad, r)
			continue
		}
		out = append(out, u)
	}
	if len(bad) > 0 {
		return nil, &InvalidSeedsError{Seeds: bad}
	}
	return out, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Validate runs the checks a rule list must pass before a crawl starts, in
// this order, and returns the first that fails:
//  1. the shape (*SchemaError; see CheckShape),
//  2. every pattern valid (*InvalidPatternsError),
//  3. no rule that can never match (*ShadowedRulesError),
//  4. every seed followed (*UnfollowedSeedsError).
//
// On success the Set holds the rules in normal form.
func Validate(rules []Rule, seeds []URL) (*Set, error) {
	if err := CheckShape(rules); err != nil {
		return nil, err
	}
	s, bad := newSet(rules, seeds)
	if len(bad) > 0 {
		return nil, &InvalidPatternsError{Rules: bad}
	}
	if sh := s.shadowed(); len(sh) > 0 {
		return nil, &ShadowedRulesError{Rules: sh}
	}
	if un := s.unfollowedSeeds(); len(un) > 0 {
		return nil, &UnfollowedSeedsError{Seeds: un}
	}
	return s, nil
}

func (s *Set) shadowed() []Shadowed {
	var out []Shadowed
	for j := range s.rules {
		if by := s.coveredBy(j); by > 0 {
			out = append(out, Shadowed{Rule: j + 1, CoveredBy: by})
		}
	}
	return out
}

func (s *Set) unfollowedSeeds() []string {
	var out []string
	for _, sd := range s.seeds {
		if s.Decide(sd).Action != Follow {
			out = append(out, sd.Normalized)
		}
	}
	return out
}

// coveredBy returns the 1-based number of the first earlier rule that
// matches every URL rule j could match, or 0.
func (s *Set) coveredBy(j int) int {
	if s.rules[j].kind == "" {
		return 0
	}
	for i := 0; i < j; i++ {
		if s.covers(&s.rules[i], &s.rules[j]) {
			return i + 1
		}
	}
	return 0
}

// covers reports whether rule a certainly matches every URL rule b could
// match. It claims this only when it is certain (rejecting a correct rule
// list is worse than accepting a dead rule):
//   - any covers everything;
//   - a scope word covers itself; same-site ⊇ same-host ⊇ same-origin;
//   - a domain d covers a domain e when e == d or e ends with "."+d;
//   - same-site covers a domain e that is not itself a public suffix when
//     e's registrable domain is the site of every seed (at least one);
//   - a URL prefix p is covered by an earlier prefix q when p starts with q,
//     and by a scope word or domain that matches the URL p itself: every URL
//     beginning with a normalised prefix has that prefix's scheme, host and
//     port, because the prefix always contains the "/" that ends the host.
//
// Domains are not covered by same-host or same-origin (a domain includes
// subdomains), and a scope word is never covered by a domain or a URL.
func (s *Set) covers(a, b *compiled) bool {
	if a.kind == KindScope && a.rule.Pattern == Any {
		return true
	}
	switch b.kind {
	case KindScope:
		return a.kind == KindScope && b.rule.Pattern != Any && scopeRank(a.rule.Pattern) >= scopeRank(b.rule.Pattern)
	case KindDomain:
		switch a.kind {
		case KindDomain:
			return domainMatches(a.domain, b.domain)
		case KindScope:
			return a.rule.Pattern == SameSite && s.siteCoversDomain(b.domain)
		}
		return false
	case KindURL:
		switch a.kind {
		case KindURL:
			return strings.HasPrefix(b.rule.Pattern, a.rule.Pattern)
		case KindScope, KindDomain:
			p, err := ParseURL(b.rule.Pattern)
			return err == nil && s.matches(a, p)
		}
	}
	return false
}

// scopeRank orders the scope words by inclusion: same-origin ⊆ same-host ⊆
// same-site (any is handled apart).
func scopeRank(word string) int {
	switch word {
	case SameOrigin:
		return 1
	case SameHost:
		return 2
	case SameSite:
		return 3
	}
	return 0
}

// siteCoversDomain reports whether every host under domain has the site
// every seed has.
//
// Known limit: the Public Suffix List can list suffixes strictly below a
// registrable domain (for example private entries under amazonaws.com), and
// golang.org/x/net/publicsuffix offers no way to enumerate them; such a
// domain is still claimed covered.
func (s *Set) siteCoversDomain(domain string) bool {
	if len(s.seeds) == 0 || len(s.sites) != 1 {
		return false
	}
	// localhost and other single labels are public suffixes (the PSL's
	// default rule "*"), so they are refused here too.
	if isIPHost(domain) || isPublicSuffix(domain) {
		return false
	}
	return s.sites[siteOf(domain)]
}

// Report is what GET /api/crawl-rules/check answers.
type Report struct {
	Seeds []SeedReport `json:"seeds"`
	Rules []RuleReport `json:"rules"`
	OK    bool         `json:"ok"`
}

// SeedReport describes one seed. URL is the normalised URL when the seed is
// valid and the input otherwise; Site is its registrable domain; Error says
// why an invalid seed is invalid.
type SeedReport struct {
	URL      string `json:"url"`
	Valid    bool   `json:"valid"`
	Site     string `json:"site,omitempty"`
	Followed bool   `json:"followed"`
	Error    string `json:"error,omitempty"`
}

// RuleReport describes one rule (1-based). Pattern is the normal form when
// the pattern is valid and the input otherwise. Kind is absent and Error
// says why when the rule is invalid; CoveredBy is present only when the
// rule can never match.
type RuleReport struct {
	Rule      int    `json:"rule"`
	Action    Action `json:"action"`
	Kind      Kind   `json:"kind,omitempty"`
	Pattern   string `json:"pattern"`
	CoveredBy int    `json:"coveredBy,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Check runs the checks of POST /api/crawls without starting anything and
// reports everything at once: per seed whether it parses, its site and
// whether the rules follow it; per rule its kind, normal form and the
// earlier rule that covers it. OK is false if there is no seed, any seed is
// invalid or not followed, or any rule is invalid or can never match.
//
// No rules means the default list, as when a crawl omits rules. The list's
// length is not checked (use CheckShape for that schema 400); a rule with an
// unknown action or an over-long pattern is reported as invalid. Shadowing
// and seeds are judged with the valid rules and valid seeds only; an invalid
// rule never matches.
func Check(seeds []string, rules []Rule) Report {
	if len(rules) == 0 {
		rules = Default()
	}
	rep := Report{Seeds: make([]SeedReport, len(seeds)), Rules: make([]RuleReport, len(rules)), OK: true}
	var valid []URL
	for i, raw := range seeds {
		u, err := ParseURL(raw)
		if err != nil {
			rep.Seeds[i] = SeedReport{URL: raw, Error: err.Error()}
			rep.OK = false
			continue
		}
		rep.Seeds[i] = SeedReport{URL: u.Normalized, Valid: true, Site: u.Site()}
		valid = append(valid, u)
	}
	if len(seeds) == 0 {
		rep.OK = false // a crawl needs at least one seed
	}
	s, bad := newSet(rules, valid)
	badBy := make(map[int]string, len(bad))
	for _, b := range bad {
		badBy[b.Rule] = b.Reason
	}
	for i, r := range rules {
		rr := RuleReport{Rule: i + 1, Action: r.Action, Pattern: r.Pattern}
		if reason, ok := badBy[i+1]; ok {
			rr.Error = reason
			rep.OK = false
		} else if err := CheckShape([]Rule{r}); err != nil {
			var se *SchemaError
			errors.As(err, &se)
			rr.Error = se.Reason
			rep.OK = false
			s.rules[i] = compiled{rule: r} // over-long: judged as never matching
		} else {
			rr.Kind, rr.Pattern = s.rules[i].kind, s.rules[i].rule.Pattern
		}
		rep.Rules[i] = rr
	}
	for i := range rep.Rules {
		if by := s.coveredBy(i); by > 0 {
			rep.Rules[i].CoveredBy = by
			rep.OK = false
		}
	}
	vi := 0
	for i := range rep.Seeds {
		if !rep.Seeds[i].Valid {
			continue
		}
		rep.Seeds[i].Followed = s.Decide(valid[vi]).Action == Follow
		vi++
		if !rep.Seeds[i].Followed {
			rep.OK = false
		}
	}
	return rep
}

// Err returns the error POST /api/crawls would answer for the same seeds
// and rules, checked in order (invalid seeds, invalid patterns, rules that
// can never match, seeds not followed), or nil when there is none. A report
// of no seeds at all gives nil here: that 400 belongs to the request's
// schema.
func (r Report) Err() error {
	var badSeeds []string
	for _, s := range r.Seeds {
		if !s.Valid {
			badSeeds = append(badSeeds, s.URL)
		}
	}
	if len(badSeeds) > 0 {
		return &InvalidSeedsError{Seeds: badSeeds}
	}
	var bad []InvalidPattern
	var sh []Shadowed
	for _, rr := range r.Rules {
		if rr.Error != "" {
			bad = append(bad, InvalidPattern{Rule: rr.Rule, Pattern: rr.Pattern, Reason: rr.Error})
		}
		if rr.CoveredBy > 0 {
			sh = append(sh, Shadowed{Rule: rr.Rule, CoveredBy: rr.CoveredBy})
		}
	}
	if len(bad) > 0 {
		return &InvalidPatternsError{Rules: bad}
	}
	if len(sh) > 0 {
		return &ShadowedRulesError{Rules: sh}
	}
	var un []string
	for _, s := range r.Seeds {
		if !s.Followed {
			un = append(un, s.URL)
		}
	}
	if len(un) > 0 {
		return &UnfollowedSeedsError{Seeds: un}
	}
	return nil
}
