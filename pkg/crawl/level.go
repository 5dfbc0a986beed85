package crawl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/manifest"
)

// ReportLevel admits one level report of a crawl (POST /api/crawls/:id/pages)
// and returns the next level, which it has already dispatched.
//
// The report is checked whole first (a *ledger.FieldError naming the field,
// see LevelReport.Validate; nothing written),
// then the crawl: an absent one, and one the caller may not touch (not its
// requester, no can_submit on its organization), are ledger.ErrNotFound.
// A report already accepted for this depth is answered again from the
// record when it is the same report (Replayed; nothing changes, whatever
// the crawl's state now), and refused with a *LevelConflictError when it is
// a different one. A new report for a crawl that is not running is refused
// with a *NotRunningError; one for a depth at which the crawl has no pages
// with a *LevelConflictError. Refusals change nothing.
//
// Otherwise the manifests and links files are read from the configured
// bucket first, then everything is written in one transaction. A result is
// refused (listed in the answer's refused with its reason, kept with the
// level, never admitted: no submission, no archive, no tuple) when its URL
// is not a pending page of this crawl at this depth, when its correlationId
// is not the crawl's id, or when its manifest's taskId, correlationId (the
// crawl id) or url does not agree with the result's page and crawl
// (docs/security.md). For the others:
//   - the reported pending pages of this depth are closed (matched by
//     normalised URL): state, skip reason, task id, times, final URL; a
//     pending page whose result was refused is closed failed with the
//     reason and no task;
//   - a capture_submissions row for every page with a taskId, failures
//     too (the manifest key only when it is inside the configured bucket);
//   - an archive (and its queued OpenFGA tuples) for every manifest that is
//     a success with a WACZ in the bucket; the manifest wins over the
//     reported status: such a page is closed captured even when the runner
//     said failed. A missing or unreadable manifest is left to reconcile;
//     one page never fails the level;
//   - the links of the closed pages whose action (the more restrictive of
//     their requested and final URL's) is follow are decided with the
//     pinned rules, de-duplicated across the report, and tallied into this
//     depth's crawl_decisions (replacing earlier rows);
//   - the links decided follow or capture that the crawl does not have yet
//     become candidates; the page budget takes the first of them and they
//     are inserted at depth+1 with discovered_from; the rows inserted are
//     the next level;
//   - the counters, the stop reason (the first sticks), the state
//     (succeeded when no row was inserted), progressed_at, and the report's
//     record in crawl_levels.
func (s *Service) ReportLevel(ctx context.Context, c Caller, crawlID string, rep Reported) (LevelResult, error) {
	if err := checkID(crawlID); err != nil {
		return LevelResult{}, err
	}
	norm, err := rep.normalized()
	if err != nil {
		return LevelResult{}, err
	}
	cr, err := s.crawlFor(ctx, c, crawlID)
	if err != nil {
		return LevelResult{}, err
	}
	res, next, err := s.reportLevel(ctx, cr, norm, nil)
	if err == nil && next != nil && !res.Replayed {
		s.dispatchLevel(ctx, *next)
	}
	return res, err
}

// pageWork is what was read from the bucket for one reported page.
type pageWork struct {
	rep PageReport
	url rules.URL
	// final is the final URL the page is judged by (the report's, else the
	// links file's, else the requested URL); finalOK is false when the
	// reported final URL is not an http(s) URL (the page is then not
	// followed).
	final   rules.URL
	finalOK bool

	outcome *manifest.Outcome    // when the page has a taskId
	archive *manifest.ArchiveRow // the manifest is an admissible success
	// refused says why this result is not this crawl's to report (one of
	// the Refuse* reasons); such a result admits nothing.
	refused string
	// held is what the caller holds of the capture (nothing for a report
	// received over HTTP): a manifest or links held are not read again.
	held held
	// bound says the manifest was read and belongs to this page and crawl.
	bound    bool
	linksRun bool // the links were read and decided
	links    []rules.LinkDecision
}

func (s *Service) concurrency() int {
	if s.FetchConcurrency > 0 {
		return s.FetchConcurrency
	}
	return 16
}

