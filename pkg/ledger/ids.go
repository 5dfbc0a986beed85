package ledger

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Limits of the identity strings OpenFGA can hold. A subject becomes the
// user "user:<subject>" and an organization the object
// "organization:<organization>" (and the userset
// "organization:<organization>#member") of every question the API asks.
const (
	// MaxSubjectBytes bounds a subject: OIDC's limit on sub (255 ASCII
	// characters), well inside OpenFGA's 512-byte user field.
	MaxSubjectBytes = 255
	// MaxOrganizationBytes bounds an organization: OpenFGA's object field
	// holds at most 256 characters, "organization:" takes 13 of them.
	MaxOrganizationBytes = 256 - len("organization:")
	// MaxOrganizations bounds how many organizations one identity claims:
	// each is a contextual tuple, and OpenFGA takes at most 100 of them per
	// question.
	MaxOrganizations = 100
)

// ErrInvalidID is matched (errors.Is) by every error of [CheckSubject] and
// [CheckOrganization] (and of identity.CheckIdentity).
var ErrInvalidID = errors.New("invalid identity")

// IDError says why an identity string is refused. Its message quotes the
// value, so it stays out of logs, and the API answers 401 without it; only
// the dev issuer's POST /token hands it back to whoever sent the value.
type IDError struct {
	What   string // "subject" or "organization"
	Value  string
	Reason string
}

func (e *IDError) Error() string { return fmt.Sprintf("%s %q %s", e.What, e.Value, e.Reason) }

// Is makes every IDError match ErrInvalidID.
func (e *IDError) Is(target error) bool { return target == ErrInvalidID }

// CheckSubject reports whether s can be a subject: the id of OpenFGA's
// user:<id> (see [checkID]), at most MaxSubjectBytes bytes.
func CheckSubject(s string) error { return checkID("subject", s, MaxSubjectBytes) }

// CheckOrganization reports whether s can be an organization: the id of
// OpenFGA's organization:<id> (see [checkID]), at most MaxOrganizationBytes
// bytes.
func CheckOrganization(s string) error { return checkID("organization", s, MaxOrganizationBytes) }

// checkID applies OpenFGA's rules for the id of an object or user
// (github.com/openfga/openfga pkg/tuple IsValidObject / IsValidUserID and
// the API's field patterns), a little stricter where they are loose:
//
//   - valid UTF-8, not empty, at most max bytes;
//   - no ':' (it separates type and id) and no '#' (it introduces a
//     relation);
//   - no whitespace of any kind (OpenFGA refuses ASCII space and \s; we
//     refuse every Unicode space) and no control character;
//   - not "*", which OpenFGA reads as the wildcard "every user".
func checkID(what, s string, max int) error {
	bad := func(reason string) error { return &IDError{What: what, Value: s, Reason: reason} }
	switch {
	case s == "":
		return bad("is empty")
	case !utf8.ValidString(s):
		return bad("is not valid UTF-8")
	case len(s) > max:
		return bad(fmt.Sprintf("is longer than %d bytes", max))
	case s == "*":
		return bad(`is "*", the wildcard`)
	}
	for _, r := range s {
		switch {
		case r == ':' || r == '#':
			return bad(fmt.Sprintf("contains %q", r))
		case unicode.IsSpace(r):
			return bad("contains whitespace")
		case unicode.IsControl(r):
			return bad("contains a control character")
		}
	}
	return nil
}
