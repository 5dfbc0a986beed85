package crawl

import (
	"errors"
	"fmt"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// The classes of error the operations return besides ledger.ErrNotFound
// ("absent or not allowed", 404). Every error of a class also has a Body()
// method giving the exact JSON body to answer with.
var (
	// ErrInvalid matches (errors.Is) a request that is refused as it is:
	// the API answers 400. The error changed nothing.
	ErrInvalid = errors.New("invalid request")
	// ErrConflict matches (errors.Is) a request that conflicts with the
	// crawl's state: the API answers 409. The error changed nothing.
	ErrConflict = errors.New("conflict")
)

// ErrorBody is a body holding only an error message.
type ErrorBody struct {
	Error string `json:"error"`
}

// ValidationError is input that does not fit the request's schema: an
// unknown key, a value of the wrong type or out of range, a missing
// required key. Path names the offending place the way the API's
// validation messages do ("body/maxPages", "body/results/3/taskId",
// "querystring/days"). It matches ErrInvalid.
type ValidationError struct {
	Path   string
	Reason string
}

func (e *ValidationError) Error() string { return e.Path + " " + e.Reason }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// ValidationBody is the API's schema-validation 400 body.
type ValidationBody struct {
	StatusCode int    `json:"statusCode"`
	Code       string `json:"code"`
	Error      string `json:"error"`
	Message    string `json:"message"`
}

// Body returns {"statusCode":400,"code":"FST_ERR_VALIDATION","error":"Bad Request","message":…}.
func (e *ValidationError) Body() any {
	return ValidationBody{StatusCode: 400, Code: "FST_ERR_VALIDATION", Error: "Bad Request", Message: e.Error()}
}

func invalid(path, format string, args ...any) error {
	return &ValidationError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// RequestError is a 400 with a named body, such as
// {"error":"provide exactly one of seeds or fromTargets"} or one of the
// rule-list bodies of package rules (Err then holds that error and Body is
// its body). It matches ErrInvalid.
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

// Body returns the cause's body when it has one, else {"error":Message}.
func (e *RequestError) Body() any {
	var be rules.BodyError
	if errors.As(e.Err, &be) {
		return be.Body()
	}
	return ErrorBody{Error: e.Message}
}

func badRequest(msg string) error { return &RequestError{Message: msg} }

// The 400 messages of POST /api/crawls (reference §3.5).
const (
	MsgSeedsXorTargets = "provide exactly one of seeds or fromTargets"
	MsgNoSeeds         = "seeds must not be empty"
	MsgNoTargets       = "no enabled capture targets for this organization"
)

// ActiveCrawlError is the 409 of a crawl started while another one runs,
// in any organization: the store's refusal (CrawlID and StartedAt are the
// running crawl's, empty when it could not be read), answered with a body.
// It matches ErrConflict.
type ActiveCrawlError struct {
	*ledger.ActiveCrawlError
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ActiveCrawlError) Is(target error) bool { return target == ErrConflict }

// ActiveCrawlBody is the body of an ActiveCrawlError.
type ActiveCrawlBody struct {
	Error     string     `json:"error"`
	CrawlID   string     `json:"crawlId,omitempty"`
	StartedAt *time.Time `json:"startedAt,omitempty"`
}

// Body returns {"error":"a crawl is already in progress","crawlId":…,"startedAt":…}.
func (e *ActiveCrawlError) Body() any {
	b := ActiveCrawlBody{Error: "a crawl is already in progress", CrawlID: e.CrawlID}
	if e.CrawlID != "" {
		t := e.StartedAt.UTC()
		b.StartedAt = &t
	}
	return b
}

// NotRunningError is the 409 of a level report for a crawl that is no
// longer running (DESIGN.md §3.2): nothing was changed. It matches
// ErrConflict.
type NotRunningError struct {
	CrawlID string
	State   string
}

func (e *NotRunningError) Error() string {
	return fmt.Sprintf("crawl %s is %s, not running: the level report was refused", e.CrawlID, e.State)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *NotRunningError) Is(target error) bool { return target == ErrConflict }

// StateBody is a 409 body naming the crawl's state.
type StateBody struct {
	Error string `json:"error"`
	State string `json:"state"`
}

// Body returns {"error":"the crawl is not running","state":"failed"}.
func (e *NotRunningError) Body() any {
	return StateBody{Error: "the crawl is not running", State: e.State}
}

// LevelConflictError is the 409 of a level report for a depth that was
// already reported with different results, or for a depth at which the
// crawl has no pages. Nothing was changed. It matches ErrConflict.
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

// LevelBody is a 409 body naming the level.
type LevelBody struct {
	Error string `json:"error"`
	Depth int    `json:"depth"`
}

// Body returns {"error":"this level was already reported with different results","depth":n}
// or {"error":"the crawl has no such level","depth":n}.
func (e *LevelConflictError) Body() any {
	if e.NoSuchLevel {
		return LevelBody{Error: "the crawl has no such level", Depth: e.Depth}
	}
	return LevelBody{Error: "this level was already reported with different results", Depth: e.Depth}
}

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

// BadTargetsBody is the body of a BadTargetsError.
type BadTargetsBody struct {
	Error string   `json:"error"`
	URLs  []BadURL `json:"urls"`
}

// Body returns {"error":"every target must be an http(s) URL","urls":[…]}.
func (e *BadTargetsError) Body() any {
	return BadTargetsBody{Error: "every target must be an http(s) URL", URLs: e.URLs}
}
