package search

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// fixedKey is a cursor key that is not in a database (these tests open and
// seal tokens only).
type fixedKey []byte

func (k fixedKey) ListCursorKey(context.Context) ([]byte, error) { return k, nil }

var testKey = fixedKey("0123456789abcdef0123456789abcdef")

// TestSearchCursor: a position survives sealing exactly (any score, any
// page), and the token opens only for the caller and the query it was made
// for — never as an archive list cursor, nor a list cursor as a search
// cursor.
func TestSearchCursor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := &Searcher{Keys: testKey}
	pq, _ := ParseQuery("レスポンシブ design")
	po, _ := ParseQuery("design レスポンシブ")
	q, other := Request{Query: pq}.scope(), Request{Query: po}.scope()
	filtered := Request{Query: pq, Filter: ledger.ArchiveFilter{Host: "example.com"}}.scope()
	orgs := []string{"acme", "initech"}
	for _, score := range []float64{0, 1.5, 0.1 + 0.2, 1e-300, math.SmallestNonzeroFloat64, math.MaxFloat64, -2.25, float64(float32(3.1415927))} {
		for _, page := range []int{0, 1, MaxPagesPerArchive - 1} {
			p := Position{Score: score, ArchiveID: uuid.NewString(), Page: page}
			token, err := s.sealCursor(ctx, "alice", orgs, q, p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.openCursor(ctx, "alice", []string{"initech", "acme"}, q, token)
			if err != nil || *got != p {
				t.Fatalf("%+v came back as %+v, %v", p, got, err)
			}
			for _, bad := range []struct {
				subject string
				orgs    []string
				q       string
			}{{"bob", orgs, q}, {"alice", []string{"acme"}, q}, {"alice", orgs, other}, {"alice", orgs, filtered}} {
				if _, err := s.openCursor(ctx, bad.subject, bad.orgs, bad.q, token); !errors.Is(err, ErrBadCursor) {
					t.Fatalf("opened for %s %v %q: %v", bad.subject, bad.orgs, bad.q, err)
				}
			}
			seal, _ := archive.NewCursorSeal(testKey)
			if _, err := seal.Open("alice", orgs, token); err == nil {
				t.Fatal("a search cursor opens as an archive list cursor")
			}
			list, _ := seal.Seal("alice", orgs, &archive.Cursor{CapturedAt: time.Unix(int64(page), 0), ID: p.ArchiveID})
			if _, err := s.openCursor(ctx, "alice", orgs, q, list); !errors.Is(err, ErrBadCursor) {
				t.Fatalf("a list cursor opens as a search cursor: %v", err)
			}
		}
	}
}

// FuzzOpenCursor: no string opens as a cursor without the key, and none
// makes the search fail any other way.
func FuzzOpenCursor(f *testing.F) {
	s := &Searcher{Keys: testKey}
	pq, _ := ParseQuery("x")
	q := Request{Query: pq}.scope()
	good, _ := s.sealCursor(context.Background(), "alice", nil, q, Position{Score: 1, ArchiveID: uuid.NewString()})
	for _, seed := range []string{"", "c1.", good, good[:len(good)-1] + "A", "c1.\x00", "c1." + string(make([]byte, 72)), "\xff"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		p, err := s.openCursor(context.Background(), "bob", nil, q, token)
		if !errors.Is(err, ErrBadCursor) {
			t.Fatalf("%q: %+v %v", token, p, err)
		}
		if CheckCursor(token) == nil && len(token) != len(good) {
			t.Fatalf("%q passes the shape check", token)
		}
	})
}
