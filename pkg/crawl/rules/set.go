package rules

import (
	"net/url"
	"strings"
)

// Decision is what the rules decided for one URL. Rule is the 1-based
// number of the first matching rule; 0 means no rule matched and the URL is
// dropped (Action is then Skip).
type Decision struct {
	Action Action `json:"action"`
	Rule   int    `json:"rule"`
}

// compiled is a valid rule with its pattern in normal form.
type compiled struct {
	rule   Rule // normalised
	kind   Kind
	domain string // KindDomain: the hostname
}

// Set is a crawl's rule list bound to its seeds, ready to decide URLs.
// A Set is immutable and safe for concurrent use.
type Set struct {
	rules   []compiled
	seeds   []URL
	origins map[string]bool
	hosts   map[string]bool
	sites   map[string]bool
}

// NewSet binds rules to seeds. Its only check is that every pattern is
// valid (otherwise *InvalidPatternsError); it does not look for shadowed
// rules or unfollowed seeds — use Validate before a crawl starts, and
// NewSet to rebuild the Set of a crawl whose rules were validated then.
func NewSet(rules []Rule, seeds []URL) (*Set, error) {
	s, bad := newSet(rules, seeds)
	if len(bad) > 0 {
		return nil, &InvalidPatternsError{Rules: bad}
	}
	return s, nil
}

// newSet compiles what it can. An invalid rule keeps its place but never
// matches (kind ""), so rule numbers stay those of the input.
func newSet(rules []Rule, seeds []URL) (*Set, []InvalidPattern) {
	s := &Set{
		rules:   make([]compiled, len(rules)),
		seeds:   append([]URL(nil), seeds...),
		origins: make(map[string]bool, len(seeds)),
		hosts:   make(map[string]bool, len(seeds)),
		sites:   make(map[string]bool, len(seeds)),
	}
	for _, sd := range seeds {
		s.origins[sd.Origin] = true
		s.hosts[sd.Host] = true
		s.sites[sd.Site()] = true
	}
	var bad []InvalidPattern
	for i, r := range rules {
		kind, p, err := NormalizePattern(r.Pattern)
		if err == nil && !r.Action.Valid() {
			kind, err = "", errUnknownAction
		}
		if err != nil {
			s.rules[i] = compiled{rule: r}
			bad = append(bad, InvalidPattern{Rule: i + 1, Pattern: r.Pattern, Reason: err.Error()})
			continue
		}
		c := compiled{rule: Rule{Action: r.Action, Pattern: p}, kind: kind}
		if kind == KindDomain {
			c.domain = p
		}
		s.rules[i] = c
	}
	return s, bad
}

// Rules returns the rule list in normal form, as it is pinned on the crawl.
func (s *Set) Rules() []Rule {
	out := make([]Rule, len(s.rules))
	for i, c := range s.rules {
		out[i] = c.rule
	}
	return out
}

// Seeds returns the seeds the scope words compare with.
func (s *Set) Seeds() []URL { return append([]URL(nil), s.seeds...) }

// Decide runs a URL through the rules: the first match decides. A URL no
// rule matches is dropped: Decision{Action: Skip, Rule: 0}.
func (s *Set) Decide(u URL) Decision {
	for i := range s.rules {
		if s.matches(&s.rules[i], u) {
			return Decision{Action: s.rules[i].rule.Action, Rule: i + 1}
		}
	}
	return Decision{Action: Skip, Rule: 0}
}

// matches reports whether the rule matches u. Scope words compare with
// every seed and match when any seed agrees.
func (s *Set) matches(c *compiled, u URL) bool {
	switch c.kind {
	case KindScope:
		switch c.rule.Pattern {
		case Any:
			return true
		case SameOrigin:
			return s.origins[u.Origin]
		case SameHost:
			return s.hosts[u.Host]
		case SameSite:
			return len(s.sites) > 0 && s.sites[u.Site()]
		}
	case KindDomain:
		return domainMatches(c.domain, u.Hostname)
	case KindURL:
		return strings.HasPrefix(u.Normalized, c.rule.Pattern)
	}
	return false
}

// domainMatches reports whether hostname is domain or one of its subdomains,
// at a label boundary ("badads.example.com" is not under "ads.example.com").
// A trailing dot on the hostname is ignored.
func domainMatches(domain, hostname string) bool {
	h := strings.TrimSuffix(hostname, ".")
	return h == domain || strings.HasSuffix(h, "."+domain)
}

// PageAction decides a captured page from both the URL that was requested
// and the final URL after redirects, and returns the more restrictive of the
// two decisions (skip < capture < follow; on a tie, the requested URL's), so
// that a link redirecting off-site cannot widen the crawl's scope.
func (s *Set) PageAction(requested, final URL) Decision {
	a, b := s.Decide(requested), s.Decide(final)
	if b.Action.restrictiveness() < a.Action.restrictiveness() {
		return b
	}
	return a
}

// Link is one link of a page, as BrowserHive's .links.json carries it:
// href (normally absolute) and the raw rel attribute, or nil.
type Link struct {
	Href string  `json:"href"`
	Rel  *string `json:"rel"`
}

// LinkDecision is the decision for one distinct link of a page.
type LinkDecision struct {
	URL URL
	Decision
}

// FilterLinks prepares the links of one page for the next level and decides
// each one. page is the page the links were read from (its final URL); a
// relative href is resolved against it. Before the rules, links are
// ignored when their rel has the token "nofollow" (whitespace-separated,
// case-insensitive), when they are not http(s) or do not parse; the rest
// are de-duplicated by normalised URL, keeping the first-seen order. It
// returns one decision per distinct link and the number of links ignored
// before the rules.
//
// Only pages whose PageAction is follow should have their links read.
func (s *Set) FilterLinks(page URL, links []Link) (decided []LinkDecision, ignored int) {
	seen := make(map[string]bool, len(links))
	for _, l := range links {
		if l.Rel != nil && hasNofollow(*l.Rel) {
			ignored++
			continue
		}
		u, err := resolveLink(page, l.Href)
		if err != nil {
			ignored++
			continue
		}
		if seen[u.Normalized] {
			continue
		}
		seen[u.Normalized] = true
		decided = append(decided, LinkDecision{URL: u, Decision: s.Decide(u)})
	}
	return decided, ignored
}

// hasNofollow reports whether a rel attribute holds the token "nofollow".
func hasNofollow(rel string) bool {
	for _, tok := range strings.FieldsFunc(rel, isHTMLSpace) {
		if strings.EqualFold(tok, "nofollow") {
			return true
		}
	}
	return false
}

// isHTMLSpace is the HTML "ASCII whitespace" that separates rel tokens.
func isHTMLSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
}

// resolveLink parses an href, resolving a relative one against the page.
func resolveLink(page URL, href string) (URL, error) {
	h := strings.TrimFunc(href, func(r rune) bool { return r <= 0x20 })
	if schemeEnd(h) >= 0 || page.Normalized == "" {
		return ParseURL(h)
	}
	base, err := url.Parse(page.Normalized)
	if err != nil {
		return URL{}, err
	}
	ref, err := url.Parse(h)
	if err != nil {
		return URL{}, &URLError{Input: href, Reason: "it cannot be resolved against the page"}
	}
	return ParseURL(base.ResolveReference(ref).String())
}
