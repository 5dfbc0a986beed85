package crawl

import (
	"context"
	"strings"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/manifest"
)

// LevelOutcomes is one level's results in the form the ledger admits them:
// what became of each page, and, for the pages whose capture this process
// made, the capture's manifest and links already decoded. The Windmill
// flow's level report (POST /api/crawls/{id}/pages, a LevelReport) is the
// same thing without anything held: ReportLevel admits it through the same
// path, reading every manifest and links file from the bucket.
type LevelOutcomes struct {
	Depth int
	Pages []PageOutcome
}

// PageOutcome is one page of a level: its result as a level report carries
// it (checked as LevelReport.Normalize checks a report, and digested the
// same way, so a level admitted from memory and the same level rebuilt
// from the kept results after a restart are one report), and what the
// runner holds of its capture.
type PageOutcome struct {
	PageReport
	// Manifest is the capture's manifest as it was written to
	// ManifestLocation, decoded; nil when the runner does not hold it (the
	// ledger then reads it from the bucket). It is judged exactly as a
	// manifest read from the bucket is (it must name this task, crawl and
	// page), and used only where the report's manifestLocation is a key
	// of the ledger's bucket.
	Manifest *manifest.Manifest
	// Links are the page's links file (LinksLocation) decoded; nil when not
	// held (read from the bucket when the page is followed).
	Links *PageLinks
}

// PageLinks is what a links file says: the page's final URL and its links.
type PageLinks struct {
	FinalURL string
	Links    []manifest.Link
}

// report is the level as a level report, with what is held of each page
// (held[i] is Results[i]'s).
func (lo LevelOutcomes) report() (LevelReport, []held) {
	rep := LevelReport{Depth: lo.Depth, Results: make([]PageReport, len(lo.Pages))}
	h := make([]held, len(lo.Pages))
	for i, p := range lo.Pages {
		rep.Results[i] = p.PageReport
		h[i] = held{manifest: p.Manifest, links: p.Links}
	}
	return rep, h
}

// held is what the caller holds in memory of one page's capture.
type held struct {
	manifest *manifest.Manifest
	links    *PageLinks
}

// AdmitLevelOutcomes admits one level from a runner inside this process
// (the embedded runner), which needs no identity: ReportLevel without its
// can_submit gate, taking the manifests and links the runner holds instead
// of reading them back from the bucket. Everything else is ReportLevel's:
// the same checks (a *ledger.FieldError naming the field, nothing written),
// the same refusals, the same transaction, the same idempotent record.
//
// It dispatches nothing: the next level, when the crawl goes on, is
// returned to the caller, who runs it (so the runner never calls back into
// itself through the service). A level already accepted answers the
// recorded result again (Replayed) with its next level when the crawl is
// still running. The HTTP route must use ReportLevel.
func (s *Service) AdmitLevelOutcomes(ctx context.Context, crawlID string, lo LevelOutcomes) (LevelResult, *Level, error) {
	if err := checkID(crawlID); err != nil {
		return LevelResult{}, nil, err
	}
	rep, h := lo.report()
	norm, err := rep.Normalize()
	if err != nil {
		return LevelResult{}, nil, err
	}
	cr, err := s.Store.Crawl(ctx, crawlID)
	if err != nil {
		return LevelResult{}, nil, err
	}
	return s.reportLevel(ctx, cr, norm, h)
}

