package ledger

import "strings"

// The tuple grammar of the OpenFGA model (fga/): an entity is "<type>:<id>",
// a userset "<type>:<id>#<relation>". Every tuple the ledger queues or asks
// about is spelled with these constructors, and read back with the parsers
// below, so the prefixes are written once.
const (
	TypeUser         = "user"
	TypeOrganization = "organization"
	TypeArchive      = "archive"
	TypeCaptureJob   = "capture_job"
)

// UserEntity is the entity of a subject: user:<subject>.
func UserEntity(subject string) string { return TypeUser + ":" + subject }

// OrganizationEntity is the entity of an organization: organization:<id>.
func OrganizationEntity(id string) string { return TypeOrganization + ":" + id }

// OrganizationMembers is the userset of an organization's members:
// organization:<id>#member.
func OrganizationMembers(id string) string { return OrganizationEntity(id) + "#member" }

// ArchiveEntity is the entity of an archive: archive:<id>.
func ArchiveEntity(id string) string { return TypeArchive + ":" + id }

// CaptureJobEntity is the entity of a capture job: capture_job:<task id>.
func CaptureJobEntity(taskID string) string { return TypeCaptureJob + ":" + taskID }

// EntityID is the id of s when s is an entity of type typ ("<typ>:<id>"),
// and ok=false otherwise. The id is what follows the prefix, as it is.
func EntityID(typ, s string) (id string, ok bool) {
	return strings.CutPrefix(s, typ+":")
}

// JobGrant reads whom an admission tuple on a capture job grants the job
// (AdmissionTuples): "organization:<o> parent capture_job:<task>" gives
// (task, ReasonOrganization, o), "user:<u> owner capture_job:<task>" gives
// (task, ReasonOwner, u). Any other tuple grants nothing on a job: ok=false.
func JobGrant(t Tuple) (task, kind, principal string, ok bool) {
	task, ok = EntityID(TypeCaptureJob, t.Object)
	if !ok {
		return "", "", "", false
	}
	switch t.Relation {
	case "parent":
		if o, ok := EntityID(TypeOrganization, t.User); ok {
			return task, ReasonOrganization, o, true
		}
	case "owner":
		if u, ok := EntityID(TypeUser, t.User); ok {
			return task, ReasonOwner, u, true
		}
	}
	return "", "", "", false
}
