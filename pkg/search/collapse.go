package search

import (
	"context"
	"fmt"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// The collapse of one URL's captures, across a whole result set.
//
// A search shows each URL once: as its newest capture that the caller may
// view and that matches the query (and the request's filters). The rule is
// a property of one candidate, so it does not depend on where a page
// starts or ends, and every page of a cursor walk applies it alike:
//
//	a candidate (a page of archive A, url u) is dropped when an archive
//	with A's source URL, captured after A ((captured_at, id) greater),
//	passing the request's filters, holds a page whose url is u that
//	matches the query and passes the caller's index filter, and the
//	caller may view that archive (the ledger's record, then can_view).
//
// A capture the caller may not view never drops anything, so it changes
// neither which hits show, nor their order, nor the count. Older matching
// captures are named only among the hit's other captures.
//
// Cost: one ledger query per batch of candidates (the later captures of
// each, nearest first, laterWindow at a time: an index lookup, nothing
// when a URL was captured once); for candidates that have some, their
// page's URL (the document, which fill would read anyway for a hit), one
// index query per URL (Backend.Among) and the check of the newest matching
// later capture, which every older capture of the URL in the request
// shares; a candidate dropped here is not checked itself.

// laterWindow is how many later captures of a candidate's source URL one
// round looks at.
const laterWindow = 100

// LaterCaptures finds, for each archive of ids, the archives with its
// source URL captured after it that pass f, the nearest first, at most
// limit each.
type LaterCaptures interface {
	LaterCaptures(ctx context.Context, ids []string, f ledger.ArchiveFilter, limit int) (map[string][]ledger.ArchiveRef, error)
}

// collapser applies the rule for one request.
type collapser struct {
	s      *Searcher
	later  LaterCaptures
	q      Query
	filter *Filter
	lf     ledger.ArchiveFilter
	// docs are the documents read for their URL, by DocID; fill uses them.
	docs map[string]Document
}

// keep answers, for each of cands, whether no later capture of its URL
// that the caller may view matches (whether the caller may view the
// candidate itself is the scan's question, asked after this one only for
// the candidates kept).
func (c *collapser) keep(ctx context.Context, cands []Position, visible func(ctx context.Context, ids []string) (map[string]bool, error)) ([]bool, error) {
	keep := make([]bool, len(cands))
	from := make([]string, len(cands)) // look at captures after this archive
	pending := make([]int, len(cands))
	for i, p := range cands {
		keep[i], from[i], pending[i] = true, p.ArchiveID, i
	}
	for len(pending) > 0 {
		later, err := c.later.LaterCaptures(ctx, distinct(pending, func(i int) string { return from[i] }), c.lf, laterWindow)
		if err != nil {
			return nil, fmt.Errorf("later captures: %w", err)
		}
		pending = keepIf(pending, func(i int) bool { return len(later[from[i]]) > 0 })
		if len(pending) == 0 {
			break
		}
		if err := c.load(ctx, cands, pending); err != nil {
			return nil, err
		}
		// A document gone from the index since it was found keeps its place
		// here; fill leaves it out.
		pending = keepIf(pending, func(i int) bool { _, ok := c.docs[cands[i].DocID()]; return ok })
		urlOf := func(i int) string { return c.docs[cands[i].DocID()].URL }
		asked := map[string][]string{}
		for _, i := range pending {
			for _, r := range later[from[i]] {
				asked[urlOf(i)] = append(asked[urlOf(i)], r.ID)
			}
		}
		matches := make(map[string]map[string]bool, len(asked))
		for u, ids := range asked {
			m, err := c.s.Backend.Among(ctx, c.q, c.filter, u, dedupe(ids))
			if err != nil {
				return nil, err
			}
			matches[u] = m
		}
		// Each candidate's matching later captures in the window, newest
		// first (the older captures of one URL then share one check); their
		// visibility is asked one per candidate and round, so a candidate
		// costs a check only until one is visible.
		todo := map[int][]string{}
		for _, i := range pending {
			refs := later[from[i]]
			for k := len(refs) - 1; k >= 0; k-- {
				if matches[urlOf(i)][refs[k].ID] {
					todo[i] = append(todo[i], refs[k].ID)
				}
			}
		}
		seen := map[string]bool{}
		for {
			var ask []string
			for _, i := range pending {
				if keep[i] && len(todo[i]) > 0 {
					ask = append(ask, todo[i][0])
				}
			}
			if len(ask) == 0 {
				break
			}
			got, err := visible(ctx, dedupe(ask))
			if err != nil {
				return nil, err
			}
			for id, ok := range got {
				seen[id] = ok
			}
			for _, i := range pending {
				for keep[i] && len(todo[i]) > 0 {
					v, known := seen[todo[i][0]]
					if !known {
						break
					}
					if v {
						keep[i] = false
					}
					todo[i] = todo[i][1:]
				}
			}
		}
		// A candidate still kept whose window was full looks further.
		pending = keepIf(pending, func(i int) bool {
			refs := later[from[i]]
			if !keep[i] || len(refs) < laterWindow {
				return false
			}
			from[i] = refs[len(refs)-1].ID
			return true
		})
	}
	return keep, nil
}

// load reads the documents of cands at the indexes not read yet.
func (c *collapser) load(ctx context.Context, cands []Position, at []int) error {
	var ids []string
	for _, i := range at {
		if _, ok := c.docs[cands[i].DocID()]; !ok {
			ids = append(ids, cands[i].DocID())
		}
	}
	if len(ids) == 0 {
		return nil
	}
	docs, err := c.s.Backend.Documents(ctx, dedupe(ids))
	if err != nil {
		return err
	}
	for id, d := range docs {
		c.docs[id] = d
	}
	return nil
}

func distinct(at []int, key func(int) string) []string {
	ids := make([]string, 0, len(at))
	for _, i := range at {
		ids = append(ids, key(i))
	}
	return dedupe(ids)
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func keepIf(at []int, ok func(int) bool) []int {
	out := at[:0:0]
	for _, i := range at {
		if ok(i) {
			out = append(out, i)
		}
	}
	return out
}
