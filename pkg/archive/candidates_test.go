package archive_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// TestCandidateListEqualsFullScan: on a randomized ledger admitted through
// the real path (several thousand archives, five organizations, owners or
// none, some jobs with two archives admitted for two organizations, shares
// to users and to organizations, some revoked, some expired, one archive
// deleted), the candidate list and the full scan return the same pages,
// page after page, for many callers, including outsiders, callers of
// several organizations and callers who only have shares.
func TestCandidateListEqualsFullScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newManaged(t)
	rng := rand.New(rand.NewPCG(15, 2))
	orgs := []string{"acme", "contoso", "initech", "umbrella", "hooli"}
	users := []string{"alice", "bob", "carol", "dave", "erin", "frank"}
	// Skewed: acme holds about half, hooli about 1%.
	weights := []int{50, 25, 14, 10, 1}
	pickOrg := func() string {
		n := rng.IntN(100)
		for i, w := range weights {
			if n < w {
				return orgs[i]
			}
			n -= w
		}
		return orgs[0]
	}
	const n = 3000
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	type row struct{ id, owner string }
	var rows []row
	var task string
	for i := range n {
		// A few jobs get a second archive, admitted for another organization
		// (the job then belongs to both: so do both archives).
		if i == 0 || rng.IntN(20) != 0 {
			task = uuid.NewString()
		}
		at := base.Add(time.Duration(rng.IntN(n/3)) * time.Minute) // many ties
		var owner *string
		if rng.IntN(3) > 0 {
			owner = &users[rng.IntN(len(users))]
		}
		org := pickOrg()
		a := ledger.NewArchive{TaskID: task, Bucket: m.env.Bucket, ObjectKey: fmt.Sprintf("eq/%d.wacz", i),
			SourceURL: fmt.Sprintf("https://e.example/%d", i), Labels: []string{}, CapturedAt: at}
		id, ok, err := m.st.InsertArchive(ctx, a, func(archiveID string) ledger.OutboxPayload {
			return ledger.AdmissionTuples(archiveID, task, org, owner)
		})
		if err != nil || !ok {
			t.Fatalf("insert %d: %v %v", i, ok, err)
		}
		r := row{id: id}
		if owner != nil {
			r.owner = *owner
		}
		rows = append(rows, r)
	}
	m.drain(t)

	// Shares, granted by the owners: to a user or an organization, for an
	// hour or a day; then some revoked, and the clock moves 2 h (the hour
	// shares expire, the day shares stay).
	var shared []string
	for _, r := range rows {
		if r.owner == "" || rng.IntN(40) != 0 {
			continue
		}
		d := []string{"1h", "24h"}[rng.IntN(2)]
		req := archive.ShareRequest{Duration: d}
		if rng.IntN(2) == 0 {
			u := users[rng.IntN(len(users))]
			if u == r.owner {
				u = "outsider"
			}
			req.User = &u
		} else {
			o := orgs[rng.IntN(len(orgs))]
			req.Organization = &o
		}
		g, err := m.shares.Grant(ctx, r.owner, r.id, req)
		if err != nil {
			t.Fatalf("share %s: %v", r.id, err)
		}
		if rng.IntN(4) == 0 {
			if _, _, err := m.shares.Revoke(ctx, r.owner, r.id, g.ID); err != nil {
				t.Fatal(err)
			}
		}
		shared = append(shared, r.id)
	}
	for _, r := range rows {
		if r.owner != "" && slices.Contains(shared, r.id) {
			if _, err := m.del.Delete(ctx, r.owner, r.id); err != nil {
				t.Fatalf("delete %s: %v", r.id, err)
			}
			break
		}
	}
	m.drain(t)
	m.clock.Add(2 * time.Hour)
	if len(shared) < 20 {
		t.Fatalf("only %d shares: the test would not exercise them", len(shared))
	}

	list := func(src archive.ListSource) *archive.Access {
		return &archive.Access{Perms: app.Permissions{Client: m.env.FGA, Now: m.clock.Now}, Catalog: m.st, Signer: m.env.Blob,
			Source: src, Now: m.clock.Now, PageSize: 37, ScanLimit: 1_000_000, TimeBudget: 10 * time.Minute}
	}
	cand, scan := list(archive.SourceCandidates), list(archive.SourceScan)
	callers := []struct {
		subject string
		orgs    []string
	}{
		{"alice", []string{"acme"}}, {"bob", []string{"hooli"}}, {"carol", []string{"initech", "umbrella"}},
		{"dave", nil}, {"outsider", nil}, {"erin", []string{"hooli", "contoso"}}, {"frank", []string{"nobody"}},
		{"nobody", []string{"umbrella"}}, {"alice", []string{"hooli"}},
	}
	for _, c := range callers {
		var pos *archive.Cursor
		pages, seen := 0, 0
		for {
			pc, err := cand.List(ctx, c.subject, c.orgs, pos)
			if err != nil {
				t.Fatal(err)
			}
			ps, err := scan.List(ctx, c.subject, c.orgs, pos)
			if err != nil {
				t.Fatal(err)
			}
			if ps.Truncated || pc.Truncated {
				t.Fatalf("%s %v: a page was truncated (scan %v, candidates %v)", c.subject, c.orgs, ps.Truncated, pc.Truncated)
			}
			if !slices.Equal(ids(pc.Archives), ids(ps.Archives)) || !sameCursor(pc.Next, ps.Next) {
				t.Fatalf("%s %v page %d: candidates %v next %v, scan %v next %v", c.subject, c.orgs, pages,
					ids(pc.Archives), pc.Next, ids(ps.Archives), ps.Next)
			}
			if pc.Scanned > len(pc.Archives)*2+50 {
				t.Errorf("%s %v page %d: the candidate list asked about %d rows for %d visible", c.subject, c.orgs, pages, pc.Scanned, len(pc.Archives))
			}
			pages++
			seen += len(pc.Archives)
			if pc.Next == nil {
				break
			}
			pos = pc.Next
		}
		t.Logf("%s %v: %d archives in %d pages, identical", c.subject, c.orgs, seen, pages)
	}
}

func ids(as []ledger.Archive) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ID
	}
	return out
}

func sameCursor(a, b *archive.Cursor) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ID == b.ID && a.CapturedAt.Equal(b.CapturedAt)
}
