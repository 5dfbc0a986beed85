package ledger

import "time"

// Why a caller may see an archive, as the ledger recorded it when it queued
// the tuple that grants it (see migrations/000008_list_sources.up.sql).
const (
	// ReasonOrganization: the archive's job belongs to one of the caller's
	// organizations (can_view through member from parent).
	ReasonOrganization = "organization"
	// ReasonOwner: the caller asked for the capture (owner from parent).
	ReasonOwner = "owner"
	// ReasonShare: a share to the caller, or to one of the caller's
	// organizations, not yet expired (viewer).
	ReasonShare = "share"
)

// Reason is one recorded source of an archive's visibility to a caller.
type Reason struct {
	Kind string `json:"kind"`
	// Organization names the organization for ReasonOrganization and for a
	// share to an organization.
	Organization string `json:"organization,omitempty"`
	// Until is when a share ends; ShareID is the share.
	Until   *time.Time `json:"until,omitempty"`
	ShareID string     `json:"shareId,omitempty"`
}

// Candidate is an archive row the list asks OpenFGA about, with the
// reasons the ledger recorded for this caller.
type Candidate struct {
	Archive
	Reasons []Reason
}

// Viewer is who the candidates are for: the verified subject and the
// organizations of the caller's identity.
type Viewer struct {
	Subject string
	Orgs    []string
}