// reportLevel admits rep for cr, read by the caller (the crawl's row as it
// was before the level's transaction, which locks and reads it again), with
// what the caller holds of each page (h[i] is rep.Results[i]'s; nil when it
// holds nothing). It dispatches nothing: it returns the next level when the
// crawl goes on (its pages are durable crawl_pages rows by then), and the
// caller hands it to the runner.
func (s *Service) reportLevel(ctx context.Context, cr ledger.Crawl, rep Report, h []held) (LevelResult, *Level, error) {
	id := cr.ID
	if rec, err := s.Store.CrawlLevel(ctx, id, rep.Depth); err != nil {
		return LevelResult{}, nil, err
	} else if rec != nil {
		return s.replay(ctx, cr, rec, rep.digest)
	}
	if cr.State != StateRunning {
		return LevelResult{}, nil, &NotRunningError{CrawlID: id, State: cr.State}
	}
	set, err := s.ruleSet(cr)
	if err != nil {
		return LevelResult{}, nil, err
	}
	pages, err := s.read(ctx, cr, set, rep, h)
	if err != nil {
		return LevelResult{}, nil, err
	}

	urls := make([]string, len(rep.Results))
	for i, p := range rep.Results {
		urls[i] = p.URL
	}
	now := s.now()
	var (
		replayed *ledger.LevelRecord
		locked   ledger.Crawl
		plan     *ledger.LevelPlan
		out      levelOutcome
	)
	applied, err := s.Store.ApplyLevel(ctx, id, rep.Depth, urls, func(st ledger.LevelState) (*ledger.LevelPlan, error) {
		replayed, locked, plan = st.Accepted, st.Crawl, nil
		switch {
		case st.Accepted != nil:
			return nil, nil
		case st.Crawl.State != StateRunning:
			return nil, &NotRunningError{CrawlID: id, State: st.Crawl.State}
		case st.AtDepth == 0:
			return nil, &LevelConflictError{CrawlID: id, Depth: rep.Depth, NoSuchLevel: true}
		}
		// planLevel marks refusals on its own copy: a retried transaction
		// plans from the pages as read.
		var err error
		plan, out, err = planLevel(st, rep, slices.Clone(pages), now)
		return plan, err
	})
	if err != nil {
		return LevelResult{}, nil, err
	}
	if replayed != nil {
		return s.replay(ctx, cr, replayed, rep.digest)
	}

	log := s.log().With("crawlId", id, "depth", rep.Depth)
	for _, r := range out.refusals {
		log.Warn("level report result refused; nothing of it was admitted", "url", r.URL, "taskId", r.TaskID, "reason", r.Reason)
	}
	if out.recovered > 0 {
		log.Info("recovered captures the flow could not see", "pages", out.recovered)
	}
	for _, i := range applied.Admitted {
		log.Info("archive registered", "taskId", plan.Archives[i].TaskID, "objectKey", plan.Archives[i].ObjectKey)
	}
	res := LevelResult{Next: make([]NextPage, len(applied.Next)), StopReason: plan.Totals.StopReason, Refused: out.refusals}
	for i, p := range applied.Next {
		res.Next[i] = NextPage{URL: p.URL, Host: p.Host, Depth: rep.Depth + 1}
	}
	log.Info("level registered", "reported", len(pages), "closed", len(plan.Closes), "captured", out.captured,
		"registered", len(applied.Admitted), "refused", len(out.refusals), "discovered", plan.Totals.PagesDiscovered,
		"next", len(applied.Next), "stopReason", out.reason)
	if plan.Totals.Done {
		log.Info("crawl finished", "stopReason", out.reason)
	}
	if len(applied.Next) == 0 {
		return res, nil, nil
	}
	next := s.level(locked, rep.Depth+1, applied.Next, applied.LastFinished)
	return res, &next, nil
}

