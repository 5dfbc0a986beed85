// Package archive owns admission into the ledger: turning a BrowserHive
// manifest into an archives row plus its queued OpenFGA tuples (one
// transaction), and reconcile, which registers captures whose level report
// recorded a manifest key but whose archive never reached the ledger.
package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"time"

	"golang.org/x/sync/errgroup"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/manifest"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
)

// Store is what admission and reconcile need from the database.
type Store interface {
	InsertArchive(ctx context.Context, a postgres.NewArchive, tuples func(archiveID string) ledger.OutboxPayload) (string, bool, error)
	UnregisteredSubmissions(ctx context.Context, since *time.Time) ([]ledger.Submission, error)
}

// Objects reads objects from the configured bucket.
type Objects interface {
	Get(ctx context.Context, bucket, key string) ([]byte, error)
}

// Outcome is what admitting one manifest did.
type Outcome int

const (
	// Registered: a new archives row and its outbox row were written.
	Registered Outcome = iota
	// AlreadyKnown: the (bucket, object_key) was already in the ledger.
	AlreadyKnown
	// NoArchive: the capture did not succeed or produced no WACZ.
	NoArchive
)

// Admitter admits manifests into the ledger of one bucket.
type Admitter struct {
	Store  Store
	Bucket string
	Log    *slog.Logger
}

// Admit registers the archive described by m for org, owned by submittedBy
// when a person asked for the capture. A manifest that is not a success with
// a WACZ returns NoArchive and writes nothing.
func (a *Admitter) Admit(ctx context.Context, m manifest.Manifest, org string, submittedBy *string) (string, Outcome, error) {
	if org == "" {
		return "", NoArchive, errors.New("admit: no organization to attribute the archive to")
	}
	row, err := m.Archive(a.Bucket)
	if errors.Is(err, manifest.ErrNoArchive) {
		a.logger().Warn("capture produced no archive; not adding to the ledger", "taskId", m.TaskID, "reason", err.Error())
		return "", NoArchive, nil
	}
	if err != nil {
		return "", NoArchive, err
	}
	id, inserted, err := a.Store.InsertArchive(ctx, postgres.NewArchive{
		TaskID: row.TaskID, CorrelationID: row.CorrelationID, Bucket: row.Bucket, ObjectKey: row.ObjectKey,
		SourceURL: row.SourceURL, Labels: row.Labels, WaczComplete: row.WaczComplete, Signed: row.Signed, CapturedAt: row.CapturedAt,
	}, func(archiveID string) ledger.OutboxPayload {
		return ledger.AdmissionTuples(archiveID, row.TaskID, org, submittedBy)
	})
	if err != nil {
		return "", NoArchive, err
	}
	if !inserted {
		return "", AlreadyKnown, nil
	}
	a.logger().Info("archive registered", "archiveId", id, "taskId", row.TaskID)
	return id, Registered, nil
}

func (a *Admitter) logger() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}

// ReconcileResult counts what reconcile did with each pending submission.
type ReconcileResult struct {
	Pending    int `json:"pending"`
	Registered int `json:"registered"`
	Skipped    int `json:"skipped"`
	Missing    int `json:"missing"`
	// MissingKeys lists the manifest keys that were not in the bucket.
	MissingKeys []string `json:"missingKeys"`
}

// Reconciler registers submissions whose archive never reached the ledger.
type Reconciler struct {
	Admitter *Admitter
	Objects  Objects
	// Concurrency bounds the manifest fetches in flight (default 8).
	Concurrency int
	// Start, when set, is told how many submissions are pending.
	Start func(total int)
	// Progress, when set, is called once per submission handled.
	Progress func()
}

// Reconcile reads exactly the manifest keys recorded in capture_submissions
// (it never lists the bucket and never builds a key) and admits each with
// the submission's organization and submitter.
func (r *Reconciler) Reconcile(ctx context.Context, since *time.Time) (ReconcileResult, error) {
	subs, err := r.Admitter.Store.UnregisteredSubmissions(ctx, since)
	if err != nil {
		return ReconcileResult{}, fmt.Errorf("list unregistered submissions: %w", err)
	}
	res := ReconcileResult{Pending: len(subs), MissingKeys: []string{}}
	if r.Start != nil {
		r.Start(len(subs))
	}
	n := r.Concurrency
	if n <= 0 {
		n = 8
	}
	var mu sync.Mutex
	log := r.Admitter.logger()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(n)
	for _, sub := range subs {
		g.Go(func() error {
			outcome, err := r.one(gctx, sub)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if r.Progress != nil {
				r.Progress()
			}
			switch outcome {
			case outcomeMissing:
				res.Missing++
				res.MissingKeys = append(res.MissingKeys, sub.ManifestKey)
				log.Warn("Manifest is not where the capture reported writing it", "taskId", sub.TaskID, "key", sub.ManifestKey)
			case outcomeRegistered:
				res.Registered++
			default:
				res.Skipped++
			}
			return nil
		})
	}
	err = g.Wait()
	slices.Sort(res.MissingKeys) // the same order whatever the scheduling
	return res, err
}

type reconcileOutcome int

const (
	outcomeRegistered reconcileOutcome = iota
	outcomeSkipped
	outcomeMissing
)

func (r *Reconciler) one(ctx context.Context, sub ledger.Submission) (reconcileOutcome, error) {
	data, err := r.Objects.Get(ctx, r.Admitter.Bucket, sub.ManifestKey)
	if errors.Is(err, blob.ErrNotFound) {
		return outcomeMissing, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read manifest %s: %w", sub.ManifestKey, err)
	}
	m, err := manifest.Decode(data)
	if err != nil {
		r.Admitter.logger().Warn("Manifest is not a report the ledger can read; skipping it", "taskId", sub.TaskID, "error", err.Error())
		return outcomeSkipped, nil
	}
	if m.TaskID != sub.TaskID {
		r.Admitter.logger().Warn("Manifest belongs to another task; skipping it", "taskId", sub.TaskID, "manifestTaskId", m.TaskID)
		return outcomeSkipped, nil
	}
	_, outcome, err := r.Admitter.Admit(ctx, m, sub.OrgID, sub.SubmittedBy)
	if err != nil {
		return 0, err
	}
	if outcome == Registered {
		return outcomeRegistered, nil
	}
	return outcomeSkipped, nil
}
