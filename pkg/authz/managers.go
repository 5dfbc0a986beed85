package authz

import "context"

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

// CanDelete is can_delete on the archive.
func (m Managers) CanDelete(ctx context.Context, subject, archiveID string) (bool, error) {
	return m.Client.Check(ctx, DeleteCheck(subject, archiveID))
}
