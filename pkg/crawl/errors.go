package crawl

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// The classes of error the operations return besides ledger.ErrNotFound
// ("absent or not allowed"). The operations say what was refused and with
// what data; each edge words it its own way (the API as a status and a JSON
// body, the CLI as a sentence naming the flag and an exit code).
var (
	// ErrInvalid matches (errors.Is) a request that is refused as it is:
	// a *ledger.FieldError naming the request field, a *RequestError or a
	// *BadTargetsError. The error changed nothing.
	ErrInvalid = errors.New("invalid request")
	// ErrConflict matches (errors.Is) a request that conflicts with the
	// crawl's state: *ActiveCrawlError, *NotRunningError or
	// *LevelConflictError. The error changed nothing.
	ErrConflict = errors.New("conflict")
)

// The request fields a *ledger.FieldError of this package names. Lists are
// indexed from 0 ("seeds/2", "results/3/url", "rules/1/follow"); the API
// reads them under body/, querystring/ or params/, the CLI as flags.
const (
	FieldID              = "id" // the crawl id (a path parameter, an argument)
	FieldSeeds           = "seeds"
	FieldFromTargets     = "fromTargets"
	FieldFromTargetLimit = "fromTargets/limit"
	FieldRules           = "rules"
	FieldMaxDepth        = "maxDepth"
	FieldMaxPages        = "maxPages"
	FieldPerHostDelayMs  = "perHostDelayMs"
	FieldHostParallelism = "hostParallelism"
	FieldReason          = "reason"
	FieldState           = "state"
	FieldBeforeID        = "beforeId"
	FieldDomain          = "domain"
	FieldDays            = "days"
	FieldAction          = "action"
	FieldDepth           = "depth"
	FieldResults         = "results"
)

// invalid is a request field this package refuses: a *ledger.FieldError
// that matches ErrInvalid.
func invalid(field, format string, args ...any) error {
	return &ledger.FieldError{Field: field, Reason: fmt.Sprintf(format, args...), Err: ErrInvalid}
}

// RepeatedPageError is the cause (FieldError.Err) of a level report naming a
// page twice: the result at the error's field has the same normalised URL as
// results/First. It matches ErrInvalid.
type RepeatedPageError struct {
	First int
	URL   string
}

func (e *RepeatedPageError) Error() string {
	return fmt.Sprintf("repeats %s/%d/url (%s): a page is reported once", FieldResults, e.First, e.URL)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *RepeatedPageError) Is(target error) bool { return target == ErrInvalid }

// RuleFieldError turns a rule list's shape error (*rules.SchemaError) into
// a *ledger.FieldError at rules, rules/N or rules/N/<key>; other errors are
// returned as they are.
func RuleFieldError(err error) error {
	var se *rules.SchemaError
	if !errors.As(err, &se) {
		return err
	}
	field := FieldRules
	if se.Index >= 0 {
		field += "/" + strconv.Itoa(se.Index)
	}
	if se.Field != "" {
		field += "/" + se.Field
	}
	return &ledger.FieldError{Field: field, Reason: se.Reason, Err: ErrInvalid}
}

// RequestError is a request refused as a whole rather than at one field:
// Message is one of the Msg* sentences below (or another plain sentence),
// or Err is the rule checks' refusal (a rules.BodyError such as
// *rules.InvalidPatternsError) and Message is empty. It matches ErrInvalid.
type RequestError struct {
	Message string
	Err     error
}

func (e *RequestError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *RequestError) Is(target error) bool { return target == ErrInvalid }

// Unwrap returns the cause, e.g. a *rules.InvalidPatternsError.
func (e *RequestError) Unwrap() error { return e.Err }

func badRequest(msg string) error { return &RequestError{Message: msg} }

// The refusals of a crawl start that name no single field.
const (
	MsgSeedsXorTargets = "provide exactly one of seeds or fromTargets"
	MsgNoSeeds         = "seeds must not be empty"
	MsgNoTargets       = "no enabled capture targets for this organization"
)

// ActiveCrawlError refuses a crawl started while its organization runs as
// many crawls as it may at once (Service.CrawlsPerOrg): the store's refusal
// (CrawlID and StartedAt are the oldest running crawl's, Running and Limit
// the count and the bound), with CrawlID empty when the caller may not know
// which crawl runs (or it could not be read). It matches ErrConflict.
type ActiveCrawlError struct {
	*ledger.ActiveCrawlError
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ActiveCrawlError) Is(target error) bool { return target == ErrConflict }

// NotRunningError refuses a level report for a crawl that is no longer
// running (a 409): nothing was changed. It matches ErrConflict.
type NotRunningError struct {
	CrawlID string
	State   string
}

func (e *NotRunningError) Error() string {
	return fmt.Sprintf("crawl %s is %s, not running: the level report was refused", e.CrawlID, e.State)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *NotRunningError) Is(target error) bool { return target == ErrConflict }

// LevelConflictError refuses a level report for a depth that was already
// reported with different results, or for a depth at which the crawl has no
// pages. Nothing was changed. It matches ErrConflict.
type LevelConflictError struct {
	CrawlID string
	Depth   int
	// NoSuchLevel: the crawl has no pages at Depth (the report is not for
	// a level that was dispatched).
	NoSuchLevel bool
}

func (e *LevelConflictError) Error() string {
	if e.NoSuchLevel {
		return fmt.Sprintf("crawl %s has no level %d", e.CrawlID, e.Depth)
	}
	return fmt.Sprintf("level %d of crawl %s was already reported with different results", e.Depth, e.CrawlID)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *LevelConflictError) Is(target error) bool { return target == ErrConflict }

// BadTargetsError refuses a whole AddTargets call because some URLs are not
// absolute http(s) URLs; it names every one of them. It matches ErrInvalid.
type BadTargetsError struct {
	URLs []BadURL
}

// BadURL is an input that is not an absolute http(s) URL, and why.
type BadURL struct {
	Input  string `json:"url"`
	Reason string `json:"reason"`
}

func (e *BadTargetsError) Error() string {
	s := fmt.Sprintf("%d URL(s) are not absolute http(s) URLs, nothing was added:", len(e.URLs))
	for _, b := range e.URLs {
		s += fmt.Sprintf("\n  %q: %s", b.Input, b.Reason)
	}
	return s
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *BadTargetsError) Is(target error) bool { return target == ErrInvalid }

// checkID refuses a crawl id that is not a UUID.
func checkID(id string) error {
	if !ledger.IsUUID(id) {
		return invalid(FieldID, "must match format \"uuid\"")
	}
	return nil
}

func quoteJoin(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}