// replay answers a report for a depth already accepted, with the next
// level when the crawl (as cr says) is still running.
func (s *Service) replay(ctx context.Context, cr ledger.Crawl, rec *ledger.LevelRecord, digest [32]byte) (LevelResult, *Level, error) {
	id := cr.ID
	if !bytes.Equal(rec.Digest, digest[:]) {
		return LevelResult{}, nil, &LevelConflictError{CrawlID: id, Depth: rec.Depth}
	}
	res := LevelResult{Next: []NextPage{}, StopReason: rec.StopReason, Refused: []Refusal{}, Replayed: true}
	if len(rec.Refused) > 0 {
		if err := json.Unmarshal(rec.Refused, &res.Refused); err != nil {
			return LevelResult{}, nil, fmt.Errorf("crawl %s depth %d: the recorded refusals are not readable: %w", id, rec.Depth, err)
		}
	}
	var next *Level
	if rec.NextPages > 0 {
		pages, err := s.Store.PagesAtDepth(ctx, id, rec.Depth+1)
		if err != nil {
			return LevelResult{}, nil, err
		}
		for _, p := range pages {
			res.Next = append(res.Next, NextPage{URL: p.URL, Host: p.Host, Depth: rec.Depth + 1})
		}
		if cr.State == StateRunning && len(pages) > 0 {
			hosts := make([]string, 0, len(pages))
			for _, p := range pages {
				hosts = append(hosts, p.Host)
			}
			last, err := s.Store.HostsLastFinished(ctx, id, hosts)
			if err != nil {
				return LevelResult{}, nil, err
			}
			l := s.level(cr, rec.Depth+1, pages, last)
			next = &l
		}
	}
	s.log().Info("level report replayed; nothing changed", "crawlId", id, "depth", rec.Depth)
	return res, next, nil
}

// ruleSet rebuilds the crawl's rules bound to its seeds.
func (s *Service) ruleSet(cr ledger.Crawl) (*rules.Set, error) {
	seeds, err := rules.ParseSeeds(cr.Seeds)
	if err != nil {
		return nil, fmt.Errorf("crawl %s: a crawl seed is not a usable url: %w", cr.ID, err)
	}
	rs, err := pinnedRules(cr)
	if err != nil {
		return nil, err
	}
	set, err := rules.NewSet(rs, seeds)
	if err != nil {
		return nil, fmt.Errorf("crawl %s: the pinned rules are not valid: %w", cr.ID, err)
	}
	return set, nil
}

