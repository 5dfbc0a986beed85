package ledger

// Why the ledger refuses a string it is handed. PostgreSQL text cannot hold
// U+0000 (the write fails with SQLSTATE 22021, an internal error a client
// would resend forever), and a string that is not UTF-8 would not be stored
// as it was sent. Both are refused naming the field (a *FieldError with one
// of these reasons).
const (
	ReasonNUL     = "must NOT contain U+0000 (NUL)"
	ReasonNotUTF8 = "must be valid UTF-8"
)
