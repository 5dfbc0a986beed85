package cmdutil

import (
	"strings"

	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// ActingAs reads --as and --org, the identity an offline command acts as.
// They are held to the same rules as an identity the API resolves (OpenFGA's
// id rules, identity.CheckIdentity), so what the API answers 401 is a usage
// error here, never a question OpenFGA refuses. need says what the subject
// is for, in the message when --as is missing.
func ActingAs(as string, orgFlags []string, need string) (identity.Identity, error) {
	id := identity.Identity{Subject: strings.TrimSpace(as)}
	if id.Subject == "" {
		return identity.Identity{}, Usagef("--as is required: %s", need)
	}
	for _, org := range orgFlags {
		if org = strings.TrimSpace(org); org != "" {
			id.Organizations = append(id.Organizations, org)
		}
	}
	if err := identity.CheckSubject(id.Subject); err != nil {
		return identity.Identity{}, Usagef("--as: %v", err)
	}
	if err := identity.CheckIdentity(id); err != nil {
		return identity.Identity{}, Usagef("--org: %v", err)
	}
	return id, nil
}
