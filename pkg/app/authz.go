package app

import (
	"context"
	"errors"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
)

// Authz opens the OpenFGA client on first use: remote when
// CAPTURE_LEDGER_FGA_API_URL is set, embedded otherwise.
func (a *App) Authz(ctx context.Context) (authz.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.authz != nil {
		return a.authz, nil
	}
	c, err := authz.Open(ctx, a.Settings, authz.OpenOptions{})
	if err != nil {
		return nil, err
	}
	a.authz = c
	a.closers = append(a.closers, func() { _ = c.Close() })
	return c, nil
}

// AuthzAdmin opens OpenFGA for administering the model (`ledgerctl fga
// deploy`): bound to no store or model, and, when embedded, creating and
// migrating its datastore first. It is not the App's cached client: it is
// closed with the App.
func (a *App) AuthzAdmin(ctx context.Context) (authz.Client, error) {
	c, err := authz.Open(ctx, a.Settings, authz.OpenOptions{Prepare: true, Unbound: true})
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closers = append(a.closers, func() { _ = c.Close() })
	return c, nil
}

// SetAuthz installs an already-open client (tests share one embedded server).
func (a *App) SetAuthz(c authz.Client) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.authz = c
}

// Permissions is authz.Permissions, the OpenFGA permission adapter (kept
// under this name for the callers that build one by hand).
type Permissions = authz.Permissions

var _ archive.Permissions = authz.Permissions{}

// Permissions returns the OpenFGA-backed permissions.
func (a *App) Permissions(ctx context.Context) (Permissions, error) {
	c, err := a.Authz(ctx)
	if err != nil {
		return Permissions{}, err
	}
	return Permissions{Client: c}, nil
}

// Submitters answers whether a caller may start crawls.
func (a *App) Submitters(ctx context.Context) (Permissions, error) { return a.Permissions(ctx) }

// Access is the archive read use-case (URLs and the list).
func (a *App) Access(ctx context.Context) (*archive.Access, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	perms, err := a.Permissions(ctx)
	if err != nil {
		return nil, err
	}
	source, err := a.listSource()
	if err != nil {
		return nil, err
	}
	return &archive.Access{
		Perms: perms, Catalog: st, Signer: a.Blob(), Ranges: archiveObjects{a.Blob()}, Log: a.Log, Source: source,
		ScanLimit: a.Settings.ListCheckBudget, TimeBudget: a.Settings.ListTimeBudget,
		Gate: a.ScanGate(),
	}, nil
}

// ScanGate is the process's one guard of archive lists and searches
// together (CAPTURE_LEDGER_LIST_CONCURRENCY, _PER_CALLER,
// CAPTURE_LEDGER_LIST_CHECK_CONCURRENCY): a search and a list take places
// of the same bounds and wait in the same check lane.
func (a *App) ScanGate() *archive.ScanGate {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gate == nil {
		a.gate = archive.NewScanGate(archive.GateBounds{Lists: a.Settings.ListConcurrency, PerCaller: a.Settings.ListPerCaller, PerOrg: a.Settings.ListPerOrg, Checks: a.Settings.ListChecks})
	}
	return a.gate
}

// listSource is CAPTURE_LEDGER_LIST_SOURCE, which the list and search
// share.
func (a *App) listSource() (archive.ListSource, error) {
	return archive.ParseListSource(a.Settings.ListSource)
}

// OutboxWriter delivers outbox tuples to OpenFGA.
type OutboxWriter struct{ Client authz.Client }

// WriteIdempotent converts the tuples and marks unreachable failures so the
// drain stops instead of blaming the rows. A tuple OpenFGA holds with
// another condition (a share granted again after an earlier share to the
// same grantee, whose delete the newer intent superseded) is replaced: the
// row is the ledger's latest intent for it.
func (w OutboxWriter) WriteIdempotent(ctx context.Context, writes, deletes []ledger.Tuple) error {
	ws, ds := convert(writes), convert(deletes)
	err := w.Client.WriteIdempotent(ctx, ws, ds)
	if err != nil && len(ws) > 0 && authz.KindOf(err) == authz.KindConflict {
		err = w.replace(ctx, ws, ds)
	}
	if err != nil && errors.Is(err, ledger.ErrUnreachable) {
		return &outbox.UnreachableError{URL: authzURL(w.Client), Err: err}
	}
	return err
}

// replace writes each tuple on its own, deleting it first when it is
// stored with another condition, then the deletes.
func (w OutboxWriter) replace(ctx context.Context, writes, deletes []authz.Tuple) error {
	for _, t := range writes {
		err := w.Client.WriteIdempotent(ctx, []authz.Tuple{t}, nil)
		if authz.KindOf(err) == authz.KindConflict {
			if err = w.Client.WriteIdempotent(ctx, nil, []authz.Tuple{{User: t.User, Relation: t.Relation, Object: t.Object}}); err == nil {
				err = w.Client.WriteIdempotent(ctx, []authz.Tuple{t}, nil)
			}
		}
		if err != nil {
			return err
		}
	}
	if len(deletes) == 0 {
		return nil
	}
	return w.Client.WriteIdempotent(ctx, nil, deletes)
}

func authzURL(c authz.Client) string {
	if u, ok := c.(interface{ URL() string }); ok {
		return u.URL()
	}
	return "embedded"
}

func convert(ts []ledger.Tuple) []authz.Tuple {
	if len(ts) == 0 {
		return nil
	}
	out := make([]authz.Tuple, len(ts))
	for i, t := range ts {
		out[i] = authz.Tuple{User: t.User, Relation: t.Relation, Object: t.Object}
		if t.Condition != nil { // a share's non_expired_grant
			out[i].Condition = &authz.Condition{Name: t.Condition.Name, Context: t.Condition.Context}
		}
	}
	return out
}

// OutboxDeps returns what outbox.Drain needs.
func (a *App) OutboxDeps(ctx context.Context) (outbox.Store, outbox.Writer, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	c, err := a.Authz(ctx)
	if err != nil {
		return nil, nil, err
	}
	return st, OutboxWriter{Client: c}, nil
}

// archiveObjects opens bucket objects for ranged reads of thumbnails.
type archiveObjects struct{ c *blob.Client }

func (o archiveObjects) OpenObject(ctx context.Context, bucket, key string) (archive.Object, error) {
	return o.c.OpenReaderAt(ctx, bucket, key)
}
