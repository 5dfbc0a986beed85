package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/manifest"
)

// Store is what admission and reconcile need from the database.
type Store interface {
	InsertArchive(ctx context.Context, a ledger.NewArchive, tuples func(archiveID string) ledger.OutboxPayload) (string, bool, error)
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
	id, inserted, err := a.Store.InsertArchive(ctx, ledger.NewArchive{
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
// Every row ends in exactly one of Registered, Skipped, Missing, Refused and
// Errored.
type ReconcileResult struct {
	Pending    int `json:"pending"`
	Registered int `json:"registered"`
	// Skipped: the manifest is a capture with no archive to admit (failed,
	// cancelled, no WACZ), or its archive is already in the ledger.
	Skipped int `json:"skipped"`
	// Missing: no manifest where the capture reported writing it.
	Missing int `json:"missing"`
	// Refused: the manifest is not this submission's capture (another task,
	// or another correlation): it is never admitted.
	Refused int `json:"refused"`
	// Errored: the row could not be handled (a manifest key the ledger does
	// not read, S3 refusing the key, a manifest that is not a report, a WACZ
	// location the ledger does not read, a row PostgreSQL refuses).
	Errored int `json:"errored"`
	// MissingKeys lists the manifest keys that were not in the bucket.
	MissingKeys []string `json:"missingKeys"`
	// Refusals and Errors say which rows were refused or errored, and why.
	Refusals []RowProblem `json:"refusals"`
	Errors   []RowProblem `json:"errors"`
}

// Incomplete reports whether some rows were left undone (missing, refused
// or errored): the command exits 3.
func (r ReconcileResult) Incomplete() bool { return r.Missing+r.Refused+r.Errored > 0 }

// RowProblem is one submission reconcile refused or could not handle.
type RowProblem struct {
	TaskID string `json:"taskId"`
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// UnreachableError stops a reconcile: a dependency it needs for every row
// (S3 or PostgreSQL) did not answer.
type UnreachableError struct {
	Dependency string // "S3" or "PostgreSQL"
	Err        error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%s did not answer: %v", e.Dependency, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ledger.ErrUnreachable) true.
func (e *UnreachableError) Is(target error) bool { return target == ledger.ErrUnreachable }

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
// the submission's organization and submitter, and only when the manifest
// is that submission's capture: its taskId is the row's, and its
// correlationId the row's correlation_id when the row has one. A row that
// cannot be handled is that row's problem (counted and listed, the others
// go on); only a dependency that does not answer, or a failure that is not
// one row's, stops the run with an error.
func (r *Reconciler) Reconcile(ctx context.Context, since *time.Time) (ReconcileResult, error) {
	subs, err := r.Admitter.Store.UnregisteredSubmissions(ctx, since)
	if err != nil {
		return ReconcileResult{}, fmt.Errorf("list unregistered submissions: %w", storeErr(err))
	}
	res := ReconcileResult{Pending: len(subs), MissingKeys: []string{}, Refusals: []RowProblem{}, Errors: []RowProblem{}}
	if r.Start != nil {
		r.Start(len(subs))
	}
	log := r.Admitter.logger()
	err = each(ctx, r.Concurrency, subs, r.one, func(sub ledger.Submission, row rowOutcome) {
		problem := RowProblem{TaskID: sub.TaskID, Key: sub.ManifestKey, Reason: row.reason}
		switch row.outcome {
		case outcomeMissing:
			res.Missing++
			res.MissingKeys = append(res.MissingKeys, sub.ManifestKey)
			log.Warn("Manifest is not where the capture reported writing it", "taskId", sub.TaskID, "key", sub.ManifestKey)
		case outcomeRegistered:
			res.Registered++
		case outcomeRefused:
			res.Refused++
			res.Refusals = append(res.Refusals, problem)
			log.Warn("Manifest is not this submission's capture; refusing it", "taskId", sub.TaskID, "key", sub.ManifestKey, "reason", row.reason)
		case outcomeError:
			res.Errored++
			res.Errors = append(res.Errors, problem)
			log.Warn("Could not reconcile this submission; it stays pending", "taskId", sub.TaskID, "key", sub.ManifestKey, "reason", row.reason)
		default:
			res.Skipped++
		}
	}, r.Progress)
	// The same order whatever the scheduling.
	slices.Sort(res.MissingKeys)
	byTask := func(a, b RowProblem) int { return strings.Compare(a.TaskID, b.TaskID) }
	slices.SortFunc(res.Refusals, byTask)
	slices.SortFunc(res.Errors, byTask)
	return res, err
}

type reconcileOutcome int

const (
	outcomeRegistered reconcileOutcome = iota
	outcomeSkipped
	outcomeMissing
	outcomeRefused
	outcomeError
)

type rowOutcome struct {
	outcome reconcileOutcome
	reason  string // why a row was refused or errored
}

func refused(format string, args ...any) rowOutcome {
	return rowOutcome{outcomeRefused, fmt.Sprintf(format, args...)}
}

func rowError(err error) rowOutcome { return rowOutcome{outcomeError, err.Error()} }

// one handles one submission. The error is for what stops the whole run; a
// problem of this row alone is its outcome.
func (r *Reconciler) one(ctx context.Context, sub ledger.Submission) (rowOutcome, error) {
	// A key recorded before keys were checked is checked before it is read.
	if err := manifest.CheckKey(sub.ManifestKey); err != nil {
		return rowError(fmt.Errorf("manifest key: %w", err)), nil
	}
	data, err := r.Objects.Get(ctx, r.Admitter.Bucket, sub.ManifestKey)
	if errors.Is(err, ledger.ErrNoObject) {
		return rowOutcome{outcome: outcomeMissing}, nil
	}
	if err != nil {
		if errors.Is(err, ledger.ErrObjectRejected) {
			return rowError(fmt.Errorf("read manifest: %w", err)), nil
		}
		return rowOutcome{}, s3Err(fmt.Errorf("read manifest %s: %w", sub.ManifestKey, err))
	}
	m, err := manifest.Decode(data)
	if err != nil {
		return rowError(err), nil
	}
	// The row, written from the level report, decides the organization;
	// the manifest must be the capture the row was written for.
	if !strings.EqualFold(m.TaskID, sub.TaskID) {
		return refused("the manifest is for task %s, not %s", m.TaskID, sub.TaskID), nil
	}
	if sub.CorrelationID != nil && *sub.CorrelationID != "" {
		switch {
		case m.CorrelationID == nil:
			return refused("the manifest has no correlationId; the submission's is %s", *sub.CorrelationID), nil
		case !strings.EqualFold(*m.CorrelationID, *sub.CorrelationID):
			return refused("the manifest's correlationId is %s, not the submission's %s", *m.CorrelationID, *sub.CorrelationID), nil
		}
	}
	if sub.OrgID == "" {
		return rowError(errors.New("the submission names no organization to attribute the archive to")), nil
	}
	_, outcome, err := r.Admitter.Admit(ctx, m, sub.OrgID, sub.SubmittedBy)
	var fe *manifest.FieldError
	switch {
	case errors.As(err, &fe):
		return rowError(err), nil // e.g. a WACZ location the ledger does not read
	case err != nil && rowDataError(err):
		return rowError(fmt.Errorf("register: %w", err)), nil
	case err != nil:
		return rowOutcome{}, storeErr(err)
	case outcome == Registered:
		return rowOutcome{outcome: outcomeRegistered}, nil
	}
	return rowOutcome{outcome: outcomeSkipped}, nil
}

// s3Err marks a read S3 did not answer as reconcile's unreachable
// dependency; the blob client decides what "did not answer" is.
func s3Err(err error) error {
	if errors.Is(err, ledger.ErrUnreachable) {
		return &UnreachableError{Dependency: "S3", Err: err}
	}
	return err
}

// unanswered reports whether err is a network failure: nothing answered
// (for PostgreSQL; S3's errors come classified by the blob client).
func unanswered(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF)
}

// rowDataError reports whether PostgreSQL refused a write because of the
// row's own data (SQLSTATE classes 22 data exception and 23 integrity
// constraint violation), e.g. U+0000 in a manifest's URL.
func rowDataError(err error) bool {
	var se interface{ SQLState() string }
	if !errors.As(err, &se) {
		return false
	}
	c := se.SQLState()
	return strings.HasPrefix(c, "22") || strings.HasPrefix(c, "23")
}

// storeErr marks a database failure PostgreSQL did not answer (a network
// failure, no SQLSTATE) as unreachable.
func storeErr(err error) error {
	var se interface{ SQLState() string }
	if !errors.As(err, &se) && unanswered(err) {
		return &UnreachableError{Dependency: "PostgreSQL", Err: err}
	}
	return err
}