// read fetches, for every reported page and concurrently, its manifest and
// its links file from the configured bucket, and decides the links. A
// missing or unreadable manifest only costs that page its admission (it is
// logged; reconcile retries). A links file that is missing, outside the
// bucket or not a links file is skipped with a warning; any other error
// reading one fails the report (nothing is written; the runner may resend).
// With a nil set no links are read (only the manifests are judged).
func (s *Service) read(ctx context.Context, cr ledger.Crawl, set *rules.Set, rep Report, h []held) ([]pageWork, error) {
	pages := s.pageWorks(cr, rep, h)
	follow := set != nil && rep.Depth < cr.MaxDepth // links beyond the last level are never read

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		sem      = make(chan struct{}, s.concurrency())
	)
	for i := range pages {
		pw := &pages[i]
		if pw.refused != "" {
			continue
		}
		needManifest := pw.outcome != nil && pw.outcome.Key != ""
		// A page is followed only when both its requested and its final URL
		// are; without a reported final URL, the links file's is checked
		// once it is read.
		mayFollow := follow && pw.rep.Status != StatusSkipped && pw.finalOK &&
			set.PageAction(pw.url, pw.final).Action == rules.Follow
		if !needManifest && !(mayFollow && pw.rep.LinksLocation != "") {
			continue
		}
		if pw.inMemory(needManifest, mayFollow) {
			// Nothing to read: decided here, without a goroutine.
			if err := s.readPage(ctx, cr, set, pw, mayFollow); err != nil {
				return nil, err
			}
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := s.readPage(ctx, cr, set, pw, mayFollow); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return pages, nil
}

// pageWorks starts the work on each of rep's pages (h[i] is what is held
// of rep.Results[i]'s capture): its URLs, its manifest's outcome when it
// has a taskId, and the refusal of a result of another crawl.
func (s *Service) pageWorks(cr ledger.Crawl, rep Report, h []held) []pageWork {
	pages := make([]pageWork, len(rep.Results))
	for i, p := range rep.Results {
		u := rep.urls[i]
		pages[i] = pageWork{rep: p, url: u, final: u, finalOK: true}
		if i < len(h) {
			pages[i].held = h[i]
		}
		if p.FinalURL != "" {
			f, err := rules.ParseURL(p.FinalURL)
			pages[i].final, pages[i].finalOK = f, err == nil
		}
		if p.CorrelationID != "" && !strings.EqualFold(p.CorrelationID, cr.ID) {
			pages[i].refused = RefuseCorrelation
			continue
		}
		if p.TaskID != "" {
			o := manifest.ManifestOutcome(p.ManifestLocation, p.ManifestError, s.Bucket)
			pages[i].outcome = &o
		}
	}
	return pages
}

func (s *Service) readPage(ctx context.Context, cr ledger.Crawl, set *rules.Set, pw *pageWork, mayFollow bool) error {
	log := s.log().With("crawlId", cr.ID, "url", pw.rep.URL)
	linksLoc := pw.rep.LinksLocation
	if pw.outcome != nil && pw.outcome.Key != "" {
		var (
			m  manifest.Manifest
			ok bool
		)
		if pw.held.manifest != nil {
			m, ok = *pw.held.manifest, true
		} else {
			m, ok = s.readManifest(ctx, log, pw)
		}
		if s.judgeManifest(log, cr.ID, pw, m, ok); pw.refused != "" {
			return nil
		}
		if pw.archive != nil && linksLoc == "" {
			linksLoc = m.Artifacts.Links // a capture the runner missed: read its links too
		}
	}
	captured := pw.rep.Status == StatusCaptured || pw.archive != nil
	if !mayFollow || !captured || linksLoc == "" || ctx.Err() != nil {
		return ctx.Err()
	}
	if l := pw.held.links; l != nil && linksLoc == pw.rep.LinksLocation {
		if pw.rep.FinalURL == "" && l.FinalURL != "" {
			f, err := rules.ParseURL(l.FinalURL)
			pw.final, pw.finalOK = f, err == nil
		}
		pw.decideLinks(set, l.Links)
		return nil
	}
	key, err := manifest.KeyInBucket(linksLoc, s.Bucket)
	if err != nil {
		log.Warn("links file is not in the bucket the ledger reads; its links are not followed", "error", err.Error())
		return nil
	}
	data, err := s.Objects.Get(ctx, s.Bucket, key)
	switch {
	case errors.Is(err, ledger.ErrNoObject):
		log.Warn("links file is not where the capture reported writing it; its links are not followed", "key", key)
		return nil
	case errors.Is(err, ledger.ErrObjectRejected):
		// S3 answered and refused this key: that page's problem, not the
		// level's (failing the report would fail every resend too).
		log.Warn("S3 refused to read the links file; its links are not followed", "key", key, "error", err.Error())
		return nil
	case err != nil:
		return fmt.Errorf("read links file %s: %w", key, err)
	}
	if pw.rep.FinalURL == "" {
		// The report gave no final URL: take the one the links file has.
		var lf struct {
			FinalURL string `json:"finalUrl"`
		}
		if json.Unmarshal(data, &lf) == nil && lf.FinalURL != "" {
			f, err := rules.ParseURL(lf.FinalURL)
			pw.final, pw.finalOK = f, err == nil
		}
	}
	if !pw.finalOK || set.PageAction(pw.url, pw.final).Action != rules.Follow {
		return nil
	}
	links, err := manifest.DecodeLinks(data)
	if err != nil {
		log.Warn("links file is not a links file; its links are not followed", "key", key, "error", err.Error())
		return nil
	}
	pw.decideLinks(set, links)
	return nil
}

// judgeManifest judges the manifest read (ok) for pw: it refuses the page
// when the manifest is not its capture in crawl crawlID, else binds it and
// sets the archive to admit when the manifest has one the ledger can take.
func (s *Service) judgeManifest(log *slog.Logger, crawlID string, pw *pageWork, m manifest.Manifest, ok bool) {
	if pw.refused = bindManifest(m, ok, crawlID, pw); pw.refused != "" {
		log.Warn("the manifest is not this page's capture; the result is refused", "taskId", pw.rep.TaskID, "reason", pw.refused)
		return
	}
	pw.bound = ok
	if !ok {
		return
	}
	row, err := m.Archive(s.Bucket)
	switch {
	case errors.Is(err, manifest.ErrNoArchive):
		log.Warn("capture produced no archive; not adding to the ledger", "taskId", m.TaskID, "reason", err.Error())
	case err != nil:
		log.Warn("could not register this page; reconcile will retry", "taskId", m.TaskID, "error", err.Error())
	default:
		pw.archive = &row
	}
}

// decideLinks decides the page's links, unless its final URL is not
// followed.
func (pw *pageWork) decideLinks(set *rules.Set, links []manifest.Link) {
	if !pw.finalOK || set.PageAction(pw.url, pw.final).Action != rules.Follow {
		return
	}
	in := make([]rules.Link, len(links))
	for i, l := range links {
		in[i] = rules.Link{Href: l.Href, Rel: l.Rel}
	}
	pw.links, _ = set.FilterLinks(pw.final, in)
	pw.linksRun = true
}

// inMemory says the page needs no read: its manifest (when one is needed)
// and its links (when they may be followed and it has a links file) are
// held.
func (pw *pageWork) inMemory(needManifest, mayFollow bool) bool {
	if needManifest && pw.held.manifest == nil {
		return false
	}
	// A manifest can name a links file the report did not (a capture the
	// runner missed): such a page may have a file to read.
	if mayFollow && pw.held.links == nil && (pw.rep.LinksLocation != "" || needManifest) {
		return false
	}
	return true
}

// readManifest reads and decodes one page's manifest; false when there is
// none the ledger can use now.
func (s *Service) readManifest(ctx context.Context, log interface {
	Debug(string, ...any)
	Warn(string, ...any)
}, pw *pageWork) (manifest.Manifest, bool) {
	data, err := s.Objects.Get(ctx, s.Bucket, pw.outcome.Key)
	if errors.Is(err, ledger.ErrNoObject) {
		log.Debug("no manifest yet; leaving it to reconcile", "key", pw.outcome.Key)
		return manifest.Manifest{}, false
	}
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("could not read the manifest; reconcile will retry", "key", pw.outcome.Key, "error", err.Error())
		}
		return manifest.Manifest{}, false
	}
	m, err := manifest.Decode(data)
	if err != nil {
		log.Warn("Manifest is not a report the ledger can read; skipping it", "key", pw.outcome.Key, "error", err.Error())
		return manifest.Manifest{}, false
	}
	return m, true
}

