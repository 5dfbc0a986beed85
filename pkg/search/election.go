package search

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// One index per database. The archives' indexed_at marks are only true of
// the index they were made for, so the ledger records that index's
// identity (IndexIdentity), and with a Bleve index, which process holds it:
// the one process with the indexer lease opens the index and indexes; the
// others send their searches to it (its Address, with its Secret).

// IndexerLease is the ledger's record of the search index.
type IndexerLease struct {
	// IndexID is the index the indexed_at marks were made for: a Bleve
	// directory's random id, or OpenSearchIdentity's form ("" before any).
	IndexID string
	// Holder is the process that holds the Bleve index ("" when none ever
	// did); Live says its lease has not run out.
	Holder string
	Live   bool
	// Address is where the holder answers forwarded searches (an http URL;
	// "" for a command that indexes and answers no one), Secret what a
	// forwarded search must carry.
	Address, Secret string
	// Until is when the holder's lease runs out unless renewed.
	Until time.Time
	// OpenSearchLive says an OpenSearch process checked in for IndexID
	// and its check-in has not run out.
	OpenSearchLive bool
}

// Leases is the ledger's side of the election (pkg/store/postgres).
type Leases interface {
	// AcquireSearchIndexer takes the lease for holder when it is free, run
	// out, or holder's already, recording address and secret, until now +
	// ttl. It returns the record after the attempt and whether holder has
	// the lease.
	AcquireSearchIndexer(ctx context.Context, holder, address, secret string, ttl time.Duration) (IndexerLease, bool, error)
	// RenewSearchIndexer extends holder's lease to now + ttl; false when
	// holder no longer has it.
	RenewSearchIndexer(ctx context.Context, holder string, ttl time.Duration) (bool, error)
	// ReleaseSearchIndexer ends holder's lease now (the index id stays)
	// and wakes the processes waiting for it.
	ReleaseSearchIndexer(ctx context.Context, holder string) error
	// SearchIndexer reads the record.
	SearchIndexer(ctx context.Context) (IndexerLease, error)
	// AdoptSearchIndex makes indexID the index the marks are for, holder
	// holding the lease (ErrNotIndexer otherwise): when another index was
	// recorded, every archive's indexed_at goes back to NULL in the same
	// transaction. It returns how many archives were marked for indexing
	// again.
	AdoptSearchIndex(ctx context.Context, holder, indexID string) (int64, error)
	// CheckInOpenSearch records an OpenSearch process using indexID for
	// ttl more: refused (a *SplitError) while a Bleve holder's lease is live or
	// another OpenSearch index is checked in; when another index was
	// recorded, every archive's indexed_at goes back to NULL. It returns
	// how many were.
	CheckInOpenSearch(ctx context.Context, indexID string, ttl time.Duration) (int64, error)
	// MarkIndexedAs is MarkIndexed fenced by the lease: nothing is marked,
	// and the error is ErrNotIndexer, unless holder holds the record and
	// indexID is the index recorded.
	MarkIndexedAs(ctx context.Context, holder, indexID string, ids []string) error
}

// ErrNotIndexer is a process that wrote as the index's holder but no longer
// is (its lease ran out and another process took over): what it indexed is
// not marked.
var ErrNotIndexer = errors.New("this process no longer holds the search index (another process took it over); its writes are not recorded")

// SplitError is a configuration that would split the index: processes of
// one database writing to different indexes.
type SplitError struct{ Reason string }

func (e *SplitError) Error() string { return e.Reason }

// OpenSearchIdentity is how an OpenSearch index is recorded as the index.
func OpenSearchIdentity(baseURL, index string) string {
	return "opensearch " + redact(baseURL) + " " + index
}

// IsOpenSearchIdentity says the recorded index is an OpenSearch one.
func IsOpenSearchIdentity(id string) bool { return len(id) > 11 && id[:11] == "opensearch " }

// Fenced is l with MarkIndexed fenced by the lease: an indexer that lost
// the index marks nothing (ErrNotIndexer), so the marks stay true of the
// index recorded.
func Fenced(l Ledger, leases Leases, holder, indexID string) Ledger {
	return &fencedLedger{Ledger: l, leases: leases, holder: holder, indexID: indexID}
}

type fencedLedger struct {
	Ledger
	leases          Leases
	holder, indexID string
}

func (f *fencedLedger) MarkIndexed(ctx context.Context, ids []string) error {
	if err := f.leases.MarkIndexedAs(ctx, f.holder, f.indexID, ids); err != nil {
		return fmt.Errorf("mark archives indexed in %s: %w", f.indexID, err)
	}
	return nil
}

// SetTitles passes titles on when the ledger keeps them.
func (f *fencedLedger) SetTitles(ctx context.Context, titles map[string]string) error {
	if t, ok := f.Ledger.(Titler); ok {
		return t.SetTitles(ctx, titles)
	}
	return nil
}
