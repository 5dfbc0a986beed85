package ledger

import (
	"errors"
	"fmt"
)

// ErrUnreachable is "a dependency did not answer" (PostgreSQL, OpenFGA, S3,
// the crawl runner's webhook). Every adapter's unreachable error matches it
// with errors.Is, so the edge maps all of them the same way (exit 4).
var ErrUnreachable = errors.New("a dependency is unreachable")

// UnreachableCause returns the outermost error in err's chain that says
// which dependency did not answer (the one matching ErrUnreachable by its
// own Is method), for the message the user sees; nil when there is none.
func UnreachableCause(err error) error {
	for err != nil {
		if is, ok := err.(interface{ Is(error) bool }); ok && is.Is(ErrUnreachable) {
			return err
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if c := UnreachableCause(e); c != nil {
					return c
				}
			}
			return nil
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return nil
		}
	}
	return nil
}

// SettingError is a setting whose value cannot be used, found by the
// adapter that reads it (e.g. a DATABASE_URL that is not a PostgreSQL URL).
// It is a usage error: nothing was changed.
type SettingError struct {
	Name   string
	Reason string
}

func (e *SettingError) Error() string { return fmt.Sprintf("%s %s", e.Name, e.Reason) }
