package ledger

import (
	"strings"
	"unicode/utf8"
)

// Why the ledger refuses a string it is handed. PostgreSQL text cannot hold
// U+0000 (the write fails with SQLSTATE 22021, an internal error a client
// would resend forever), and a string that is not UTF-8 would not be stored
// as it was sent. Both are refused naming the field (a *FieldError with one
// of these reasons).
const (
	ReasonNUL     = "must NOT contain U+0000 (NUL)"
	ReasonNotUTF8 = "must be valid UTF-8"
)

// TextProblem returns why the ledger may not keep s (ReasonNUL or
// ReasonNotUTF8), or "" when it may.
func TextProblem(s string) string {
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return ReasonNUL
	case !utf8.ValidString(s):
		return ReasonNotUTF8
	}
	return ""
}
