// Package visible is the permission-filtered pagination that the archive
// list and full-text search share: a caller's page holds only candidates of
// archives OpenFGA says it may view, read in batches whose size adapts to
// the visibility seen so far, confirmed a chunk at a time with BatchCheck,
// bounded by a check budget and a time budget and, server-wide, by a Gate;
// the position where a page stopped travels as a sealed token (Seal).
//
// OpenFGA is the only authority: a candidate is kept only when its archive
// was allowed in this request. Where candidates come from (the ledger's
// rows, the index's matches) and what a position is belong to the caller.
package visible

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// CheckChunk is how many candidates one BatchCheck covers at most when no
// gate narrows it.
const CheckChunk = 100

// MaxBatch is the most candidates one batch reads.
const MaxBatch = 1000

// Defaults of a scan's budgets.
const (
	DefaultCheckBudget = 5000
	DefaultTimeBudget  = 2 * time.Second
)

// Scan is one filtered scan for one caller, over candidates of type C.
type Scan[C any] struct {
	// Caller keys the gate's per-caller bound, Orgs (the caller's
	// organizations) its per-organization bound.
	Caller string
	Orgs   []string
	// What names the scans in a BusyError ("archive lists", "searches").
	What string
	// Start is where to resume (the last candidate a previous page
	// examined); nil starts at the beginning.
	Start *C
	// Fetch returns up to n candidates strictly after `after` (from the
	// beginning when nil), in order; fewer than n means there are no more.
	Fetch func(ctx context.Context, after *C, n int) ([]C, error)
	// Archive is the archive a candidate belongs to: what OpenFGA is asked
	// about, once per request.
	Archive func(C) string
	// Check asks can_view about ids, answering for each in order.
	Check func(ctx context.Context, ids []string) ([]bool, error)
	// Recorded, when set, says which of ids the ledger recorded a grantee
	// of for the caller: the others are not visible without a check, and
	// the rest of a batch is asked about at once, before its chunks.
	Recorded func(ctx context.Context, ids []string) (map[string]bool, error)
	// Keep, when set, is asked about the candidates of each chunk not
	// known to be invisible, in order, before their own checks, and answers
	// for each whether it may take a place on the page: one it refuses is
	// examined but not checked, chosen nor counted visible (a search's
	// older capture of a URL whose newer capture the caller sees: whether
	// the caller may view the older one does not matter). Its visible
	// settles archives the way the scan does (the ledger's record, then
	// can_view), counted in Checked, remembered for the request and waiting
	// in the gate's lane.
	Keep func(ctx context.Context, cands []C, visible func(ctx context.Context, ids []string) (map[string]bool, error)) ([]bool, error)
	// Size is how many visible candidates a page holds.
	Size int
	// Floor is how many candidates the scan examines at least, even once
	// the page is full (to count what is visible; 0: none).
	Floor int
	// Chunk is how many candidates are examined between two looks at the
	// budgets (default: the gate's check lane, else CheckChunk).
	Chunk int
	// WholeChunks keeps examining a chunk after the page fills (its
	// answers are paid for: the scan counts them); without it the scan
	// stops at the candidate that fills the page.
	WholeChunks bool
	// OnePerArchive says every candidate is an archive of its own (the
	// list): a batch then never reads more than the check budget left.
	OnePerArchive bool
	// CheckBudget is how many archives the scan may ask about (default
	// DefaultCheckBudget); TimeBudget how long it may work (default
	// DefaultTimeBudget). Either stops it after the chunk in hand; a scan
	// always checks at least one chunk, so resuming moves forward.
	CheckBudget int
	TimeBudget  time.Duration
	// Gate, when set, is passed before anything is asked (a *BusyError
	// when full), and every check waits its turn in its lane.
	Gate *Gate
}

// Result is what a scan found.
type Result[C any] struct {
	// Chosen are the visible candidates of the page, in order.
	Chosen []C
	// Last is the last candidate examined, LastChosen the last chosen
	// (nil when none).
	Last, LastChosen *C
	// Examined is how many candidates were examined, Visible how many of
	// them were visible, Checked how many archives OpenFGA was asked about
	// and Fetched how many candidates were read.
	Examined, Visible, Checked, Fetched int
	// Full says the page filled.
	Full bool
	// Truncated says a budget ended the scan before the page filled; Last
	// is where to resume.
	Truncated bool
	// Exhausted says the candidates ran out; All that every candidate there
	// is was examined.
	Exhausted, All bool
}

