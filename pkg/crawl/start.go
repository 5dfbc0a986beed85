package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Limits and defaults of a crawl (POST /api/crawls, docs/crawling.md).
const (
	MaxDepthLimit          = 10
	DefaultMaxDepth        = 2
	MaxPagesLimit          = 10000
	DefaultMaxPages        = 30
	MaxPerHostDelayMs      = 600000
	DefaultPerHostDelayMs  = 2000
	MinHostParallelism     = 1
	MaxHostParallelism     = 32
	DefaultHostParallelism = 4
)

// StartRequest is a crawl start, as POST /api/crawls reads it from its body
// and ledgerctl crawl start from its flags. Exactly one of Seeds and
// FromTargets must be given; a nil pointer (or nil Seeds) is absent and
// takes its default.
type StartRequest struct {
	// Seeds are the URLs to start from (non-nil means present).
	Seeds []string `json:"seeds,omitempty"`
	// FromTargets starts from the organization's enabled capture targets.
	FromTargets *FromTargets `json:"fromTargets,omitempty"`
	// Rules default to [{"follow":"same-origin"}].
	Rules []rules.Rule `json:"rules,omitempty"`
	// MaxDepth is 0..10: 2 by default, 0 with FromTargets.
	MaxDepth *int `json:"maxDepth,omitempty"`
	// MaxPages is 1..10000, seeds included: max(30, number of seeds) by default.
	MaxPages *int `json:"maxPages,omitempty"`
	// PerHostDelayMs is 0..600000, 2000 by default: the gap between the end
	// of one capture on a host and the start of the next.
	PerHostDelayMs *int `json:"perHostDelayMs,omitempty"`
	// HostParallelism is 1..32, 4 by default.
	HostParallelism *int `json:"hostParallelism,omitempty"`
}

// FromTargets asks for the first Limit enabled targets (all when nil).
type FromTargets struct {
	Limit *int `json:"limit,omitempty"`
}

// Validate checks a request before anything is read: the ranges, seed
// strings that are not empty (and hold no U+0000 and are UTF-8),
// fromTargets.limit >= 1, and the shape of the rule list. Every error is a
// *ledger.FieldError naming the field (FieldMaxDepth, "seeds/2",
// "rules/1/follow"). Empty Seeds are left to Start, which answers
// MsgNoSeeds.
func (r StartRequest) Validate() error {
	for i, s := range r.Seeds {
		field := fmt.Sprintf("%s/%d", FieldSeeds, i)
		if s == "" {
			return invalid(field, "must NOT have fewer than 1 characters")
		}
		if reason := TextProblem(s); reason != "" {
			return invalid(field, "%s", reason)
		}
	}
	if r.FromTargets != nil && r.FromTargets.Limit != nil && *r.FromTargets.Limit < 1 {
		return invalid(FieldFromTargetLimit, "must be >= 1")
	}
	if r.Rules != nil {
		if err := rules.CheckShape(r.Rules); err != nil {
			return RuleFieldError(err)
		}
		for i, rule := range r.Rules {
			if reason := TextProblem(rule.Pattern); reason != "" {
				return invalid(fmt.Sprintf("%s/%d/%s", FieldRules, i, rule.Action), "%s", reason)
			}
		}
	}
	for _, f := range []struct {
		field    string
		v        *int
		min, max int
	}{
		{FieldMaxDepth, r.MaxDepth, 0, MaxDepthLimit},
		{FieldMaxPages, r.MaxPages, 1, MaxPagesLimit},
		{FieldPerHostDelayMs, r.PerHostDelayMs, 0, MaxPerHostDelayMs},
		{FieldHostParallelism, r.HostParallelism, MinHostParallelism, MaxHostParallelism},
	} {
		if f.v == nil {
			continue
		}
		if *f.v < f.min {
			return invalid(f.field, "must be >= %d", f.min)
		}
		if *f.v > f.max {
			return invalid(f.field, "must be <= %d", f.max)
		}
	}
	return nil
}

// Start starts a crawl for the caller (POST /api/crawls) and returns its id.
// In order: the request's fields (Validate: a *ledger.FieldError), can_submit
// (ledger.ErrNotFound), exactly one of seeds and fromTargets, at least one
// seed, every seed an http(s) URL, then the rule checks (invalid patterns,
// rules that can never match, seeds the rules do not follow) — each a
// *RequestError (the rule checks' refusal as its Err). The crawl is attributed to the caller's
// first organization; fromTargets reads only that organization's targets.
// The crawl row (rules pinned in normal form) and its depth-0 pages are
// written in one transaction; an organization already running
// CrawlsPerOrg crawls makes it an *ActiveCrawlError. Level 0 is then dispatched; a failed dispatch
// closes the crawl as failed but still returns its id (the crawl was
// accepted; its state says what became of it).
func (s *Service) Start(ctx context.Context, c Caller, req StartRequest) (string, error) {
	if err := req.Validate(); err != nil {
		return "", err
	}
	// The crawl is attributed to the caller's first organization, so that
	// is the one on which can_submit is asked (docs/security.md).
	if len(c.Orgs) == 0 {
		return "", ledger.ErrNotFound
	}
	if err := s.allow(ctx, Caller{Subject: c.Subject, Orgs: c.Orgs[:1]}); err != nil {
		return "", err
	}
	return s.start(ctx, c, req)
}

