// Package outbox delivers the OpenFGA tuples queued in fga_outbox. Delivery
// is at-least-once: rows are leased in batches (FOR UPDATE SKIP LOCKED), the
// tuples of several rows go to OpenFGA in one idempotent write ("already
// there" counts as delivered), failures back off exponentially and become
// dead letters after a number of attempts, and an unreachable OpenFGA (or
// datastore: any error matching ledger.ErrUnreachable) stops the drain with
// the remaining rows untouched: no attempt counted, no blame, no dead
// letter. The serve ticker and `ledgerctl drain` call the same Drain.
//
// Per tuple, OpenFGA ends in the state of the ledger's latest intent: the
// store closes the tuples of older undelivered rows when a newer row names
// them, and never leases a row while an older row naming one of its tuples
// is in flight (see postgres.Store.ClaimOutbox), so retries, back-off, dead
// letters and requeues cannot deliver an older intent after a newer one.
package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Store is the outbox table.
type Store interface {
	ClaimOutbox(ctx context.Context, after int64, n int, lease time.Duration) ([]ledger.OutboxRow, error)
	MarkDelivered(ctx context.Context, ids []int64) error
	MarkFailed(ctx context.Context, id int64, msg string, backoff time.Duration, dead bool) error
	ReleaseOutbox(ctx context.Context, ids []int64) error
}

// Writer writes and deletes tuples in one atomic, idempotent call: a tuple
// already written or already deleted is not an error.
type Writer interface {
	WriteIdempotent(ctx context.Context, writes, deletes []ledger.Tuple) error
}

// UnreachableError marks a failure to reach OpenFGA at all; Writers wrap
// such errors in it so the drain stops instead of blaming the rows.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	if e.Err != nil && strings.Contains(e.Err.Error(), e.URL) {
		return e.Err.Error() // it already names the URL
	}
	return fmt.Sprintf("OpenFGA (%s) is unreachable: %v", e.URL, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ledger.ErrUnreachable) true.
func (e *UnreachableError) Is(target error) bool { return target == ledger.ErrUnreachable }

// Options tune a drain; zero values take the defaults.
type Options struct {
	MaxAttempts int           // failures before a row is dead-lettered (10)
	Batch       int           // rows leased at once (500)
	MaxTuples   int           // tuples in one write call (OpenFGA's limit, 100)
	Lease       time.Duration // how long leased rows stay hidden (2m)
	BaseBackoff time.Duration // first retry delay, doubled per attempt (5s)
	MaxBackoff  time.Duration // ceiling of the delay (1h)
	MaxRows     int           // stop after this many rows; 0 = until empty
	Progress    func(n int)   // called with rows handled so far
	Log         *slog.Logger
}