// Run passes the gate, then reads, checks and chooses candidates until the
// page is full (and Floor candidates were examined), the candidates run
// out, or a budget is spent.
func (s *Scan[C]) Run(ctx context.Context) (Result[C], error) {
	budget := s.TimeBudget
	if budget <= 0 {
		budget = DefaultTimeBudget
	}
	if s.Gate != nil {
		leave, busy := s.Gate.Enter(s.Caller, s.Orgs)
		if busy != nil {
			busy.What, busy.RetryAfter = s.What, budget
			return Result[C]{}, busy
		}
		defer leave()
	}
	return s.run(ctx, time.Now().Add(budget))
}

func (s *Scan[C]) run(ctx context.Context, deadline time.Time) (Result[C], error) {
	r, err := s.fill(ctx, deadline)
	r.All = r.Exhausted && r.Examined == r.Fetched
	return r, err
}

func (s *Scan[C]) fill(ctx context.Context, deadline time.Time) (Result[C], error) {
	size, limit := max(s.Size, 1), s.CheckBudget
	if limit <= 0 {
		limit = DefaultCheckBudget
	}
	chunkSize := s.Chunk
	if chunkSize <= 0 {
		chunkSize = CheckChunk
		if s.Gate != nil {
			chunkSize = s.Gate.bounds.Checks
		}
	}
	var r Result[C]
	known := map[string]bool{} // archive → may view, for this request
	pos := s.Start
	for {
		need := size - len(r.Chosen)
		batch := max(need, 1)
		if r.Examined > 0 {
			// Expect the visibility seen so far; never below 1/64 so one
			// batch stays bounded, and a quarter extra to avoid a short tail.
			ratio := max(float64(r.Visible)/float64(r.Examined), 1.0/64)
			batch = int(float64(need)/ratio*1.25) + 1
		}
		batch = min(max(batch, need, s.Floor-r.Examined), MaxBatch)
		if s.OnePerArchive {
			batch = min(batch, limit-r.Checked)
		}
		cands, err := s.Fetch(ctx, pos, batch)
		if err != nil {
			return Result[C]{}, err
		}
		r.Fetched += len(cands)
		r.Exhausted = len(cands) < batch
		if s.Recorded != nil {
			if err := s.recorded(ctx, cands, known, &r); err != nil {
				return Result[C]{}, err
			}
		}
		// Check the batch in chunks, in order, and stop once the page is
		// full: a batch sized from a small sample can be far larger than
		// what the page still needs. Behind a gate, checks are as small as
		// its lane and wait their turn in it.
		for start := 0; start < len(cands); start += chunkSize {
			chunk := cands[start:min(start+chunkSize, len(cands))]
			keep, err := s.keep(ctx, chunk, known, &r)
			if err != nil {
				return Result[C]{}, err
			}
			if err := s.ask(ctx, s.unknown(kept(chunk, keep), known), known, &r); err != nil {
				return Result[C]{}, err
			}
			for i := range chunk {
				c := chunk[i]
				r.Examined++
				pos, r.Last = &c, &c
				if !known[s.Archive(c)] || (keep != nil && !keep[i]) {
					continue
				}
				r.Visible++
				if len(r.Chosen) < size {
					r.Chosen = append(r.Chosen, c)
					r.LastChosen = &c
				}
				r.Full = len(r.Chosen) == size
				if r.Full && !s.WholeChunks && r.Examined >= s.Floor {
					return r, nil
				}
			}
			switch {
			case r.Full && r.Examined >= s.Floor:
				return r, nil
			case start+chunkSize >= len(cands) && r.Exhausted:
				// The candidates ended inside this batch.
				return r, nil
			case r.Checked >= limit || !time.Now().Before(deadline):
				// Out of budget: a page still filling is cut short and
				// resumes after the last candidate examined; a full page
				// only stops counting.
				r.Truncated = !r.Full
				return r, nil
			}
		}
		if len(cands) == 0 {
			return r, nil
		}
	}
}

