package archive

import "github.com/capture-ledger/ledgerctl/pkg/visible"

// slots counts places held per key against one limit (visible.Slots): the
// capture quota's captures at once per caller and per organization.
type slots = visible.Slots

func newSlots(limit int) slots { return visible.NewSlots(limit) }
