package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// MaxCaptureURLs is the most URLs one capture request takes; MaxURLBytes
// the longest URL.
const (
	MaxCaptureURLs = 50
	MaxURLBytes    = 2048
)

// Capturer captures one page and writes its WACZ, links file and result
// manifest into the configured bucket in BrowserHive's layout
// (<taskId>_<correlationId>.wacz, .links.json, .result.json). A capture
// that failed (connection, timeout, HTTP error, refused address) still
// writes its manifest, saying why; the error is only for a manifest that
// could not be written.
type Capturer interface {
	CaptureURL(ctx context.Context, job CaptureJob) (CaptureDone, error)
}

// CaptureJob is one page to capture.
type CaptureJob struct {
	URL           string
	TaskID        string
	CorrelationID string
}

// CaptureDone is what the capturer wrote for one page.
type CaptureDone struct {
	// ManifestKey is the .result.json's key in the bucket.
	ManifestKey string
	// Complete is false when a cap cut a body short.
	Complete bool
	// Failure says why the capture failed, "" when it succeeded, in the
	// coarse words the caller is told (refused by policy, unreachable,
	// HTTP <status>); FailureDetail is the whole story, for the log only.
	Failure       string
	FailureDetail string
}

// SubmitPermission answers whether subject may submit captures for org
// (can_submit).
type SubmitPermission interface {
	MaySubmit(ctx context.Context, subject string, orgs []string) (bool, error)
}

// Captures is "capture these pages for this organization": the one
// implementation behind `ledgerctl capture` and POST /api/captures.
type Captures struct {
	Capturer    Capturer
	Adder       *Adder
	Permissions SubmitPermission
	// Quota, when set, bounds the captures per caller and per organization
	// (a refusal is a *QuotaError, before anything is captured).
	Quota *CaptureQuota
	Log   *slog.Logger
	// Progress, when set, is told each page's outcome as it ends.
	Progress func(CapturedPage)
	// Engines, when set, are the capturers a request may choose by name
	// (CaptureRequest.Engine); Capturer captures requests naming none.
	Engines map[string]Capturer
	// Hosts, when set, are the host leases every capture of a host takes
	// first, shared with the crawls of every process (docs/crawling.md):
	// at most HostAtOnce captures of a host at once, and HostDelay at
	// least between one's end and the next one's start (longer when a
	// crawl asked for more). HostTTL is how long a lease outlives a
	// process that died holding it.
	Hosts      ledger.HostLeases
	HostAtOnce int
	HostDelay  time.Duration
	HostTTL    time.Duration
}

// EngineNames are the engine names a capture request may give.
var EngineNames = []string{"http", "browser"}

// CaptureRequest asks for URLs to be captured for Org by Subject.
type CaptureRequest struct {
	URLs []string `json:"urls"`
	Org  string   `json:"organization"`
	// Engine names the capturer ("" for the configured one).
	Engine  string `json:"engine,omitempty"`
	Subject string `json:"-"`
}

// CaptureStatus is how one page's capture ended.
type CaptureStatus string

// The statuses of a captured page.
const (
	// Captured: the page was captured and its archive registered.
	Captured CaptureStatus = "captured"
	// CaptureFailed: the capture failed; its submission and manifest say
	// why, and there is no archive.
	CaptureFailed CaptureStatus = "failed"
	// CaptureError: the capture ran but could not be written or
	// registered; the reason says which.
	CaptureError CaptureStatus = "error"
)

// CapturedPage is one URL's outcome. Every field is always present in
// JSON ("" or false when it does not apply).
type CapturedPage struct {
	URL       string        `json:"url"`
	Status    CaptureStatus `json:"status"`
	TaskID    string        `json:"taskId"`
	ArchiveID string        `json:"archiveId"`
	ObjectKey string        `json:"objectKey"`
	Complete  bool          `json:"complete"`
	Error     string        `json:"error"`
}

// CaptureResult is the outcome of a request, in the order of its URLs.
type CaptureResult struct {
	CorrelationID string         `json:"correlationId"`
	Pages         []CapturedPage `json:"pages"`
}

// Failed counts the pages that did not end captured.
func (r CaptureResult) Failed() int {
	n := 0
	for _, p := range r.Pages {
		if p.Status != Captured {
			n++
		}
	}
	return n
}

