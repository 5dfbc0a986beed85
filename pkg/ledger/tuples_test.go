package ledger

import "testing"

// TestJobGrantReadsAdmissionTuples: the parser reads back exactly the
// grantees the constructors put in an admission, and nothing from the
// archive's own parent tuple or a share.
func TestJobGrantReadsAdmissionTuples(t *testing.T) {
	t.Parallel()
	task := "3f1c2a4e-9b7d-4c1a-8e2f-5a6b7c8d9e0f"
	alice := "alice"
	p := AdmissionTuples("0b7e1c2d-3a4f-4e5d-8c6b-7a8f9e0d1c2b", task, "acme", &alice)
	type grant struct{ task, kind, principal string }
	var got []grant
	for _, tu := range p.Writes {
		if tk, kind, who, ok := JobGrant(tu); ok {
			got = append(got, grant{tk, kind, who})
		}
	}
	want := []grant{{task, ReasonOrganization, "acme"}, {task, ReasonOwner, "alice"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("JobGrant over %+v = %+v, want %+v", p.Writes, got, want)
	}
	share := ShareTupleKey("0b7e1c2d-3a4f-4e5d-8c6b-7a8f9e0d1c2b", Grantee{Type: GranteeOrganization, ID: "acme"})
	if _, _, _, ok := JobGrant(share); ok {
		t.Errorf("JobGrant read a grant out of the share %+v", share)
	}
	for _, tu := range []Tuple{
		{User: "organization:acme", Relation: "owner", Object: CaptureJobEntity(task)},
		{User: "user:alice", Relation: "parent", Object: CaptureJobEntity(task)},
		{User: "organization:acme", Relation: "parent", Object: "capture_jobs:" + task},
		{User: "organizations:acme", Relation: "parent", Object: CaptureJobEntity(task)},
	} {
		if _, _, _, ok := JobGrant(tu); ok {
			t.Errorf("JobGrant accepted %+v", tu)
		}
	}
}

// FuzzJobGrant: whatever tuple it is given, a grant it reads rebuilds the
// very tuple from the constructors, so parser and constructors agree.
func FuzzJobGrant(f *testing.F) {
	f.Add("organization:acme", "parent", "capture_job:3f1c2a4e-9b7d-4c1a-8e2f-5a6b7c8d9e0f")
	f.Add("user:alice", "owner", "capture_job:x")
	f.Add("user:", "owner", "capture_job:")
	f.Add("organization:acme#member", "viewer", "archive:y")
	f.Fuzz(func(t *testing.T, user, relation, object string) {
		tu := Tuple{User: user, Relation: relation, Object: object}
		task, kind, who, ok := JobGrant(tu)
		if !ok {
			return
		}
		rebuilt := Tuple{Relation: relation, Object: CaptureJobEntity(task)}
		switch kind {
		case ReasonOrganization:
			rebuilt.User = OrganizationEntity(who)
		case ReasonOwner:
			rebuilt.User = UserEntity(who)
		default:
			t.Fatalf("JobGrant(%+v) kind %q", tu, kind)
		}
		if rebuilt.User != user || rebuilt.Object != object {
			t.Errorf("JobGrant(%+v) = (%q, %q, %q), which rebuilds %+v", tu, task, kind, who, rebuilt)
		}
	})
}
