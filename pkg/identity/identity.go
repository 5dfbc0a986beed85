package identity

import (
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Header names of the dev header resolver.
const (
	SubjectHeader       = "X-Capture-ledger-Subject"
	OrganizationsHeader = "X-Capture-ledger-Organizations"
)

// OrganizationsClaim is the JWT claim holding the caller's organizations.
const OrganizationsClaim = "organizations"

// Identity is a verified caller.
//
// Organizations is never nil for a resolved identity (it marshals as []).
// Its order is kept: the first organization is the one a crawl is
// attributed to.
type Identity struct {
	Subject       string
	Organizations []string
	// Expires is when the credential that said so stops being accepted
	// (a JWT's exp); zero for one without an expiry (the dev identity).
	// What is handed out on its strength (a replay session) ends with it.
	Expires time.Time
}

// Resolver turns a request into an Identity. ok is false when the request
// carries no acceptable identity; the reason is never returned, so it cannot
// reach a client. Implementations are safe for concurrent use.
type Resolver interface {
	Resolve(r *http.Request) (id Identity, ok bool)
}

// Deny resolves nobody: every request is unauthenticated.
type Deny struct{}

// Resolve always reports no identity.
func (Deny) Resolve(*http.Request) (Identity, bool) { return Identity{}, false }

// Headers trusts the caller's own X-Capture-ledger-Subject and
// X-Capture-ledger-Organizations headers. Anyone who can reach the port can
// act as any user: enable it for local development only.
type Headers struct{}

// Resolve reads the dev headers. The subject is trimmed and must be
// non-empty; the organizations header is split by [ParseOrganizations].
//
// A value that is not valid UTF-8 or holds control characters is no
// identity: such a name can never be a relation in OpenFGA. Nor is one
// whose subject or organizations break OpenFGA's id rules
// ([CheckIdentity]): "user:alice", "acme#member", "*", "a b".
func (Headers) Resolve(r *http.Request) (Identity, bool) {
	subject := strings.TrimSpace(r.Header.Get(SubjectHeader))
	orgs := r.Header.Get(OrganizationsHeader)
	if subject == "" || !printable(subject) || !printable(orgs) {
		return Identity{}, false
	}
	id := Identity{
		Subject:       subject,
		Organizations: ParseOrganizations(orgs),
	}
	if CheckIdentity(id) != nil {
		return Identity{}, false
	}
	return id, true
}

// printable reports whether s is valid UTF-8 without control characters
// (whitespace aside: it is trimmed).
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// ParseOrganizations splits a comma-separated organizations header value:
// entries are trimmed and empty entries dropped, so " acme , , contoso ,"
// gives ["acme" "contoso"]. An empty value gives an empty, non-nil slice.
func ParseOrganizations(v string) []string {
	orgs := []string{}
	for part := range strings.SplitSeq(v, ",") {
		if p := strings.TrimSpace(part); p != "" {
			orgs = append(orgs, p)
		}
	}
	return orgs
}
