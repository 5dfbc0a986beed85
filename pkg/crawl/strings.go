package crawl

import "github.com/capture-ledger/ledgerctl/pkg/ledger"

// Strings the ledger refuses in a request. PostgreSQL text cannot hold
// U+0000 (it fails the write with SQLSTATE 22021, an internal error the
// runner would resend forever), and a string that is not UTF-8 would not be
// stored as it was sent. Both are refused naming the field; the API finds
// them in the raw JSON (where encoding/json would hide them: package
// strictjson), the use-cases in every free-text string they are handed
// (TextProblem). The centre holds the words (ledger.ReasonNUL, …).
const (
	ReasonNUL     = ledger.ReasonNUL
	ReasonNotUTF8 = ledger.ReasonNotUTF8
)

// TextProblem returns why the ledger may not keep s (ReasonNUL or
// ReasonNotUTF8), or "" when it may.
func TextProblem(s string) string { return ledger.TextProblem(s) }
