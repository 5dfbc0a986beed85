package authz

import (
	"context"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Permissions answers the use-cases' permission questions through OpenFGA
// (archive.Permissions, search's and replay's checks, crawl's submitters):
// can_view for one archive or many, the recorded reasons of list
// candidates, and can_submit. Managers, beside it, answers who may manage
// an archive.
type Permissions struct {
	Client Client
	Now    func() time.Time
}

func (p Permissions) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// CanView asks can_view with HIGHER_CONSISTENCY, the caller's organizations
// as contextual member tuples and the server's clock as current_time.
func (p Permissions) CanView(ctx context.Context, subject string, orgs []string, id string) (bool, error) {
	return p.Client.Check(ctx, ArchiveCheck(subject, orgs, id, p.now()))
}

// CanViewMany asks the same question for many archives in batches.
func (p Permissions) CanViewMany(ctx context.Context, subject string, orgs []string, ids []string) ([]bool, error) {
	now := p.now()
	reqs := make([]CheckRequest, len(ids))
	for i, id := range ids {
		reqs[i] = ArchiveCheck(subject, orgs, id, now)
	}
	return p.Client.BatchCheck(ctx, reqs)
}

// ConfirmReasons asks, in one BatchCheck, whether each recorded reason of
// each candidate holds (ReasonCheck), in order.
func (p Permissions) ConfirmReasons(ctx context.Context, subject string, cands []ledger.Candidate) ([][]bool, error) {
	now := p.now()
	var reqs []CheckRequest
	for _, c := range cands {
		for _, r := range c.Reasons {
			reqs = append(reqs, ReasonCheck(subject, r, c.ID, c.TaskID, now))
		}
	}
	out := make([][]bool, len(cands))
	if len(reqs) == 0 {
		return out, nil
	}
	ok, err := p.Client.BatchCheck(ctx, reqs)
	if err != nil {
		return nil, err
	}
	for i, c := range cands {
		out[i], ok = ok[:len(c.Reasons)], ok[len(c.Reasons):]
	}
	return out, nil
}

// MaySubmit is can_submit on any of the caller's organizations.
func (p Permissions) MaySubmit(ctx context.Context, subject string, orgs []string) (bool, error) {
	return MaySubmit(ctx, p.Client, subject, orgs)
}

// MayManage asks can_share and can_delete on the archive in one
// BatchCheck (no contextual tuples: membership never allows either). The
// answers only choose what the console offers; sharing and deleting ask
// again, fully consistent, when done.
func (p Permissions) MayManage(ctx context.Context, subject, archiveID string) (share, del bool, err error) {
	ok, err := p.Client.BatchCheck(ctx, []CheckRequest{ShareCheck(subject, archiveID), DeleteCheck(subject, archiveID)})
	if err != nil {
		return false, false, err
	}
	return ok[0], ok[1], nil
}
