package authz

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// GrantRelations are the organization relations `ledgerctl fga grant` and
// `revoke` write. member is deliberately absent: membership comes from the
// identity token and is never stored.
var GrantRelations = []string{"submitter", "admin"}

// ErrMemberNotStored refuses to store membership.
var ErrMemberNotStored = errors.New("relation must be one of: submitter, admin (got member): membership is never stored — it comes from the identity token and is sent as a contextual tuple on every request")

// ValidateGrant checks the arguments of grant/revoke before anything is
// written.
func ValidateGrant(relation, subject, org string) error {
	switch relation {
	case "submitter", "admin":
	case "member":
		return ErrMemberNotStored
	default:
		return fmt.Errorf("relation must be one of: %s (got %s)", strings.Join(GrantRelations, ", "), relation)
	}
	for _, v := range []struct{ what, val string }{{"user", subject}, {"organization", org}} {
		if v.val == "" || strings.ContainsFunc(v.val, func(r rune) bool { return unicode.IsSpace(r) || r == '#' }) {
			return fmt.Errorf("%s %q must be a non-empty id without spaces or #", v.what, v.val)
		}
		if strings.HasPrefix(v.val, v.what+":") {
			return fmt.Errorf("%s %q: give the bare id (%s), the %s: prefix is added", v.what, v.val, strings.TrimPrefix(v.val, v.what+":"), v.what)
		}
	}
	return nil
}

// Done says what grant/revoke found and did.
type Done string

const (
	Wrote          Done = "書いた"    // the tuple was written
	AlreadyPresent Done = "もう在った"  // the tuple was already there
	Deleted        Done = "消した"    // the tuple was deleted
	AlreadyAbsent  Done = "もう無かった" // the tuple was already gone
)

// Notes appended inside the parentheses of the sentence.
const (
	NoteOtherRelation = "ほかの関係で許されています"
	NoteNotEffective  = "書いたのに Check が通りません —— CAPTURE_LEDGER_FGA_MODEL_ID が古い model を指していないか"
)

// RoleChange is the outcome of a grant or revoke: what was done, and the
// answer to the API's own question (MaySubmit) asked again afterwards.
type RoleChange struct {
	Action    string `json:"action"` // grant or revoke
	Subject   string `json:"subject"`
	Org       string `json:"organization"`
	Relation  string `json:"relation"`
	Tuple     string `json:"tuple"`
	Done      Done   `json:"done"`
	DoneCode  string `json:"doneCode"` // wrote, already-present, deleted, already-absent
	CanSubmit bool   `json:"canSubmit"`
	Note      string `json:"note,omitempty"`
}

// Effective is false when a grant did not make the subject able to submit.
func (r RoleChange) Effective() bool { return r.Action != "grant" || r.CanSubmit }

// Sentence is the one line grant/revoke print, e.g.
// "alice は acme のクロールを始められます (書いた: user:alice submitter organization:acme)".
func (r RoleChange) Sentence() string {
	verb := "始められます"
	if !r.CanSubmit {
		verb = "始められません"
	}
	note := ""
	if r.Note != "" {
		note = "。" + r.Note
	}
	return fmt.Sprintf("%s は %s のクロールを%s (%s: %s%s)", r.Subject, r.Org, verb, r.Done, r.Tuple, note)
}

// Grant stores subject's relation (submitter or admin) on org, directly
// (not through the outbox), then asks can_submit exactly as the API does.
func Grant(ctx context.Context, c Client, relation, subject, org string) (RoleChange, error) {
	return changeRole(ctx, c, "grant", relation, subject, org)
}

// Revoke deletes subject's relation on org, then asks can_submit again.
func Revoke(ctx context.Context, c Client, relation, subject, org string) (RoleChange, error) {
	return changeRole(ctx, c, "revoke", relation, subject, org)
}

func changeRole(ctx context.Context, c Client, action, relation, subject, org string) (RoleChange, error) {
	if err := ValidateGrant(relation, subject, org); err != nil {
		return RoleChange{}, err
	}
	t := Tuple{User: User(subject), Relation: relation, Object: Organization(org)}
	r := RoleChange{Action: action, Subject: subject, Org: org, Relation: relation, Tuple: t.String()}
	var err error
	if action == "grant" {
		r.Done, r.DoneCode = Wrote, "wrote"
		err = c.Write(ctx, []Tuple{t}, nil)
		if errors.Is(err, ErrAlreadyInState) {
			r.Done, r.DoneCode, err = AlreadyPresent, "already-present", nil
		}
	} else {
		r.Done, r.DoneCode = Deleted, "deleted"
		err = c.Write(ctx, nil, []Tuple{t})
		if errors.Is(err, ErrAlreadyInState) {
			r.Done, r.DoneCode, err = AlreadyAbsent, "already-absent", nil
		}
	}
	if err != nil {
		return RoleChange{}, err
	}
	// Ask the API's question, not one inferred from what was written.
	r.CanSubmit, err = MaySubmit(ctx, c, subject, []string{org})
	if err != nil {
		return RoleChange{}, err
	}
	switch {
	case action == "revoke" && r.CanSubmit:
		r.Note = NoteOtherRelation
	case action == "grant" && !r.CanSubmit:
		r.Note = NoteNotEffective
	}
	return r, nil
}
