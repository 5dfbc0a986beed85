package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/manifest"
)

// AddStore is what Add needs from the database: recording a submission and
// admitting its archive in one transaction.
type AddStore interface {
	AddCapture(ctx context.Context, sub ledger.NewSubmission, a *ledger.NewArchive, tuples func(archiveID string, submittedBy *string) ledger.OutboxPayload) (ledger.AddedCapture, error)
}

// BucketObjects reads and lists objects of the configured bucket.
type BucketObjects interface {
	Objects
	List(ctx context.Context, bucket, prefix string) ([]string, error)
}

// ManifestSuffix ends every BrowserHive result manifest's key.
const ManifestSuffix = ".result.json"

// AddOutcome is what Add did with one manifest.
type AddOutcome string

// Every manifest ends in exactly one of these.
const (
	// AddRegistered: the submission was recorded and the archive admitted
	// (archives row and outbox tuples, one transaction).
	AddRegistered AddOutcome = "registered"
	// AddKnown: the archive (its object, or an archive of its task) is
	// already in the ledger; nothing was written.
	AddKnown AddOutcome = "known"
	// AddNoArchive: the capture produced no archive (failed, cancelled, no
	// WACZ); the submission is recorded, nothing else.
	AddNoArchive AddOutcome = "no-archive"
	// AddRefused: the task is recorded for another organization (or with
	// another correlation), or its archive was deleted (a tombstone);
	// nothing was written.
	AddRefused AddOutcome = "refused"
	// AddMissing: no object at the key.
	AddMissing AddOutcome = "missing"
	// AddError: a key the ledger does not read, a key S3 refuses, a
	// manifest that is not a report, a WACZ location the ledger does not
	// read, a row PostgreSQL refuses.
	AddError AddOutcome = "error"
)

// AddedManifest is the outcome of one manifest. Every field is always
// present in JSON ("" when it does not apply).
type AddedManifest struct {
	Key       string     `json:"key"`
	Outcome   AddOutcome `json:"outcome"`
	TaskID    string     `json:"taskId"`
	ArchiveID string     `json:"archiveId"`
	// Reason says why a manifest was refused, in error or without an
	// archive.
	Reason string `json:"reason"`
}

// AddRequest is what to add, and for whom.
type AddRequest struct {
	// Keys are manifest keys as given: bare keys or s3://<bucket>/<key>.
	Keys []string
	// Prefix, when not "", adds every key ending in ManifestSuffix under
	// it (a bare prefix or s3://<bucket>/<prefix>).
	Prefix string
	// Org is the organization the archives are attributed to.
	Org string
	// SubmittedBy is the person who asked for the captures (the owner).
	SubmittedBy string
}

// AddResult counts what Add did; Results lists every manifest, by key.
type AddResult struct {
	Org         string          `json:"org"`
	SubmittedBy string          `json:"submittedBy"`
	Prefix      string          `json:"prefix"`
	Manifests   int             `json:"manifests"`
	Registered  int             `json:"registered"`
	Known       int             `json:"known"`
	NoArchive   int             `json:"noArchive"`
	Refused     int             `json:"refused"`
	Missing     int             `json:"missing"`
	Errored     int             `json:"errors"`
	Results     []AddedManifest `json:"results"`
}

// Incomplete reports whether some manifests were left undone (missing,
// refused or in error): the command exits 3.
func (r AddResult) Incomplete() bool { return r.Missing+r.Refused+r.Errored > 0 }

// Adder registers archives already in the bucket: it reads their manifests
// and records each capture as submitted by a person for an organization.
type Adder struct {
	Store   AddStore
	Objects BucketObjects
	// Bucket is the configured bucket, the only one read.
	Bucket string
	Log    *slog.Logger
	// Concurrency bounds the manifests handled at once (default 8).
	Concurrency int
	// Start, when set, is told how many manifests there are.
	Start func(total int)
	// Progress, when set, is called once per manifest handled.
	Progress func()
}

