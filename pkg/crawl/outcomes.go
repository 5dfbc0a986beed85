package crawl

import (
	"context"

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
