package identity

import (
	"fmt"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// The grammar of subjects and organizations is the centre's
// (pkg/ledger/ids.go): an identity is checked against it here.
const (
	MaxSubjectBytes      = ledger.MaxSubjectBytes
	MaxOrganizationBytes = ledger.MaxOrganizationBytes
	MaxOrganizations     = ledger.MaxOrganizations
)

// ErrInvalidID is ledger.ErrInvalidID.
var ErrInvalidID = ledger.ErrInvalidID

// IDError is ledger.IDError: why an identity string is refused.
type IDError = ledger.IDError

// CheckSubject is ledger.CheckSubject.
func CheckSubject(s string) error { return ledger.CheckSubject(s) }

// CheckOrganization is ledger.CheckOrganization.
func CheckOrganization(s string) error { return ledger.CheckOrganization(s) }

// CheckIdentity checks the subject, each organization and their number
// (at most MaxOrganizations).
func CheckIdentity(id Identity) error {
	if err := CheckSubject(id.Subject); err != nil {
		return err
	}
	if len(id.Organizations) > MaxOrganizations {
		return &IDError{What: "organization", Value: fmt.Sprintf("(%d of them)", len(id.Organizations)), Reason: fmt.Sprintf("list is longer than %d", MaxOrganizations)}
	}
	for _, o := range id.Organizations {
		if err := CheckOrganization(o); err != nil {
			return err
		}
	}
	return nil
}