// ParsePrefix reads a --prefix: a bare prefix or s3://<bucket>/<prefix>
// inside the configured bucket, not empty, and with no empty, "." or ".."
// segment (a trailing "/" is fine).
func ParsePrefix(prefix, bucket string) (string, error) {
	p := prefix
	if rest, ok := strings.CutPrefix(p, "s3://"); ok {
		b, key, _ := strings.Cut(rest, "/")
		if b != bucket {
			return "", fmt.Errorf("%s is not in the bucket the ledger reads (%s)", prefix, bucket)
		}
		p = key
	}
	if p == "" {
		return "", errors.New("empty: give the prefix the manifests are under")
	}
	if err := manifest.CheckKey(strings.TrimSuffix(p, "/")); err != nil {
		var ke *manifest.KeyError
		if errors.As(err, &ke) {
			return "", fmt.Errorf("not a prefix the ledger reads (%s): %s", ke.Reason, prefix)
		}
		return "", err
	}
	return p, nil
}

// manifestKey reads one key as given, with the rules of every location the
// ledger is told about (manifest.KeyInBucket, manifest.CheckKey).
func manifestKey(given, bucket string) (string, error) {
	if strings.HasPrefix(given, "s3://") {
		return manifest.KeyInBucket(given, bucket)
	}
	if err := manifest.CheckKey(given); err != nil {
		return "", err
	}
	return given, nil
}

// Add registers the manifests of req: each is read, its submission recorded
// (task, organization, submitter, manifest key, correlation) and its archive
// admitted with the same admission as level reports and reconcile, in one
// transaction. A task recorded for another organization, or an archive
// already in the ledger, is never taken over: it is reported and nothing of
// it is written, so running the same add twice registers nothing new. A
// manifest that cannot be handled is that manifest's outcome and the others
// go on; only a dependency that does not answer (errors.Is
// ledger.ErrUnreachable), or a failure that is not one manifest's, stops the
// run with an error.
func (a *Adder) Add(ctx context.Context, req AddRequest) (AddResult, error) {
	res := AddResult{Org: req.Org, SubmittedBy: req.SubmittedBy, Prefix: req.Prefix, Results: []AddedManifest{}}
	if req.Org == "" || req.SubmittedBy == "" {
		return res, errors.New("add: an organization and a submitter are required")
	}
	given := slices.Clone(req.Keys)
	if req.Prefix != "" {
		prefix, err := ParsePrefix(req.Prefix, a.Bucket)
		if err != nil {
			return res, fmt.Errorf("--prefix: %w", err)
		}
		keys, err := a.Objects.List(ctx, a.Bucket, prefix)
		if err != nil {
			return res, s3Err(fmt.Errorf("list manifests: %w", err))
		}
		for _, k := range keys {
			if strings.HasSuffix(k, ManifestSuffix) {
				given = append(given, k)
			}
		}
	}
	// Each key once, whichever way it was spelled.
	seen := map[string]bool{}
	var todo []string
	for _, g := range given {
		id := g
		if k, err := manifestKey(g, a.Bucket); err == nil {
			id = k
		}
		if !seen[id] {
			seen[id] = true
			todo = append(todo, g)
		}
	}
	res.Manifests = len(todo)
	if a.Start != nil {
		a.Start(len(todo))
	}
	err := each(ctx, a.Concurrency, todo, func(ctx context.Context, key string) (AddedManifest, error) {
		return a.one(ctx, key, req)
	}, func(_ string, one AddedManifest) {
		res.Results = append(res.Results, one)
		switch one.Outcome {
		case AddRegistered:
			res.Registered++
		case AddKnown:
			res.Known++
		case AddNoArchive:
			res.NoArchive++
		case AddRefused:
			res.Refused++
		case AddMissing:
			res.Missing++
		default:
			res.Errored++
		}
	}, a.Progress)
	slices.SortFunc(res.Results, func(x, y AddedManifest) int { return strings.Compare(x.Key, y.Key) })
	return res, err
}

