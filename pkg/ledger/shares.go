package ledger

import (
	"fmt"
	"time"
)

// Shares and deletions: what the share and delete use-cases read and write
// through their store.

// GranteeType says whom a share is to.
type GranteeType string

// A share goes to one user, or to every member of one organization.
const (
	GranteeUser         GranteeType = "user"
	GranteeOrganization GranteeType = "organization"
)

// Grantee is whom a share is to.
type Grantee struct {
	Type GranteeType
	ID   string
}

// FGAUser is the grantee as the user of an OpenFGA tuple: user:<id>, or
// organization:<id>#member.
func (g Grantee) FGAUser() string {
	if g.Type == GranteeOrganization {
		return OrganizationMembers(g.ID)
	}
	return UserEntity(g.ID)
}

func (g Grantee) String() string { return string(g.Type) + " " + g.ID }

// ShareCondition is the model's condition every share tuple carries.
const ShareCondition = "non_expired_grant"

// ShareTuple is the viewer tuple of a share: grantee viewer archive, with the
// non_expired_grant condition storing when it was granted (RFC 3339, UTC)
// and for how long (whole seconds), which OpenFGA compares with the
// current_time of every check.
func ShareTuple(archiveID string, g Grantee, grantedAt time.Time, d time.Duration) Tuple {
	t := ShareTupleKey(archiveID, g)
	t.Condition = &Condition{Name: ShareCondition, Context: map[string]any{
		"grant_time":     grantedAt.UTC().Format(time.RFC3339),
		"grant_duration": fmt.Sprintf("%ds", int64(d/time.Second)),
	}}
	return t
}

// ShareTupleKey is a share's tuple without its condition: what a delete
// names (OpenFGA keys a tuple by user, relation and object).
func ShareTupleKey(archiveID string, g Grantee) Tuple {
	return Tuple{User: g.FGAUser(), Relation: "viewer", Object: ArchiveEntity(archiveID)}
}

// NewShare is a share to record.
type NewShare struct {
	ArchiveID string
	Grantee   Grantee
	GrantedBy string
	// GrantedAt is the server's clock at the grant, whole seconds.
	GrantedAt time.Time
	Duration  time.Duration
}

// Ways a share ends before its expiry (shares.revoke_reason).
const (
	EndRevoked        = "revoked"
	EndReplaced       = "replaced"
	EndArchiveDeleted = "archive-deleted"
)

// ShareRow is one shares row.
type ShareRow struct {
	ID        string
	ArchiveID string
	Grantee   Grantee
	GrantedBy string
	GrantedAt time.Time
	Duration  time.Duration
	ExpiresAt time.Time
	// RevokedAt, RevokedBy and RevokeReason are set once the ledger queued
	// the delete of the share's tuple (revoked, replaced, archive deleted).
	RevokedAt    *time.Time
	RevokedBy    *string
	RevokeReason *string
	// ReplacedBy is the share that replaced this one (same grantee).
	ReplacedBy *string
}

// ShareCursor is a (granted_at, id) position in the newest-first list of
// every share.
type ShareCursor struct {
	GrantedAt time.Time
	ID        string
}

// DeletingArchive is what the ledger knows of an archive being deleted,
// read in the deleting transaction: the row, the submission of its task
// (nil when none was recorded), and the shares whose tuples are still in
// OpenFGA (ended by this deletion).
type DeletingArchive struct {
	ID, TaskID, Bucket, ObjectKey, SourceURL string
	CapturedAt                               time.Time
	Submission                               *DeletingSubmission
	Shares                                   []ShareRow
}

// DeletingSubmission is the capture_submissions row of a deleted archive's
// task.
type DeletingSubmission struct {
	OrgID       string
	SubmittedBy *string
	ManifestKey *string
}

// DeletePlan is what deleting an archive removes: the objects of the bucket
// and the tuples of OpenFGA.
type DeletePlan struct {
	ObjectKeys []string
	Tuples     []Tuple
}

// Tombstone is an archive_tombstones row: a deleted archive.
type Tombstone struct {
	ArchiveID, TaskID, Bucket, ObjectKey, SourceURL string
	CapturedAt                                      time.Time
	DeletedBy                                       string
	DeletedAt                                       time.Time
	// ObjectKeys are every object the deletion removes from Bucket.
	ObjectKeys []string
	// ObjectsDeletedAt is nil until every object is gone.
	ObjectsDeletedAt *time.Time
	Attempts         int
	LastError        *string
}

// AddTombstoned: the archive's object key or task belongs to a deleted
// archive (a tombstone); nothing was written.
const AddTombstoned AddOutcome = AddOtherCorrelation + 1
