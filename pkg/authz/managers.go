package authz

import (
	"context"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// ShareCheck asks whether subject may share archiveID and see its shares
// (can_share: the job's owner, or an admin of its organization). Like
// SubmitCheck it carries no contextual tuples: membership is self-asserted,
// so it must never be what allows sharing.
func ShareCheck(subject, archiveID string) CheckRequest {
	return CheckRequest{User: User(subject), Relation: "can_share", Object: Archive(archiveID)}
}

// DeleteCheck asks whether subject may delete archiveID (can_delete: the
// job's owner). No contextual tuples either.
func DeleteCheck(subject, archiveID string) CheckRequest {
	return CheckRequest{User: User(subject), Relation: "can_delete", Object: Archive(archiveID)}
}

// Managers answers who may manage an archive: share it, see its shares,
// delete it. Single questions are fully consistent Checks, so a revoked
// admin or owner is refused at once.
type Managers struct{ Client Client }

// CanShare is can_share on the archive.
func (m Managers) CanShare(ctx context.Context, subject, archiveID string) (bool, error) {
	return m.Client.Check(ctx, ShareCheck(subject, archiveID))
}

// CanShareMany answers can_share for many archives, in order (one
// BatchCheck, default consistency: it only decides which shares a list
// shows; changing one asks CanShare again).
func (m Managers) CanShareMany(ctx context.Context, subject string, archiveIDs []string) ([]bool, error) {
	reqs := make([]CheckRequest, len(archiveIDs))
	for i, id := range archiveIDs {
		reqs[i] = ShareCheck(subject, id)
	}
	return m.Client.BatchCheck(ctx, reqs)
}

// AdminOf answers, for each of orgs in order, whether subject is an admin
// of it (the stored admin tuple; membership plays no part). One
// BatchCheck, default consistency: it only narrows which shares a list
// reads, each of which CanShareMany confirms.
func (m Managers) AdminOf(ctx context.Context, subject string, orgs []string) ([]bool, error) {
	reqs := make([]CheckRequest, len(orgs))
	for i, o := range orgs {
		reqs[i] = CheckRequest{User: User(subject), Relation: "admin", Object: Organization(o)}
	}
	return m.Client.BatchCheck(ctx, reqs)
}

// CanDelete is can_delete on the archive.
func (m Managers) CanDelete(ctx context.Context, subject, archiveID string) (bool, error) {
	return m.Client.Check(ctx, DeleteCheck(subject, archiveID))
}

// ReasonCheck is the question that confirms one recorded reason why subject
// sees archiveID of job taskID: membership of that one organization
// (member on the job, the organization as the only contextual membership),
// ownership of the job, or the share's viewer tuple at now (to the user,
// or to the organization's members).
func ReasonCheck(subject string, r ledger.Reason, archiveID, taskID string, now time.Time) CheckRequest {
	switch r.Kind {
	case ledger.ReasonOrganization:
		return CheckRequest{User: User(subject), Relation: "member", Object: CaptureJob(taskID),
			Contextual: MembershipTuples(subject, []string{r.Organization})}
	case ledger.ReasonOwner:
		return CheckRequest{User: User(subject), Relation: "owner", Object: CaptureJob(taskID)}
	}
	// A share is its own tuple: to the organization's members as a whole
	// (asked as the userset, so the caller's own share cannot answer for
	// it), or to the user with no membership at all.
	user := User(subject)
	if r.Organization != "" {
		user = ledger.OrganizationMembers(r.Organization)
	}
	return CheckRequest{User: user, Relation: "viewer", Object: Archive(archiveID),
		Context: map[string]any{"current_time": now.UTC().Format(time.RFC3339)}}
}
