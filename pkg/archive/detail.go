package archive

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// DetailCatalog reads one archive with what the ledger recorded about it
// for a caller.
type DetailCatalog interface {
	// ArchiveDetail is archive id, its organization and the reasons the
	// ledger recorded for v to see it (its organizations, itself as
	// owner, active shares at now); ledger.ErrNotFound when absent.
	ArchiveDetail(ctx context.Context, v ledger.Viewer, id string, now time.Time) (ledger.Candidate, string, error)
}

// Managing answers which of the managing actions a caller may take on an
// archive it may view: share (can_share) and delete (can_delete). The
// answers only decide which buttons the console shows; every action asks
// again when it is taken.
type Managing interface {
	MayManage(ctx context.Context, subject, archiveID string) (share, del bool, err error)
}

// Details is "show me this archive": one archive's fields, why the caller
// sees it, and what the caller may do with it.
type Details struct {
	Perms     Permissions
	Explainer Explainer
	Managing  Managing
	Catalog   DetailCatalog
	// Crawls, when set, names the crawl that captured the archive.
	Crawls CrawlFinder
	Log    *slog.Logger
	// Now is the clock shares expire by (default time.Now).
	Now func() time.Time

	standIn ledger.StandIn
}

// Detail is one archive as its page shows it.
type Detail struct {
	ledger.Archive
	Organization string `json:"organization"`
	// May is what the caller may do: each is asked again when done.
	May May `json:"may"`
}

// May is the actions a caller may take on an archive. Open and Download
// follow from can_view (the service must also offer them); Share and
// Delete are their own relations.
type May struct {
	Open     bool `json:"open"`
	Download bool `json:"download"`
	Share    bool `json:"share"`
	Delete   bool `json:"delete"`
}

func (d *Details) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// Get reads the archive and checks can_view with full consistency; a
// caller who may not view it, and an absent id, are both
// ledger.ErrNotFound after the same queries (an absent id is asked about
// as a stand-in, ledger.StandIn). For a caller who may view it, Why holds
// the recorded reasons OpenFGA confirmed, and May what else it may do.
func (d *Details) Get(ctx context.Context, subject string, orgs []string, id string) (Detail, error) {
	cand, org, lerr := d.Catalog.ArchiveDetail(ctx, ledger.Viewer{Subject: subject, Orgs: orgs}, id, d.now())
	if err := viewable(ctx, d.Perms, &d.standIn, d.logger(), subject, orgs, id, lerr); err != nil {
		return Detail{}, err
	}
	out := Detail{Archive: cand.Archive, Organization: org, May: May{Open: true, Download: true}}
	why := []ledger.Reason{}
	if d.Explainer != nil && len(cand.Reasons) > 0 {
		confirmed, err := d.Explainer.ConfirmReasons(ctx, subject, []ledger.Candidate{cand})
		if err != nil {
			return Detail{}, fmt.Errorf("confirm reasons: %w", err)
		}
		for i, r := range cand.Reasons {
			if confirmed[0][i] {
				why = append(why, r)
			}
		}
	}
	out.Why = &why
	if d.Managing != nil {
		var err error
		if out.May.Share, out.May.Delete, err = d.Managing.MayManage(ctx, subject, id); err != nil {
			return Detail{}, err
		}
	}
	if d.Crawls != nil {
		crawls, err := d.Crawls.CrawlsOfJobs(ctx, []string{out.TaskID})
		if err != nil {
			return Detail{}, err
		}
		out.CrawlID = crawls[out.TaskID]
	}
	return out, nil
}

func (d *Details) logger() *slog.Logger {
	if d.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Log
}
