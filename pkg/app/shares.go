package app

import (
	"context"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
)

// Shares is the share use-case (grant, list, revoke), as `ledgerctl share`
// and /api/archives/{id}/shares take it.
func (a *App) Shares(ctx context.Context) (*archive.Shares, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	c, err := a.Authz(ctx)
	if err != nil {
		return nil, err
	}
	return &archive.Shares{Perms: authz.Managers{Client: c}, Store: st, Log: a.Log}, nil
}

// Deleter is the delete use-case, as `ledgerctl archives delete` and
// DELETE /api/archives/{id} take it.
func (a *App) Deleter(ctx context.Context) (*archive.Deleter, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	c, err := a.Authz(ctx)
	if err != nil {
		return nil, err
	}
	return &archive.Deleter{Perms: authz.Managers{Client: c}, Store: st, Objects: a.Blob(), Bucket: a.Settings.S3Bucket, Log: a.Log}, nil
}

// FinishDeletes is the delete use-case without OpenFGA: it only finishes
// deletions already decided (`archives delete --pending`, serve's worker).
func (a *App) FinishDeletes(ctx context.Context) (*archive.Deleter, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	return &archive.Deleter{Store: st, Objects: a.Blob(), Bucket: a.Settings.S3Bucket, Log: a.Log}, nil
}

// serveShares serves the share and delete routes, and a worker that
// finishes deletions whose objects could not all be removed at once.
func (a *App) serveShares(ctx context.Context, srv *Server, apiSrv *api.Server, every time.Duration) error {
	sh, err := a.Shares(ctx)
	if err != nil {
		return err
	}
	d, err := a.Deleter(ctx)
	if err != nil {
		return err
	}
	apiSrv.Shares, apiSrv.Deleter = sh, d
	if every <= 0 {
		every = time.Minute
	}
	log := a.Log
	srv.work(func(ctx context.Context) {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if res, err := d.FinishPending(ctx, 100); err != nil {
				log.Warn("could not finish pending archive deletions; retrying later", "error", err.Error())
			} else if res.Finished > 0 {
				log.Info("pending archive deletions finished", "archives", res.Finished)
			}
		}
	})
	return nil
}
