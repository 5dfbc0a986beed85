package app

import (
	"context"

	"github.com/capture-ledger/ledgerctl/pkg/outbox"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
)

// Drain delivers the due outbox rows to OpenFGA once: `ledgerctl drain`
// runs it, and serve as rows are added and every CAPTURE_LEDGER_DRAIN_INTERVAL_MS. A zero
// MaxAttempts takes CAPTURE_LEDGER_OUTBOX_MAX_ATTEMPTS.
func (a *App) Drain(ctx context.Context, o outbox.Options) (outbox.Result, error) {
	st, w, err := a.OutboxDeps(ctx)
	if err != nil {
		return outbox.Result{}, err
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = a.Settings.OutboxMaxAttempts
	}
	return outbox.Drain(ctx, st, w, o)
}

// OutboxStatus is the outbox at a glance, what `ledgerctl drain --status`
// shows: rows by state and the oldest dead letters.
type OutboxStatus struct {
	Counts postgres.OutboxCounts `json:"counts"`
	Dead   []postgres.DeadRow    `json:"dead"`
}

// OutboxCounts counts the outbox's rows by state (it needs only the
// database).
func (a *App) OutboxCounts(ctx context.Context) (postgres.OutboxCounts, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return postgres.OutboxCounts{}, err
	}
	return st.CountOutbox(ctx)
}

// OutboxStatus counts the rows and lists up to deadLimit dead letters,
// oldest first.
func (a *App) OutboxStatus(ctx context.Context, deadLimit int) (OutboxStatus, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return OutboxStatus{}, err
	}
	counts, err := st.CountOutbox(ctx)
	if err != nil {
		return OutboxStatus{}, err
	}
	dead, err := st.DeadOutbox(ctx, deadLimit)
	if err != nil {
		return OutboxStatus{}, err
	}
	return OutboxStatus{Counts: counts, Dead: dead}, nil
}

// RequeueDead gives every dead-lettered row a fresh start and returns how
// many there were.
func (a *App) RequeueDead(ctx context.Context) (int64, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return 0, err
	}
	return st.RequeueDead(ctx, nil)
}
