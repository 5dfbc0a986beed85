package authz

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
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
	// OpenFGA's id rules (a NUL or bytes that are not UTF-8 would reach
	// OpenFGA, which answers them with an internal error).
	for _, v := range []struct {
		what, val string
		check     func(string) error
	}{{"user", subject, ledger.CheckSubject}, {"organization", org, ledger.CheckOrganization}} {
		var bad *ledger.IDError
		if err := v.check(v.val); errors.As(err, &bad) {
			return fmt.Errorf("%s %q %s", v.what, v.val, bad.Reason)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// Done says, in stable English for machines, what grant/revoke did to the
// tuple: written, removed, or unchanged (it was already so).
type Done string

// The three outcomes for the tuple.
const (
	Written   Done = "written"   // grant wrote the tuple
	Removed   Done = "removed"   // revoke deleted the tuple
	Unchanged Done = "unchanged" // the tuple was already present (grant) or absent (revoke)
)

// The DoneCode values: what was found and done, one word per case.
const (
	CodeWrote          = "wrote"
	CodeAlreadyPresent = "already-present"
	CodeDeleted        = "deleted"
	CodeAlreadyAbsent  = "already-absent"
)

// Note codes: what the sentence adds inside its parentheses.
const (
	// NoteOtherRelation: a revoke left the subject able to submit through
	// another relation (admin after submitter was deleted, or the reverse).
	NoteOtherRelation = "other-relation"
	// NoteNotEffective: a grant was written but can_submit still says no.
	NoteNotEffective = "not-effective"
)

// RoleChange is the outcome of a grant or revoke: what was done, and the
// answer to the API's own question (MaySubmit) asked again afterwards. Its
// JSON is stable English whatever the reader's language; Sentence says it
// for people.
type RoleChange struct {
	Action    string `json:"action"` // grant or revoke
	Subject   string `json:"subject"`
	Org       string `json:"organization"`
	Relation  string `json:"relation"`
	Tuple     string `json:"tuple"`
	Done      Done   `json:"done"`     // written, removed, unchanged
	DoneCode  string `json:"doneCode"` // wrote, already-present, deleted, already-absent
	CanSubmit bool   `json:"canSubmit"`
	Note      string `json:"note,omitempty"` // other-relation, not-effective
}

// Effective is false when a grant did not make the subject able to submit.
func (r RoleChange) Effective() bool { return r.Action != "grant" || r.CanSubmit }

// sentenceWords are the parts of the sentence in one language.
type sentenceWords struct {
	may, mayStill, mayNot string            // "%[1]s … %[2]s": subject, organization; mayStill after a revoke
	done                  map[string]string // by DoneCode
	notes                 map[string]string // by note code
	noteSep               string
}

var words = map[i18n.Lang]sentenceWords{
	i18n.English: {
		may:      "%s may now start crawls for %s",
		mayStill: "%s may still start crawls for %s",
		mayNot:   "%s may not start crawls for %s",
		done: map[string]string{
			CodeWrote: "wrote", CodeAlreadyPresent: "already there",
			CodeDeleted: "deleted", CodeAlreadyAbsent: "already gone",
		},
		notes: map[string]string{
			NoteOtherRelation: "still allowed through another relation",
			NoteNotEffective:  "written, yet Check does not pass — is CAPTURE_LEDGER_FGA_MODEL_ID pointing at an old model?",
		},
		noteSep: "; ",
	},
	// The Japanese sentences, word for word what pkg/cli's tests expect.
	i18n.Japanese: {
		may:      "%s は %s のクロールを始められます",
		mayStill: "%s は %s のクロールを始められます",
		mayNot:   "%s は %s のクロールを始められません",
		done: map[string]string{
			CodeWrote: "書いた", CodeAlreadyPresent: "もう在った",
			CodeDeleted: "消した", CodeAlreadyAbsent: "もう無かった",
		},
		notes: map[string]string{
			NoteOtherRelation: "ほかの関係で許されています",
			NoteNotEffective:  "書いたのに Check が通りません —— CAPTURE_LEDGER_FGA_MODEL_ID が古い model を指していないか",
		},
		noteSep: "。",
	},
}

// Sentence is the one line grant/revoke print for people, in lang (English
// for any language it does not speak), e.g.
//
//	alice may now start crawls for acme (wrote: user:alice submitter organization:acme)
//	alice は acme のクロールを始められます (書いた: user:alice submitter organization:acme)
func (r RoleChange) Sentence(lang i18n.Lang) string {
	w, ok := words[lang]
	if !ok {
		w = words[i18n.English]
	}
	head := w.mayNot
	switch {
	case r.CanSubmit && r.Action == "revoke":
		head = w.mayStill
	case r.CanSubmit:
		head = w.may
	}
	done := w.done[r.DoneCode]
	if done == "" {
		done = r.DoneCode
	}
	note := ""
	if r.Note != "" {
		n := w.notes[r.Note]
		if n == "" {
			n = r.Note
		}
		note = w.noteSep + n
	}
	return fmt.Sprintf(head, r.Subject, r.Org) + fmt.Sprintf(" (%s: %s%s)", done, r.Tuple, note)
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
		r.Done, r.DoneCode = Written, CodeWrote
		err = c.Write(ctx, []Tuple{t}, nil)
		if errors.Is(err, ErrAlreadyInState) {
			r.Done, r.DoneCode, err = Unchanged, CodeAlreadyPresent, nil
		}
	} else {
		r.Done, r.DoneCode = Removed, CodeDeleted
		err = c.Write(ctx, nil, []Tuple{t})
		if errors.Is(err, ErrAlreadyInState) {
			r.Done, r.DoneCode, err = Unchanged, CodeAlreadyAbsent, nil
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
