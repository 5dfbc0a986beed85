package app

import (
	"context"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
)

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
