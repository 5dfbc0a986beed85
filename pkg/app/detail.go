package app

import (
	"context"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
)

// MayManage asks can_share and can_delete on the archive in one
// BatchCheck (no contextual tuples: membership never allows either). The
// answers only choose what the console offers; sharing and deleting ask
// again, fully consistent, when done.
func (p Permissions) MayManage(ctx context.Context, subject, archiveID string) (share, del bool, err error) {
	ok, err := p.Client.BatchCheck(ctx, []authz.CheckRequest{authz.ShareCheck(subject, archiveID), authz.DeleteCheck(subject, archiveID)})
	if err != nil {
		return false, false, err
	}
	return ok[0], ok[1], nil
}

// Details is the one-archive read of GET /api/archives/{id}.
func (a *App) Details(ctx context.Context) (*archive.Details, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	perms, err := a.Permissions(ctx)
	if err != nil {
		return nil, err
	}
	return &archive.Details{Perms: perms, Explainer: perms, Managing: perms, Catalog: st, Crawls: st, Log: a.Log}, nil
}
