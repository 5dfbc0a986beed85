package search

import (
	"fmt"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// UnreachableError is an index that did not answer (or answered that it
// cannot answer anyone: 503, 429). It matches ledger.ErrUnreachable, so an
// indexing pass stops instead of blaming the archive it was on.
type UnreachableError struct {
	Where string
	Err   error
}

func (e *UnreachableError) Error() string { return fmt.Sprintf("cannot reach %s: %v", e.Where, e.Err) }

func (e *UnreachableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ledger.ErrUnreachable) true.
func (e *UnreachableError) Is(target error) bool { return target == ledger.ErrUnreachable }
