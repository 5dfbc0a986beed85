package archive

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// The list's request fields, as a *ledger.FieldError names them: the API
// reads them as ?before= and ?beforeId=, the CLI as --before and --before-id.
const (
	FieldBefore   = "before"
	FieldBeforeID = "beforeId"
	FieldWhy      = "why"
)

// lastID sorts after every real id: a position chosen by time alone starts
// with the rows strictly older than that time.
const lastID = "ffffffff-ffff-ffff-ffff-ffffffffffff"

// ListStart is where an archive list starts: the newest row (zero), a
// position the caller chose (At), or a resume token a previous page handed
// out (Token, opened by Access.ListFrom for the caller it was handed to).
type ListStart struct {
	At    *Cursor
	Token string
	// Why asks each archive of the page to say why the caller sees it.
	Why bool
	// Filter keeps some archives only (a token opens only for the filter
	// it was handed out with).
	Filter ledger.ArchiveFilter
}

// ParseListStart reads where a list starts from every value given for
// before and beforeId: a date-time with an optional id (ParseBefore; a time
// the caller chose reveals nothing), or a token a previous page's
// next.before carried, with beforeId absent or empty. A token's shape is
// checked here, with no key and before anyone is identified; whose it is,
// by ListFrom. Bad input is a *ledger.FieldError naming the field.
func ParseListStart(before, beforeID []string) (ListStart, error) {
	if len(before) == 1 && IsCursorToken(before[0]) {
		if len(beforeID) > 1 || first(beforeID) != "" {
			return ListStart{}, &ledger.FieldError{Field: FieldBeforeID, Reason: "must be empty when before is a cursor from next.before"}
		}
		if err := CheckCursorToken(before[0]); err != nil {
			return ListStart{}, badToken(err)
		}
		return ListStart{Token: before[0]}, nil
	}
	at, err := ParseBefore(before, beforeID)
	return ListStart{At: at}, err
}

// ParseWhy reads the why request field: absent, "", "0" or "false" is no;
// "1" or "true" asks each archive of the page to say why the caller sees
// it. Anything else is a *ledger.FieldError.
func ParseWhy(v []string) (bool, error) {
	if len(v) > 1 {
		return false, &ledger.FieldError{Field: FieldWhy, Reason: "must be a single value"}
	}
	switch first(v) {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	}
	return false, &ledger.FieldError{Field: FieldWhy, Reason: "must be true or false"}
}

// ParseBefore reads a position given as before=<date-time> and an optional
// beforeId=<uuid>, each at most once; nil when neither is given. Without an
// id, the rows strictly older than the time follow. Bad input is a
// *ledger.FieldError naming the field.
func ParseBefore(before, beforeID []string) (*Cursor, error) {
	switch {
	case len(before) > 1:
		return nil, &ledger.FieldError{Field: FieldBefore, Reason: "must be a single value"}
	case len(beforeID) > 1:
		return nil, &ledger.FieldError{Field: FieldBeforeID, Reason: "must be a single value"}
	}
	raw, idRaw := first(before), first(beforeID)
	if raw == "" {
		if idRaw != "" {
			return nil, &ledger.FieldError{Field: FieldBeforeID, Reason: "needs before"}
		}
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		return nil, &ledger.FieldError{Field: FieldBefore, Reason: `must match format "date-time"`, Err: err}
	}
	id := lastID
	if idRaw != "" {
		u, err := uuid.Parse(idRaw)
		if err != nil {
			return nil, &ledger.FieldError{Field: FieldBeforeID, Reason: `must match format "uuid"`, Err: err}
		}
		id = u.String()
	}
	return &Cursor{CapturedAt: t, ID: id}, nil
}

// badToken is a token this caller cannot use, as a field error that still
// matches ErrBadCursor.
func badToken(err error) error {
	return &ledger.FieldError{Field: FieldBefore, Reason: err.Error(), Err: err}
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// ListFrom is the list use-case of GET /api/archives and `ledgerctl
// archives list`: it opens start for this caller (a token handed to anyone
// else, or changed, is a *ledger.FieldError on before matching
// ErrBadCursor) and returns the page that follows it.
func (a *Access) ListFrom(ctx context.Context, subject string, orgs []string, start ListStart) (Page, error) {
	at := start.At
	if start.Token != "" {
		var err error
		at, err = a.openCursor(ctx, subject, orgs, start.Filter.Key(), start.Token)
		if errors.Is(err, ErrBadCursor) {
			return Page{}, badToken(err)
		}
		if err != nil {
			return Page{}, err
		}
	}
	if start.Why && a.Source == SourceScan {
		return Page{}, &ledger.FieldError{Field: FieldWhy, Reason: whyNeedsCandidates, Err: ErrWhyNeedsCandidates}
	}
	return a.list(ctx, subject, orgs, start.Filter, at, start.Why)
}

// PageCursor is how a page shows where the next one starts: Before is the
// sealed token and BeforeID is empty, so sent back as they are
// (?before=…&beforeId=), they continue after the page.
type PageCursor struct {
	Before   string `json:"before"`
	BeforeID string `json:"beforeId"`
}

// PageBody is a page as the API answers it and `archives list --json`
// prints it.
type PageBody struct {
	Archives []ledger.Archive `json:"archives"`
	// Next resumes the list; null when the list is exhausted. It carries
	// only the token: the position is sealed for this caller.
	Next      *PageCursor `json:"next"`
	Truncated bool        `json:"truncated"`
}

// Body shapes the page for JSON.
func (p Page) Body() PageBody {
	out := PageBody{Archives: p.Archives, Truncated: p.Truncated}
	if out.Archives == nil {
		out.Archives = []ledger.Archive{}
	}
	if p.Token != "" {
		out.Next = &PageCursor{Before: p.Token}
	}
	return out
}