// CheckCaptureRequest validates a request whole before anything happens:
// an organization, 1 to MaxCaptureURLs URLs, each an absolute http(s) URL
// with a host, valid UTF-8 without control characters, at most
// MaxURLBytes long. Errors are *ledger.FieldError ("organization",
// "urls", "urls/2").
func CheckCaptureRequest(req CaptureRequest) error {
	if err := checkOrgID(req.Org); err != nil {
		return err
	}
	if req.Engine != "" && !slices.Contains(EngineNames, req.Engine) {
		return &ledger.FieldError{Field: "engine", Reason: fmt.Sprintf("must be one of %s: %q", strings.Join(EngineNames, ", "), clip(req.Engine))}
	}
	switch {
	case len(req.URLs) == 0:
		return &ledger.FieldError{Field: "urls", Reason: "must name at least one URL"}
	case len(req.URLs) > MaxCaptureURLs:
		return &ledger.FieldError{Field: "urls", Reason: fmt.Sprintf("names %d URLs; at most %d are taken at once", len(req.URLs), MaxCaptureURLs)}
	}
	for i, raw := range req.URLs {
		if reason := badCaptureURL(raw); reason != "" {
			return &ledger.FieldError{Field: fmt.Sprintf("urls/%d", i), Reason: fmt.Sprintf("%s: %q", reason, clip(raw))}
		}
	}
	return nil
}

func checkOrgID(org string) error {
	if org == "" {
		return &ledger.FieldError{Field: "organization", Reason: "is required"}
	}
	var bad *ledger.IDError
	if err := ledger.CheckOrganization(org); errors.As(err, &bad) {
		return &ledger.FieldError{Field: "organization", Reason: bad.Reason, Err: err}
	} else if err != nil {
		return err
	}
	return nil
}

func badCaptureURL(raw string) string {
	if !utf8.ValidString(raw) || strings.ContainsFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "must be valid UTF-8 without control characters"
	}
	if len(raw) > MaxURLBytes {
		return fmt.Sprintf("must be at most %d bytes", MaxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return "must be an absolute URL"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "must be an http or https URL"
	}
	if u.Hostname() == "" {
		return "must name a host"
	}
	if u.User != nil {
		return "must not carry a user name or password"
	}
	return ""
}

func clip(s string) string {
	if len(s) <= 120 {
		return s
	}
	return strings.ToValidUTF8(s[:120], "") + "…"
}

// Capture checks req, then that its subject may submit for its
// organization (ledger.ErrNotFound when not, like every denial), then
// captures each URL in order: the capturer writes the WACZ, links file and
// manifest into the bucket, and the manifest is registered with the same
// admission as `archives add`, level reports and reconcile (the
// submission, the archive row and its outbox tuples in one transaction).
// With a Quota, the request is then admitted whole or refused with a
// *QuotaError (nothing captured). All pages of a request share one
// correlation id. A page that fails is
// that page's outcome; only an unreachable dependency stops the request.
func (c *Captures) Capture(ctx context.Context, req CaptureRequest) (CaptureResult, error) {
	if err := CheckCaptureRequest(req); err != nil {
		return CaptureResult{}, err
	}
	if req.Subject == "" {
		return CaptureResult{}, &ledger.FieldError{Field: "subject", Reason: "is required"}
	}
	capturer, err := c.capturer(req.Engine)
	if err != nil {
		return CaptureResult{}, err
	}
	ok, err := c.Permissions.MaySubmit(ctx, req.Subject, []string{req.Org})
	if err != nil {
		return CaptureResult{}, fmt.Errorf("ask whether %s may submit for %s: %w", req.Subject, req.Org, err)
	}
	if !ok {
		return CaptureResult{}, ledger.ErrNotFound
	}
	if c.Quota != nil {
		release, qerr := c.Quota.Admit(req.Subject, req.Org, len(req.URLs))
		if qerr != nil {
			c.logger().Info("capture refused by its quota", "subject", req.Subject, "organization", req.Org, "urls", len(req.URLs), "bound", qerr.Bound)
			return CaptureResult{}, qerr
		}
		defer release()
	}
	res := CaptureResult{CorrelationID: "capture-" + uuid.NewString(), Pages: make([]CapturedPage, 0, len(req.URLs))}
	for _, raw := range req.URLs {
		page, err := c.one(ctx, capturer, raw, res.CorrelationID, req)
		if err != nil {
			return res, err
		}
		res.Pages = append(res.Pages, page)
		if c.Progress != nil {
			c.Progress(page)
		}
	}
	return res, nil
}

