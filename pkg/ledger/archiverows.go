package ledger

import (
	"time"
)

// NewArchive is what admission inserts.
type NewArchive struct {
	TaskID        string
	CorrelationID *string
	Bucket        string
	ObjectKey     string
	SourceURL     string
	Labels        []string
	WaczComplete  *bool
	Signed        *bool
	CapturedAt    time.Time
}

// ArchiveCursor is a (captured_at, id) position in the newest-first list.
type ArchiveCursor struct {
	CapturedAt time.Time
	ID         string
}

// ArchiveRef names one archive and when it was captured.
type ArchiveRef struct {
	ID         string
	CapturedAt time.Time
}

// ArchiveLocation is an archive and where its WACZ is.
type ArchiveLocation struct {
	ID, Bucket, Key string
}

// ArchiveFilter narrows the archive list and search to some archives;
// every set field must hold. The zero value narrows nothing.
type ArchiveFilter struct {
	// CrawlID keeps the archives a crawl's pages captured.
	CrawlID string
	// Host keeps the archives whose source URL has this host (lower case,
	// no port).
	Host string
	// From and To keep the archives captured in [From, To); zero is open.
	From, To time.Time
	// Text keeps the archives whose source URL or title contains it,
	// ignoring case (the list only).
	Text string
}

// IsZero says the filter narrows nothing.
func (f ArchiveFilter) IsZero() bool { return f == ArchiveFilter{} }

// AddOutcome is what AddCapture did with one capture.
type AddOutcome int

const (
	// AddRegistered: the submission (when new), the archives row and its
	// outbox row were written.
	AddRegistered AddOutcome = iota
	// AddKnown: the archive's object, or an archive of the same task, is
	// already in the ledger; nothing was written.
	AddKnown
	// AddNoArchive: the capture has no archive; only the submission was
	// recorded (nothing when it already was).
	AddNoArchive
	// AddOtherOrganization: the task is recorded for another organization;
	// nothing was written.
	AddOtherOrganization
	// AddOtherCorrelation: the task is recorded for this organization with
	// a correlation the manifest does not carry; nothing was written.
	AddOtherCorrelation
)

// AddedCapture is the result of AddCapture.
type AddedCapture struct {
	Outcome AddOutcome
	// ArchiveID is the archive registered (AddRegistered) or found
	// (AddKnown).
	ArchiveID string
	// Recorded is the submission already recorded for the task, nil when
	// there was none. For AddOtherOrganization and AddOtherCorrelation it
	// says whose task it is.
	Recorded *RecordedSubmission
}

// RecordedSubmission is what capture_submissions already says of a task.
type RecordedSubmission struct {
	OrgID         string
	SubmittedBy   *string
	CorrelationID *string
}
