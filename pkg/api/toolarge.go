package api

import "fmt"

// TooLarge is a request body over its route's limit, answered 413 before
// identity: bad input gets a clear error.
type TooLarge struct{ Limit int64 }

func (e *TooLarge) Error() string { return fmt.Sprintf("body must be at most %d bytes", e.Limit) }