func (s *Service) start(ctx context.Context, c Caller, req StartRequest) (string, error) {
	if (req.Seeds != nil) == (req.FromTargets != nil) {
		return "", badRequest(MsgSeedsXorTargets)
	}
	org := ""
	if len(c.Orgs) > 0 {
		org = c.Orgs[0]
	}
	raw := req.Seeds
	if req.FromTargets != nil {
		limit := 0
		if req.FromTargets.Limit != nil {
			limit = *req.FromTargets.Limit
		}
		var err error
		if raw, err = s.Store.EnabledTargetURLs(ctx, org, limit); err != nil {
			return "", err
		}
		if len(raw) == 0 {
			return "", badRequest(MsgNoTargets)
		}
	} else if len(raw) == 0 {
		return "", badRequest(MsgNoSeeds)
	}
	parsed, err := rules.ParseSeeds(raw)
	if err != nil {
		return "", &RequestError{Err: err}
	}
	// Duplicate seeds collapse into one page; keep the first spelling.
	seen := make(map[string]bool, len(parsed))
	var seeds []rules.URL
	for _, u := range parsed {
		if !seen[u.Normalized] {
			seen[u.Normalized] = true
			seeds = append(seeds, u)
		}
	}
	rl := req.Rules
	if rl == nil {
		rl = rules.Default()
	}
	set, err := rules.Validate(rl, seeds)
	if err != nil {
		var se *rules.SchemaError
		if errors.As(err, &se) {
			return "", RuleFieldError(err)
		}
		return "", &RequestError{Err: err}
	}
	pinned, err := json.Marshal(set.Rules())
	if err != nil {
		return "", err
	}

	maxDepth := DefaultMaxDepth
	if req.FromTargets != nil {
		maxDepth = 0
	}
	maxPages := max(DefaultMaxPages, len(seeds))
	delay, par := DefaultPerHostDelayMs, DefaultHostParallelism
	for _, o := range []struct {
		v   *int
		dst *int
	}{{req.MaxDepth, &maxDepth}, {req.MaxPages, &maxPages}, {req.PerHostDelayMs, &delay}, {req.HostParallelism, &par}} {
		if o.v != nil {
			*o.dst = *o.v
		}
	}

	nc := ledger.NewCrawl{
		Seeds: make([]string, len(seeds)), Hosts: make([]string, len(seeds)), Rules: pinned,
		MaxDepth: maxDepth, MaxPages: maxPages, PerHostDelayMs: delay, HostParallelism: par,
		OrgID: org, RequestedBy: c.Subject, Now: s.now(), MaxRunning: s.CrawlsPerOrg,
	}
	if nc.MaxRunning <= 0 {
		nc.MaxRunning = DefaultCrawlsPerOrg
	}
	for i, u := range seeds {
		nc.Seeds[i], nc.Hosts[i] = u.Normalized, u.Host
	}
	id, pages, err := s.Store.InsertCrawl(ctx, nc)
	var active *ledger.ActiveCrawlError
	if errors.As(err, &active) {
		return "", s.activeCrawl(ctx, c, active)
	}
	if err != nil {
		return "", err
	}
	s.log().Info("crawl started", "crawlId", id, "orgId", org, "requestedBy", c.Subject, "seeds", len(seeds), "maxDepth", maxDepth, "maxPages", maxPages)
	s.dispatch(ctx, ledger.Crawl{
		ID: id, MaxDepth: maxDepth, OrgID: org, PerHostDelayMs: delay, HostParallelism: par,
	}, 0, pages, nil)
	return id, nil
}

// activeCrawl is the 409 of a start refused because the organization runs
// as many crawls as it may. It names the oldest running crawl only to a
// caller who may touch it.
func (s *Service) activeCrawl(ctx context.Context, c Caller, active *ledger.ActiveCrawlError) error {
	hidden := &ActiveCrawlError{&ledger.ActiveCrawlError{Running: active.Running, Limit: active.Limit}}
	if active.CrawlID == "" {
		return hidden
	}
	if _, err := s.crawlFor(ctx, c, active.CrawlID); err != nil {
		return hidden // not the caller's to know of (or gone since)
	}
	return &ActiveCrawlError{active}
}