// one handles one manifest. The error is for what stops the whole run; a
// problem of this manifest alone is its outcome.
func (a *Adder) one(ctx context.Context, given string, req AddRequest) (AddedManifest, error) {
	out := AddedManifest{Key: given}
	fail := func(outcome AddOutcome, err error) (AddedManifest, error) {
		out.Outcome = outcome
		if err != nil {
			out.Reason = err.Error()
		}
		return out, nil
	}
	key, err := manifestKey(given, a.Bucket)
	if err != nil {
		return fail(AddError, fmt.Errorf("manifest key: %w", err))
	}
	out.Key = key
	log := a.logger().With("key", key)
	data, err := a.Objects.Get(ctx, a.Bucket, key)
	switch {
	case errors.Is(err, ledger.ErrNoObject):
		log.Warn("No manifest at this key")
		return fail(AddMissing, errors.New("no such object"))
	case errors.Is(err, ledger.ErrObjectRejected):
		return fail(AddError, fmt.Errorf("read manifest: %w", err))
	case err != nil:
		return out, s3Err(fmt.Errorf("read manifest %s: %w", key, err))
	}
	m, err := manifest.Decode(data)
	if err != nil {
		return fail(AddError, err)
	}
	out.TaskID = m.TaskID
	var row *ledger.NewArchive
	var noArchive error
	switch r, err := m.Archive(a.Bucket); {
	case errors.Is(err, manifest.ErrNoArchive):
		noArchive = err
	case err != nil:
		return fail(AddError, err) // e.g. a WACZ location the ledger does not read
	default:
		row = &ledger.NewArchive{
			TaskID: r.TaskID, CorrelationID: r.CorrelationID, Bucket: r.Bucket, ObjectKey: r.ObjectKey,
			SourceURL: r.SourceURL, Labels: r.Labels, WaczComplete: r.WaczComplete, Signed: r.Signed, CapturedAt: r.CapturedAt,
		}
	}
	by := req.SubmittedBy
	added, err := a.Store.AddCapture(ctx, ledger.NewSubmission{
		TaskID: m.TaskID, CorrelationID: m.CorrelationID, OrgID: req.Org, SubmittedBy: &by, ManifestKey: &key,
	}, row, func(archiveID string, submittedBy *string) ledger.OutboxPayload {
		return ledger.AdmissionTuples(archiveID, m.TaskID, req.Org, submittedBy)
	})
	switch {
	case err != nil && rowDataError(err):
		return fail(AddError, fmt.Errorf("register: %w", err))
	case err != nil:
		return out, storeErr(err)
	}
	out.ArchiveID = added.ArchiveID
	switch added.Outcome {
	case ledger.AddRegistered:
		log.Info("archive registered", "archiveId", added.ArchiveID, "taskId", m.TaskID)
		out.Outcome = AddRegistered
	case ledger.AddKnown:
		out.Outcome = AddKnown
	case ledger.AddNoArchive:
		return fail(AddNoArchive, noArchive)
	case ledger.AddOtherOrganization:
		log.Warn("The task is recorded for another organization; refusing it", "taskId", m.TaskID)
		return fail(AddRefused, fmt.Errorf("task %s is recorded for another organization", m.TaskID))
	case ledger.AddTombstoned:
		log.Warn("The archive was deleted from the ledger; refusing to register it again", "archiveId", added.ArchiveID)
		return fail(AddRefused, fmt.Errorf("archive %s (this object key or task) was deleted from the ledger; it is not registered again", added.ArchiveID))
	case ledger.AddOtherCorrelation:
		rec := ""
		if added.Recorded != nil && added.Recorded.CorrelationID != nil {
			rec = *added.Recorded.CorrelationID
		}
		if m.CorrelationID == nil {
			return fail(AddRefused, fmt.Errorf("the manifest has no correlationId; the recorded submission's is %s", rec))
		}
		return fail(AddRefused, fmt.Errorf("the manifest's correlationId is %s, not the recorded submission's %s", *m.CorrelationID, rec))
	default:
		return out, fmt.Errorf("add %s: unexpected outcome %d", key, added.Outcome)
	}
	return out, nil
}

func (a *Adder) logger() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}
