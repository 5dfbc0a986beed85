package manifest

import (
	"errors"
	"strings"
	"time"
)

// ErrNoArchive is the cause of every manifest the ledger does not admit
// because the capture produced no archive: a status other than success, or a
// success without a WACZ. It is a normal outcome (cancelled and failed
// captures upload nothing), not a malformed manifest.
var ErrNoArchive = errors.New("capture produced no archive")

// NoArchiveError is a capture that produced no archive, with what the
// manifest says about why, for logging. It matches ErrNoArchive.
type NoArchiveError struct {
	TaskID    string
	Status    Status
	ErrorType ErrorType // "" when the manifest has no errorDetails.type
	Message   string    // errorDetails.message; "" when absent
}

// Error says which task produced no archive, its status and, when the
// manifest gives one, the error type and message.
func (e *NoArchiveError) Error() string {
	var b strings.Builder
	b.WriteString(ErrNoArchive.Error())
	b.WriteString(": task ")
	b.WriteString(e.TaskID)
	b.WriteString(" ended ")
	b.WriteString(string(e.Status))
	if e.Status == StatusSuccess {
		b.WriteString(" without a wacz artifact")
	}
	if e.ErrorType != "" || e.Message != "" {
		b.WriteString(" (")
		b.WriteString(string(e.ErrorType))
		if e.ErrorType != "" && e.Message != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Message)
		b.WriteString(")")
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNoArchive) true.
func (e *NoArchiveError) Is(target error) bool { return target == ErrNoArchive }

// ArchiveRow is what the ledger records for one admitted archive.
type ArchiveRow struct {
	TaskID        string  // lower-case UUID
	CorrelationID *string // nil when the manifest has none
	Bucket        string  // always the configured bucket
	ObjectKey     string  // the WACZ key, verbatim
	SourceURL     string  // the requested URL
	Labels        []string
	WaczComplete  *bool // completeness.complete; nil when absent
	Signed        *bool // signature.signed; nil when absent
	CapturedAt    time.Time
}

// Archive decides whether the ledger admits this manifest's capture. Only a
// success with a WACZ artifact is admitted; any other manifest gives a
// *NoArchiveError (errors.Is ErrNoArchive). The WACZ must be an s3://
// location inside configuredBucket: otherwise the error is a *FieldError on
// artifacts.wacz wrapping ErrNotS3Location or a *BucketMismatchError, and
// names the location. (The original took the WACZ bucket from the manifest
// unchecked; we hold it to the same rule as the manifest location.)
func (m Manifest) Archive(configuredBucket string) (ArchiveRow, error) {
	if m.Status != StatusSuccess || m.Artifacts.WACZ == "" {
		e := &NoArchiveError{TaskID: m.TaskID, Status: m.Status}
		if m.Error != nil {
			e.ErrorType, e.Message = m.Error.Type, m.Error.Message
		}
		return ArchiveRow{}, e
	}
	key, err := KeyInBucket(m.Artifacts.WACZ, configuredBucket)
	if err != nil {
		return ArchiveRow{}, fieldErr("artifacts.wacz", err)
	}
	labels := make([]string, len(m.Labels))
	copy(labels, m.Labels)
	return ArchiveRow{
		TaskID:        m.TaskID,
		CorrelationID: clone(m.CorrelationID),
		Bucket:        configuredBucket,
		ObjectKey:     key,
		SourceURL:     m.URL,
		Labels:        labels,
		WaczComplete:  clone(m.WaczComplete),
		Signed:        clone(m.Signed),
		CapturedAt:    m.Timestamp,
	}, nil
}

// clone copies *p so that a row shares nothing with the manifest it came from.
func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
