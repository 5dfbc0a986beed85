package ledger

// FieldError is a request field whose value a use-case cannot take as given.
// Field is the field's path in the use-case's request, segments separated by
// "/" ("before", "rule/1" for the second rule); Reason says what is wrong
// ("must match format \"uuid\""). The use-case does not know where the value
// came from, so each edge names the place its own way: the API prefixes the
// part of the request it read (querystring/rule/1, body/maxPages), the CLI
// names the flag (--rule #1, --max-pages). Err, when set, is the cause.
// Nothing was changed.
type FieldError struct {
	Field  string
	Reason string
	Err    error
}

func (e *FieldError) Error() string { return e.Field + " " + e.Reason }

// Unwrap returns the cause, if any.
func (e *FieldError) Unwrap() error { return e.Err }