func (o *Options) defaults() {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	if o.Batch <= 0 {
		o.Batch = 500
	}
	if o.MaxTuples <= 0 {
		o.MaxTuples = 100
	}
	if o.Lease <= 0 {
		o.Lease = 2 * time.Minute
	}
	if o.BaseBackoff <= 0 {
		o.BaseBackoff = 5 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = time.Hour
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
}

// Result counts what one drain did.
type Result struct {
	Delivered int `json:"delivered"`
	Failed    int `json:"failed"`
	Dead      int `json:"dead"`
	// Unreachable is set when the drain stopped because OpenFGA could not
	// be reached; the rows not yet delivered were left untouched.
	Unreachable string `json:"unreachable,omitempty"`
}

// Backoff is the delay before retry number attempts+1.
func Backoff(attempts int, base, ceiling time.Duration) time.Duration {
	d := base
	for i := 0; i < attempts && d < ceiling; i++ {
		d *= 2
	}
	return min(d, ceiling)
}

// Drain delivers due rows until none is left (or MaxRows, or ctx ends).
func Drain(ctx context.Context, st Store, w Writer, o Options) (Result, error) {
	o.defaults()
	var res Result
	handled := 0
	var after int64
	for o.MaxRows == 0 || handled < o.MaxRows {
		n := o.Batch
		if o.MaxRows > 0 {
			n = min(n, o.MaxRows-handled)
		}
		rows, err := st.ClaimOutbox(ctx, after, n, o.Lease)
		if err != nil {
			return res, fmt.Errorf("claim outbox rows: %w", err)
		}
		if len(rows) == 0 {
			break
		}
		after = rows[len(rows)-1].ID
		stop, err := deliverBatch(ctx, st, w, o, rows, &res)
		handled += len(rows)
		if o.Progress != nil {
			o.Progress(handled)
		}
		if err != nil || stop {
			return res, err
		}
	}
	if res.Delivered+res.Failed+res.Dead > 0 {
		o.Log.Info("Outbox drained", "delivered", res.Delivered, "failed", res.Failed, "dead", res.Dead)
	}
	return res, nil
}

type parsed struct {
	row     ledger.OutboxRow
	payload ledger.OutboxPayload
}

// deliverBatch delivers leased rows oldest first. Rows that only write are
// grouped into calls of up to MaxTuples distinct tuples; a row that deletes
// goes alone, so a later revoke is never merged with an earlier grant.
func deliverBatch(ctx context.Context, st Store, w Writer, o Options, rows []ledger.OutboxRow, res *Result) (stop bool, err error) {
	var delivered []int64
	failed := map[int64]bool{} // rows already marked failed or dead this batch
	var group []parsed
	groupTuples := 0
	seen := map[ledger.Tuple]bool{}

	flush := func() (bool, error) {
		if len(group) == 0 {
			return false, nil
		}
		defer func() { group, groupTuples, seen = group[:0], 0, map[ledger.Tuple]bool{} }()
		var writes []ledger.Tuple
		for _, p := range group {
			for _, t := range p.payload.Writes {
				if !seen[t] {
					seen[t] = true
					writes = append(writes, t)
				}
			}
		}
		var dels []ledger.Tuple
		if len(group) == 1 {
			dels = group[0].payload.Deletes
		}
		err := w.WriteIdempotent(ctx, writes, dels)
		if err == nil {
			for _, p := range group {
				delivered = append(delivered, p.row.ID)
			}
			return false, nil
		}
		if isUnreachable(err) {
			return true, err
		}
		if len(group) == 1 {
			failed[group[0].row.ID] = true
			return false, fail(ctx, st, o, group[0].row, err, res)
		}
		// One call failed for the group: find the row that is at fault by
		// delivering them one at a time.
		for _, p := range group {
			err := w.WriteIdempotent(ctx, p.payload.Writes, p.payload.Deletes)
			switch {
			case err == nil:
				delivered = append(delivered, p.row.ID)
			case isUnreachable(err):
				return true, err
			default:
				failed[p.row.ID] = true
				if err := fail(ctx, st, o, p.row, err, res); err != nil {
					return false, err
				}
			}
		}
		return false, nil
	}

	finish := func(unreachable error) (bool, error) {
		if err := st.MarkDelivered(ctx, delivered); err != nil {
			return true, fmt.Errorf("mark delivered: %w", err)
		}
		res.Delivered += len(delivered)
		if unreachable == nil {
			return false, nil
		}
		// Give back every leased row not delivered or failed, untouched.
		for _, id := range delivered {
			failed[id] = true
		}
		var back []int64
		for _, r := range rows {
			if !failed[r.ID] {
				back = append(back, r.ID)
			}
		}
		if err := st.ReleaseOutbox(context.WithoutCancel(ctx), back); err != nil {
			return true, fmt.Errorf("release outbox rows: %w", err)
		}
		res.Unreachable = unreachable.Error()
		o.Log.Warn("OpenFGA unreachable; outbox drain stopped", "error", unreachable.Error())
		return true, nil
	}

	for _, r := range rows {
		p, perr := ledger.ParseOutboxPayload(r.Payload)
		if perr != nil {
			// It can never be delivered: dead-letter it at once.
			if err := st.MarkFailed(ctx, r.ID, perr.Error(), 0, true); err != nil {
				return true, err
			}
			failed[r.ID] = true
			res.Dead++
			o.Log.Warn("outbox row dead-lettered", "id", r.ID, "error", perr.Error())
			continue
		}
		n := len(p.Writes)
		if len(p.Deletes) > 0 || groupTuples+n > o.MaxTuples {
			if stop, err := flush(); stop || err != nil {
				if stop {
					return finish(err)
				}
				return true, err
			}
		}
		group = append(group, parsed{row: r, payload: p})
		groupTuples += n
		if len(p.Deletes) > 0 {
			if stop, err := flush(); stop || err != nil {
				if stop {
					return finish(err)
				}
				return true, err
			}
		}
	}
	if stop, err := flush(); stop || err != nil {
		if stop {
			return finish(err)
		}
		return true, err
	}
	return finish(nil)
}

func fail(ctx context.Context, st Store, o Options, r ledger.OutboxRow, cause error, res *Result) error {
	dead := r.Attempts+1 >= o.MaxAttempts
	if err := st.MarkFailed(ctx, r.ID, cause.Error(), Backoff(r.Attempts, o.BaseBackoff, o.MaxBackoff), dead); err != nil {
		return fmt.Errorf("mark failed: %w", err)
	}
	if dead {
		res.Dead++
		o.Log.Warn("outbox row dead-lettered", "id", r.ID, "attempts", r.Attempts+1, "error", cause.Error())
	} else {
		res.Failed++
	}
	return nil
}

// isUnreachable: OpenFGA (or its datastore) did not answer. Whatever
// reported it, the one test is ledger.ErrUnreachable.
func isUnreachable(err error) bool { return errors.Is(err, ledger.ErrUnreachable) }