// capturer is the capturer a request's engine names: Capturer for none;
// an engine this server does not run is a *ledger.FieldError on engine.
func (c *Captures) capturer(engine string) (Capturer, error) {
	if engine == "" {
		return c.Capturer, nil
	}
	if cp, ok := c.Engines[engine]; ok {
		return cp, nil
	}
	return nil, &ledger.FieldError{Field: "engine", Reason: fmt.Sprintf("%s is not available on this server (available: %s)", engine, strings.Join(c.Available(), ", "))}
}

// Available are the engines a request may name here, in EngineNames'
// order.
func (c *Captures) Available() []string {
	out := []string{}
	for _, n := range EngineNames {
		if _, ok := c.Engines[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

func (c *Captures) one(ctx context.Context, capturer Capturer, raw, correlation string, req CaptureRequest) (CapturedPage, error) {
	task, err := uuid.NewV7()
	if err != nil {
		return CapturedPage{}, err
	}
	page := CapturedPage{URL: raw, TaskID: task.String()}
	var held *ledger.HeldHost
	if c.Hosts != nil {
		if u, perr := rules.ParseURL(raw); perr == nil {
			held, err = ledger.AcquireHost(ctx, c.Hosts, ledger.HostLeaseRequest{
				Host: u.Host, Kind: ledger.HostKindCapture, Org: req.Org, URL: raw,
				Delay: c.HostDelay, Source: ledger.HostSourceHost, AtOnce: c.HostAtOnce, TTL: c.HostTTL,
			})
			if err != nil {
				if ctx.Err() != nil {
					return page, err
				}
				return page, fmt.Errorf("%w: %w", ledger.ErrUnreachable, err)
			}
		}
	}
	done, err := capturer.CaptureURL(ctx, CaptureJob{URL: raw, TaskID: page.TaskID, CorrelationID: correlation})
	if held != nil {
		if rerr := held.Release(ctx, c.HostDelay, ledger.HostSourceHost); rerr != nil {
			c.logger().Warn("could not release the host's lease; it expires", "url", raw, "error", rerr.Error())
		}
	}
	if err != nil {
		if errors.Is(err, ledger.ErrUnreachable) || ctx.Err() != nil {
			return page, err
		}
		// The detail (an address, a storage error) stays in the log.
		c.logger().Warn("capture could not be written", "url", raw, "taskId", page.TaskID, "error", err.Error())
		page.Status, page.Error = CaptureError, "the capture could not be written"
		return page, nil
	}
	if done.Failure != "" {
		c.logger().Info("capture failed", "url", raw, "taskId", page.TaskID, "reason", done.Failure, "detail", done.FailureDetail)
	}
	page.Complete = done.Complete && done.Failure == ""
	added, err := c.Adder.Add(ctx, AddRequest{Keys: []string{done.ManifestKey}, Org: req.Org, SubmittedBy: req.Subject})
	if err != nil {
		return page, err
	}
	if len(added.Results) != 1 {
		return page, fmt.Errorf("capture %s: registering its manifest gave %d outcomes", raw, len(added.Results))
	}
	r := added.Results[0]
	switch {
	case r.Outcome == AddRegistered || r.Outcome == AddKnown:
		page.Status, page.ArchiveID = Captured, r.ArchiveID
		page.ObjectKey = strings.TrimSuffix(done.ManifestKey, ManifestSuffix) + ".wacz"
	case done.Failure != "":
		page.Status, page.Error = CaptureFailed, done.Failure
	default:
		page.Status, page.Error = CaptureError, fmt.Sprintf("the capture was written but not registered (%s): %s", r.Outcome, r.Reason)
	}
	c.logger().Info("page captured", "url", raw, "status", page.Status, "taskId", page.TaskID, "archiveId", page.ArchiveID, "error", page.Error)
	return page, nil
}

func (c *Captures) logger() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}