// AdmitCaptured registers the archives of pages of crawlID's level at
// depth before the level ends, so that they can be listed, shared and
// searched within moments of their capture instead of at the level's end
// (the embedded runner calls it as captures land). Only pages whose
// manifest the caller holds and whose status is captured are taken,
// judged as the level's admission judges them (a manifest that is not the
// page's capture in this crawl admits nothing); each must be a pending
// page of the level, and the crawl must be running with the level not yet
// reported — or, for a crawl closed (stopped or failed) while the level
// ran, a page whose capture with this task the runner began before the
// close: a capture in flight at a stop or a failure runs to its end and
// is kept (the runner registers it when its result can no longer be
// kept). It writes the pages' submissions and archives with their outbox
// rows, and names each page's capture job (so the archive is the crawl's
// at once: its filter, counts and replay collection), nothing else: the
// pages stay pending, and the level's admission (AdmitLevelOutcomes)
// closes them, decides their links and counts these archives as its own
// without registering them twice. It answers how many archives it
// registered; anything else registers none (not an error).
func (s *Service) AdmitCaptured(ctx context.Context, crawlID string, depth int, pages []PageOutcome) (int, error) {
	if err := checkID(crawlID); err != nil {
		return 0, err
	}
	held := make([]PageOutcome, 0, len(pages))
	for _, p := range pages {
		if p.Manifest != nil && p.TaskID != "" && p.Status == StatusCaptured {
			held = append(held, p)
		}
	}
	if len(held) == 0 {
		return 0, nil
	}
	rep, h := LevelOutcomes{Depth: depth, Pages: held}.report()
	norm, err := rep.Normalize()
	if err != nil {
		return 0, err
	}
	cr, err := s.Store.Crawl(ctx, crawlID)
	if err != nil {
		return 0, err
	}
	if cr.State != StateRunning && cr.FinishedAt == nil {
		return 0, nil
	}
	log := s.log().With("crawlId", cr.ID, "depth", depth)
	works := s.pageWorks(cr, norm, h)
	urls := make([]string, 0, len(works))
	for i := range works {
		pw := &works[i]
		if pw.refused != "" || pw.outcome == nil || pw.outcome.Key == "" {
			continue
		}
		s.judgeManifest(log.With("url", pw.rep.URL), cr.ID, pw, *pw.held.manifest, true)
		urls = append(urls, pw.rep.URL)
	}
	now := s.now()
	var plan *ledger.LevelPlan
	applied, err := s.Store.AdmitCaptured(ctx, crawlID, depth, urls, func(st ledger.LevelState) (*ledger.LevelPlan, error) {
		plan = nil
		if st.Accepted != nil || len(st.Pending) == 0 {
			return nil, nil
		}
		mine := works
		if st.Crawl.State != StateRunning {
			// Closed while the level ran: only the captures the runner
			// began before the close.
			mine = make([]pageWork, 0, len(works))
			for _, pw := range works {
				if task, ok := st.Begun[pw.rep.URL]; ok && strings.EqualFold(task, pw.rep.TaskID) {
					mine = append(mine, pw)
				}
			}
		}
		// Only the pages still pending at this depth, as the level will
		// find them; the rest are left to the level's admission.
		// No result of a capture of a closed crawl is kept: its page
		// records its times.
		plan = capturedPlan(st.Crawl, mine, st.Pending, now, st.Crawl.State != StateRunning)
		return plan, nil
	})
	if err != nil || plan == nil {
		return 0, err
	}
	for _, i := range applied.Admitted {
		log.Info("archive registered before its level's end", "taskId", plan.Archives[i].TaskID, "objectKey", plan.Archives[i].ObjectKey)
	}
	return len(applied.Admitted), nil
}

// capturedPlan registers the archives of works before their level's
// report: for each page with an archive to admit (and, when pending is
// not nil, a pending page of the level), its submission, its archive with
// its outbox rows, and its capture job (with the capture's times when
// times is set); nil when there is none.
func capturedPlan(cr ledger.Crawl, works []pageWork, pending map[string]int64, now time.Time, times bool) *ledger.LevelPlan {
	mine := make([]pageWork, 0, len(works))
	for _, pw := range works {
		if _, ok := pending[pw.rep.URL]; (ok || pending == nil) && pw.refused == "" && pw.archive != nil {
			mine = append(mine, pw)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	plan := &ledger.LevelPlan{}
	plan.Submissions, plan.Archives, plan.Tuples = admissions(cr, mine, now)
	for _, pw := range mine {
		task := ledger.PageTask{URL: pw.rep.URL, TaskID: pw.rep.TaskID}
		if sub, fin := pw.rep.SubmittedAt, pw.rep.FinishedAt; times && !sub.IsZero() && !fin.IsZero() {
			task.SubmittedAt, task.FinishedAt = &sub, &fin
		}
		plan.Tasks = append(plan.Tasks, task)
	}
	return plan
}