// kept is the candidates of chunk keep keeps (all when keep is nil).
func kept[C any](chunk []C, keep []bool) []C {
	if keep == nil {
		return chunk
	}
	var out []C
	for i, c := range chunk {
		if keep[i] {
			out = append(out, c)
		}
	}
	return out
}

// keep asks Keep about the chunk's candidates not known to be invisible;
// nil keeps them all.
func (s *Scan[C]) keep(ctx context.Context, chunk []C, known map[string]bool, r *Result[C]) ([]bool, error) {
	if s.Keep == nil {
		return nil, nil
	}
	var vis []C
	var at []int
	for i, c := range chunk {
		if ok, settled := known[s.Archive(c)]; ok || !settled {
			vis, at = append(vis, c), append(at, i)
		}
	}
	keep := make([]bool, len(chunk))
	if len(vis) == 0 {
		return keep, nil
	}
	settle := func(ctx context.Context, ids []string) (map[string]bool, error) {
		if err := s.settle(ctx, ids, known, r); err != nil {
			return nil, err
		}
		out := make(map[string]bool, len(ids))
		for _, id := range ids {
			out[id] = known[id]
		}
		return out, nil
	}
	got, err := s.Keep(ctx, vis, settle)
	if err != nil {
		return nil, err
	}
	if len(got) != len(vis) {
		return nil, fmt.Errorf("keep: %d answers for %d candidates", len(got), len(vis))
	}
	for j, i := range at {
		keep[i] = got[j]
	}
	return keep, nil
}

// unknown is the distinct archives of cands not settled yet in this
// request, in order.
func (s *Scan[C]) unknown(cands []C, known map[string]bool) []string {
	var ids []string
	seen := map[string]bool{}
	for _, c := range cands {
		id := s.Archive(c)
		if _, ok := known[id]; !ok && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// recorded settles, with one ledger query and then the checks of the rest,
// the archives of a batch not known yet in this request: those the ledger
// recorded no grantee of for the caller are not visible without asking;
// OpenFGA is asked about the others, which are few and nearly all visible,
// so the batch costs one call however sparse the caller (behind a gate, its
// lane's share at a time). The chunks then find them all known.
func (s *Scan[C]) recorded(ctx context.Context, cands []C, known map[string]bool, r *Result[C]) error {
	return s.settle(ctx, s.unknown(cands, known), known, r)
}

// settle decides the archives of ids not known yet in this request: with
// the ledger's record first when the scan has one, then BatchCheck.
func (s *Scan[C]) settle(ctx context.Context, ids []string, known map[string]bool, r *Result[C]) error {
	seen := map[string]bool{}
	ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool {
		_, ok := known[id]
		drop := ok || seen[id]
		seen[id] = true
		return drop
	})
	if len(ids) == 0 {
		return nil
	}
	if s.Recorded == nil {
		return s.ask(ctx, ids, known, r)
	}
	rec, err := s.Recorded(ctx, ids)
	if err != nil {
		return err
	}
	var ask []string
	for _, id := range ids {
		if rec[id] {
			ask = append(ask, id)
		} else {
			known[id] = false
		}
	}
	return s.ask(ctx, ask, known, r)
}

// ask settles ids with BatchCheck: in one call, or behind a gate in pieces
// of its lane's width, each waiting its turn.
func (s *Scan[C]) ask(ctx context.Context, ids []string, known map[string]bool, r *Result[C]) error {
	step := len(ids)
	if s.Gate != nil {
		step = s.Gate.bounds.Checks
	}
	for start := 0; start < len(ids); start += step {
		part := ids[start:min(start+step, len(ids))]
		call := func() ([]bool, error) { return s.Check(ctx, part) }
		var allowed []bool
		var err error
		if s.Gate != nil {
			allowed, err = s.Gate.check(ctx, call)
		} else {
			allowed, err = call()
		}
		if err != nil {
			return fmt.Errorf("batch check can_view: %w", err)
		}
		if len(allowed) != len(part) {
			return fmt.Errorf("batch check can_view: %d answers for %d archives", len(allowed), len(part))
		}
		for i, id := range part {
			known[id] = allowed[i]
		}
		r.Checked += len(part)
	}
	return nil
}
