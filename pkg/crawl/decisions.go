package crawl

import (
	"context"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
)

// Decision is one crawl_decisions row: at one level, how many distinct
// links one rule decided on one hostname (port stripped), with up to 5
// samples. Rule is 1-based; 0 is a link no rule matched (dropped, action
// skip). Depth is the depth of the pages the links were read on.
type Decision struct {
	Depth    int      `json:"depth"`
	Rule     int      `json:"rule"`
	Action   string   `json:"action"`
	Hostname string   `json:"hostname"`
	Links    int      `json:"links"`
	Samples  []string `json:"samples"`
}

// RobotsDecision is, for one hostname (port stripped), the pages not
// captured because robots.txt disallowed them, with up to 5 samples.
type RobotsDecision struct {
	Hostname string   `json:"hostname"`
	Pages    int      `json:"pages"`
	Samples  []string `json:"samples"`
}

// DecisionsView is GET /api/crawls/:id/decisions: the rules pinned on the
// crawl, what they decided per level, rule and hostname, and the pages
// robots.txt kept out.
type DecisionsView struct {
	Rules     []rules.Rule     `json:"rules"`
	Decisions []Decision       `json:"decisions"`
	Robots    []RobotsDecision `json:"robots"`
}

// Decisions returns what the rules of one crawl decided. A bad id is a
// *ledger.FieldError (FieldID); no such crawl, or one the caller may not touch, is
// ledger.ErrNotFound.
func (s *Service) Decisions(ctx context.Context, c Caller, id string) (DecisionsView, error) {
	if err := checkID(id); err != nil {
		return DecisionsView{}, err
	}
	cr, err := s.crawlFor(ctx, c, id)
	if err != nil {
		return DecisionsView{}, err
	}
	rs, err := pinnedRules(cr)
	if err != nil {
		return DecisionsView{}, err
	}
	ds, err := s.Store.CrawlDecisions(ctx, id)
	if err != nil {
		return DecisionsView{}, err
	}
	robots, err := s.Store.CrawlRobots(ctx, id, rules.MaxSamples)
	if err != nil {
		return DecisionsView{}, err
	}
	v := DecisionsView{Rules: rs, Decisions: make([]Decision, len(ds)), Robots: make([]RobotsDecision, len(robots))}
	for i, d := range ds {
		v.Decisions[i] = Decision(d)
	}
	for i, r := range robots {
		v.Robots[i] = RobotsDecision{Hostname: r.Hostname, Pages: r.Pages, Samples: r.Samples}
	}
	return v, nil
}

// DomainDecision is one row of GET /api/decisions: a decision of some crawl
// for a hostname under the asked domain, with the crawl's start and seeds
// and the rule's pattern (null for rule 0).
type DomainDecision struct {
	CrawlID   string    `json:"crawlId"`
	StartedAt time.Time `json:"startedAt"`
	Seeds     []string  `json:"seeds"`
	Depth     int       `json:"depth"`
	Rule      int       `json:"rule"`
	Action    string    `json:"action"`
	Pattern   *string   `json:"pattern"`
	Hostname  string    `json:"hostname"`
	Links     int       `json:"links"`
}

// DomainDecisions is GET /api/decisions. Truncated says the 500-row cap cut
// the list.
type DomainDecisions struct {
	Decisions []DomainDecision `json:"decisions"`
	Truncated bool             `json:"truncated"`
}

// Defaults and bounds of GET /api/decisions.
const (
	DefaultDecisionDays   = 90
	DefaultDecisionAction = "skip"
	MaxDomainDecisions    = 500
	// MaxDecisionDays keeps the cut-off date computable.
	MaxDecisionDays = 100000
)

// DomainQuery is what GET /api/decisions and ledgerctl crawl decisions
// --domain ask: a hostname, how many days back (0: DefaultDecisionDays) and
// an action ("": DefaultDecisionAction).
type DomainQuery struct {
	Domain string
	Days   int
	Action string
}

// Validate refuses a domain that is not a lowercase hostname, days outside
// 0..MaxDecisionDays and an action other than follow, capture, skip or "",
// with a *ledger.FieldError naming the field (FieldDomain, FieldDays,
// FieldAction).
func (q DomainQuery) Validate() error {
	if kind, _, err := rules.NormalizePattern(q.Domain); err != nil || kind != rules.KindDomain {
		return invalid(FieldDomain, "must be a lowercase hostname")
	}
	if q.Days < 0 || q.Days > MaxDecisionDays {
		return invalid(FieldDays, "must be a positive integer of at most %d", MaxDecisionDays)
	}
	if q.Action != "" && !rules.Action(q.Action).Valid() {
		return invalid(FieldAction, "must be equal to one of the allowed values (follow, capture, skip)")
	}
	return nil
}

// DecisionsByDomain lists, newest crawl first, the decisions with action
// (skip when "") that crawls started in the last days days (90 when 0) made
// for hostnames equal to domain or under it at a label boundary
// ("ads.example.com" matches x.ads.example.com, not badads.example.com).
// At most 500 rows; Truncated says the cap was hit. Gated by can_submit
// on some organization (ledger.ErrNotFound), and limited to the crawls the
// caller may touch (see List).
func (s *Service) DecisionsByDomain(ctx context.Context, c Caller, domain string, days int, action string) (DomainDecisions, error) {
	q := DomainQuery{Domain: domain, Days: days, Action: action}
	if err := q.Validate(); err != nil {
		return DomainDecisions{}, err
	}
	if q.Days == 0 {
		q.Days = DefaultDecisionDays
	}
	if q.Action == "" {
		q.Action = DefaultDecisionAction
	}
	if err := s.allow(ctx, c); err != nil {
		return DomainDecisions{}, err
	}
	scope, err := s.scope(ctx, c)
	if err != nil {
		return DomainDecisions{}, err
	}
	since := s.now().Add(-time.Duration(q.Days) * 24 * time.Hour)
	rows, err := s.Store.DecisionsByDomain(ctx, scope, q.Domain, since, q.Action, MaxDomainDecisions+1)
	if err != nil {
		return DomainDecisions{}, err
	}
	out := DomainDecisions{Decisions: make([]DomainDecision, 0, min(len(rows), MaxDomainDecisions))}
	if len(rows) > MaxDomainDecisions {
		rows, out.Truncated = rows[:MaxDomainDecisions], true
	}
	for _, r := range rows {
		out.Decisions = append(out.Decisions, DomainDecision{
			CrawlID: r.CrawlID, StartedAt: r.StartedAt.UTC(), Seeds: r.Seeds, Depth: r.Depth, Rule: r.Rule,
			Action: r.Action, Pattern: r.Pattern, Hostname: r.Hostname, Links: r.Links,
		})
	}
	return out, nil
}