// bindManifest says why a manifest read for a result is not that page's
// capture in crawl crawlID ("" when it is, or when there is none to judge:
// a missing manifest is left to reconcile, which binds it to its
// submission). The task, the correlation (the crawl id the runner sent as
// correlationId) and the requested URL must all agree; a manifest without
// a correlationId cannot be bound and is refused too.
func bindManifest(m manifest.Manifest, read bool, crawlID string, pw *pageWork) string {
	if !read {
		return ""
	}
	if !strings.EqualFold(m.TaskID, pw.rep.TaskID) {
		return RefuseManifestTask
	}
	if m.CorrelationID == nil || !strings.EqualFold(*m.CorrelationID, crawlID) {
		return RefuseManifestCorr
	}
	u, err := rules.ParseURL(m.URL)
	if err != nil || (u.Normalized != pw.url.Normalized && u.Normalized != pw.final.Normalized) {
		return RefuseManifestURL
	}
	return ""
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// levelOutcome is what planning a level found, for the answer and the log.
type levelOutcome struct {
	refusals  []Refusal
	captured  int
	recovered int
	reason    string // the stop reason planned ("" while the crawl goes on)
}

// planLevel decides everything one level report writes, from what the
// level's transaction read (st) and what was read from the bucket for each
// page (pages): a pure function of its arguments, so the rules of a level
// are tested without a database and applied by one store call.
func planLevel(st ledger.LevelState, rep Report, pages []pageWork, now time.Time) (*ledger.LevelPlan, levelOutcome, error) {
	cr := st.Crawl
	plan := &ledger.LevelPlan{}
	var out levelOutcome

	// A result is admitted only for a page of this crawl dispatched at this
	// depth and still pending, so no crawl can claim another's capture.
	for i := range pages {
		pw := &pages[i]
		if _, ok := st.Pending[pw.rep.URL]; !ok && pw.refused == "" {
			pw.refused = RefuseNotPending
		}
	}

	// 1. Close the reported pending pages; the manifest wins over the status.
	for _, pw := range pages {
		p := pw.rep
		if _, ok := st.Pending[p.URL]; !ok {
			continue
		}
		pc := ledger.PageClose{
			URL: p.URL, State: string(p.Status), SkipReason: strPtr(p.SkipReason), TaskID: strPtr(p.TaskID),
			CorrelationID: strPtr(p.CorrelationID), SubmittedAt: timePtr(p.SubmittedAt), FinishedAt: timePtr(p.FinishedAt),
		}
		switch {
		case p.FinalURL != "" && !pw.finalOK:
			pc.FinalURL = &p.FinalURL // kept as reported, for evidence
		case p.FinalURL != "" || pw.final != pw.url:
			// The reported final URL, else the links file's.
			f := pw.final.Normalized
			pc.FinalURL = &f
		}
		if pw.archive != nil && p.Status != StatusCaptured {
			pc.State, pc.SkipReason = string(StatusCaptured), nil
		}
		if pw.refused != "" {
			// The page stays this crawl's, closed failed with why; it keeps
			// no task or correlation, so nothing joins it to that capture.
			reason := "refused: " + pw.refused
			pc = ledger.PageClose{URL: p.URL, State: string(StatusFailed), SkipReason: &reason,
				SubmittedAt: timePtr(p.SubmittedAt), FinishedAt: timePtr(p.FinishedAt)}
		}
		plan.Closes = append(plan.Closes, pc)
	}
	out.refusals = []Refusal{}
	for _, pw := range pages {
		if pw.refused != "" {
			out.refusals = append(out.refusals, Refusal{URL: pw.rep.URL, TaskID: pw.rep.TaskID, Reason: pw.refused})
			continue
		}
		if pw.rep.Status == StatusCaptured || pw.archive != nil {
			out.captured++
			if pw.rep.Status != StatusCaptured {
				out.recovered++
			}
		}
	}

	// 2. and 3. Submissions, for every page with a taskId; archives and
	// their tuples, in this transaction.
	plan.Submissions, plan.Archives, plan.Tuples = admissions(cr, pages, now)

	// 4. Decisions and candidates, from the links of the closed pages.
	var tally rules.Tally
	type candidate struct {
		url  rules.URL
		from int64
	}
	total := 0
	for _, pw := range pages {
		total += len(pw.links)
	}
	cands := make([]candidate, 0, total)
	seenLink := make(map[string]struct{}, total)
	for _, pw := range pages {
		from, ok := st.Pending[pw.rep.URL]
		if !ok || pw.refused != "" || !pw.linksRun {
			continue
		}
		for _, ld := range pw.links {
			if _, dup := seenLink[ld.URL.Normalized]; dup {
				continue
			}
			seenLink[ld.URL.Normalized] = struct{}{}
			tally.Add(ld.Decision, ld.URL)
			if ld.Action == rules.Follow || ld.Action == rules.Capture {
				cands = append(cands, candidate{url: ld.URL, from: from})
			}
		}
	}
	rows := tally.Rows()
	plan.Decisions = make([]ledger.DecisionRecord, len(rows))
	for i, r := range rows {
		plan.Decisions[i] = ledger.DecisionRecord{Depth: rep.Depth, Rule: r.Rule, Action: string(r.Action), Hostname: r.Hostname, Links: r.Links, Samples: r.Samples}
	}

	// 5. The next level: candidates the crawl does not have, within budget.
	var planReason string
	discovered := 0
	nextDepth := rep.Depth + 1
	if nextDepth > cr.MaxDepth {
		_, planReason = rules.PlanNextLevel(nil, nextDepth, cr.MaxDepth, cr.MaxPages, 0)
	} else {
		fresh := make([]string, 0, len(cands))
		freshFrom := make(map[string]candidate, len(cands))
		for _, c := range cands {
			if st.Known[sha256.Sum256([]byte(c.url.Normalized))] {
				continue
			}
			fresh = append(fresh, c.url.Normalized)
			freshFrom[c.url.Normalized] = c
		}
		discovered = len(fresh)
		var take []string
		take, planReason = rules.PlanNextLevel(fresh, nextDepth, cr.MaxDepth, cr.MaxPages, st.KnownCount)
		plan.Next = make([]ledger.NewPage, len(take))
		for i, u := range take {
			c := freshFrom[u]
			from := c.from
			plan.Next[i] = ledger.NewPage{URL: u, Host: c.url.Host, From: &from}
		}
	}

	// 6. Counters, stop reason and state.
	done := len(plan.Next) == 0
	out.reason = planReason
	if out.reason == "" && done {
		out.reason = rules.StopCompleted
	}
	var crawlStop, answerStop *string
	if out.reason != "" {
		reason := out.reason
		crawlStop = &reason
		if done {
			answerStop = &reason
		}
	}
	refusedJSON, err := json.Marshal(out.refusals)
	if err != nil {
		return nil, levelOutcome{}, err
	}
	plan.Totals = ledger.LevelTotals{
		LevelRecord: ledger.LevelRecord{
			Depth: rep.Depth, Digest: rep.digest[:], Results: len(pages), PagesClosed: len(plan.Closes),
			PagesCaptured: out.captured, PagesRecovered: out.recovered,
			PagesDiscovered: discovered, StopReason: answerStop, Refused: refusedJSON,
		},
		CrawlStopReason: crawlStop, Done: done, Now: now,
	}
	return plan, out, nil
}

// admissions are what a level (or its captured pages before it ends)
// records of its pages: a submission for every page with a taskId (one per
// task), and an archive with its tuples for every admissible manifest (one
// per object), in the pages' order. Refused pages record nothing.
func admissions(cr ledger.Crawl, pages []pageWork, now time.Time) ([]ledger.NewSubmission, []ledger.NewArchive, func(int, string) ledger.OutboxPayload) {
	requestedBy := cr.RequestedBy
	var subs []ledger.NewSubmission
	seenTask := map[string]bool{}
	for _, pw := range pages {
		if pw.refused != "" || pw.outcome == nil || seenTask[pw.rep.TaskID] {
			continue
		}
		seenTask[pw.rep.TaskID] = true
		corr := pw.rep.CorrelationID
		if corr == "" {
			corr = cr.ID
		}
		sub := ledger.NewSubmission{Verified: pw.bound,
			TaskID: pw.rep.TaskID, CorrelationID: &corr, OrgID: cr.OrgID, SubmittedBy: &requestedBy,
			ManifestKey: strPtr(pw.outcome.Key), ManifestError: strPtr(pw.outcome.Error), SubmittedAt: now,
		}
		if !pw.rep.SubmittedAt.IsZero() {
			sub.SubmittedAt = pw.rep.SubmittedAt
		}
		subs = append(subs, sub)
	}
	var archives []ledger.NewArchive
	seenObj := map[[2]string]bool{}
	for _, pw := range pages {
		a := pw.archive
		if pw.refused != "" || a == nil || seenObj[[2]string{a.Bucket, a.ObjectKey}] {
			continue
		}
		seenObj[[2]string{a.Bucket, a.ObjectKey}] = true
		archives = append(archives, ledger.NewArchive{
			TaskID: a.TaskID, CorrelationID: a.CorrelationID, Bucket: a.Bucket, ObjectKey: a.ObjectKey,
			SourceURL: a.SourceURL, Labels: a.Labels, WaczComplete: a.WaczComplete, Signed: a.Signed, CapturedAt: a.CapturedAt,
		})
	}
	tuples := func(i int, archiveID string) ledger.OutboxPayload {
		return ledger.AdmissionTuples(archiveID, archives[i].TaskID, cr.OrgID, &requestedBy)
	}
	return subs, archives, tuples
}
