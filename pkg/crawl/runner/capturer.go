package runner

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/manifest"
)

// Capturer makes one capture of one page and writes its artefacts where
// the ledger reads them (the WACZ, the .links.json and the .result.json
// next to each other in the configured bucket).
//
// A capture that was made, whatever became of the page (an HTTP error, a
// timeout, a cancelled capture), is a CaptureOutcome and a nil error. An
// error means the backend itself could not be used (no BrowserHive
// endpoint answers, S3 cannot be reached): no capture was made, and the
// runner waits and tries again rather than failing the page.
type Capturer interface {
	Capture(ctx context.Context, req CaptureRequest) (CaptureOutcome, error)
}

// CaptureRequest is one page to capture.
type CaptureRequest struct {
	URL string
	// CorrelationID is the crawl id: the manifest and the artefact names
	// carry it, and the level report is held to it.
	CorrelationID string
	// TaskID is the id the runner gives the capture (a UUID); a backend
	// that names its own captures (BrowserHive) ignores it.
	TaskID string
	// Formats are the level's formats (links on when the level will be
	// followed); Signing asks for a signed WACZ.
	Formats crawl.Formats
	Signing bool
}

// CaptureOutcome is what the level report needs of one capture.
type CaptureOutcome struct {
	// TaskID is the capture's id; "" when no capture was made (the
	// backend refused the request).
	TaskID string
	// ManifestLocation is the "s3://bucket/key" of the .result.json;
	// ManifestError says why there is none. A capture with a TaskID has
	// exactly one of them.
	ManifestLocation string
	ManifestError    string
	// Captured says the capture succeeded (a WACZ was written).
	Captured bool
	// LinksLocation is the "s3://bucket/key" of the .links.json, when the
	// links were asked for and the capture succeeded.
	LinksLocation string
	// FinalURL is where the page ended after redirects ("" when unknown).
	FinalURL string
	// HTTPStatus is the main document's status (0 when none came back);
	// RetryAfter its Retry-After, when it had one.
	HTTPStatus int
	RetryAfter time.Duration
	// Failure says why the page was not captured ("" when it was).
	Failure string
	// Transient marks a failure worth one more try after the delay (the
	// connection dropped, a timeout, an internal error of the backend).
	Transient bool
	// FinishedAt is when the capture ended, set only by Recover (the
	// runner measures live captures itself).
	FinishedAt time.Time
	// Manifest and Links are the manifest at ManifestLocation and the
	// links file at LinksLocation as the capturer wrote them, decoded, when
	// it holds them (the built-in capturer does; nil otherwise). The level
	// is then admitted from them, with nothing read back from the bucket.
	Manifest *manifest.Manifest
	Links    *crawl.PageLinks
}

// Staged is a Capturer whose capture comes in two steps: Fetch captures
// the page and returns once nothing more is asked of its host; the
// Fetched's Store writes the capture's objects and returns what Capture
// would have. The runner ends the host's turn after Fetch (the next
// capture's delay counts from there, as the politeness record shows) and
// writes the objects while the host's next page is captured.
//
// Fetch's error is Capture's for a backend that cannot be used before
// anything was written; Store's, for one that took no manifest.
type Staged interface {
	Capturer
	Fetch(ctx context.Context, req CaptureRequest) (Fetched, error)
}

// Fetched is a capture made and not yet written.
type Fetched interface {
	// Host is what the page's host answered, for the pacing: HTTPStatus,
	// RetryAfter, Failure, Transient and Captured of the capture itself
	// (no locations: nothing is written yet).
	Host() CaptureOutcome
	// Store writes the capture's objects and returns its outcome. It is
	// called once, and may run while the runner fetches another page.
	Store(ctx context.Context) (CaptureOutcome, error)
}

// Ordered is a Fetched that can be written while the capture fetched
// before it on the same host is still being written (prev, nil for none):
// it keeps the order in which the crawl's captures share their files, and
// its result counts only once the captures it refers to are written (an
// error otherwise: the page is captured again). A Fetched that is not
// Ordered is written after the one before it is.
type Ordered interface {
	Fetched
	StoreAfter(ctx context.Context, prev Fetched) (CaptureOutcome, error)
}

// Slotted is a Capturer that can run only so many captures at once
// (BrowserHive: one per endpoint); the runner works on no more hosts at
// once than that.
type Slotted interface {
	Slots() int
}

// Recoverer is a Capturer that can find the outcome of a capture whose
// runner died before keeping its result, from the task id the runner gave
// it (found is false when the capture left no manifest: it is made again).
type Recoverer interface {
	Recover(ctx context.Context, taskID, correlationID, url string) (out CaptureOutcome, found bool, err error)
}

// recoveredTimes are the start and end of a capture found where its
// capturer left it (Recoverer): begun when the runner recorded its begin,
// ended when the capturer says, never before it began.
func recoveredTimes(begun time.Time, out CaptureOutcome) (sub, fin time.Time) {
	sub = begun.UTC()
	fin = out.FinishedAt.UTC().Truncate(time.Microsecond)
	if fin.Before(sub) {
		fin = sub
	}
	return sub, fin
}

// InFlight finds, through its capturer, a capture a runner began and kept
// no result of (its process died in between), for a crawl's close to
// register (crawl.Service.InFlight): the built-in capturer's manifest
// names the capture's task and crawl.
type InFlight struct{ Capturer Recoverer }

// FindBegun answers the page's result as the runner would have kept it:
// found only when the capturer wrote the capture whole and it captured the
// page (a failure, or a refusal, is no capture to register).
func (f InFlight) FindBegun(ctx context.Context, crawlID string, b ledger.BegunCapture) (crawl.PageReport, bool, error) {
	out, found, err := f.Capturer.Recover(ctx, b.TaskID, crawlID, b.URL)
	if err != nil || !found || !out.Captured {
		return crawl.PageReport{}, false, err
	}
	sub, fin := recoveredTimes(b.SubmittedAt, out)
	return pageReport(b.URL, crawlID, out, sub, fin), true, nil
}

// maxText bounds the text the runner puts into a report (reasons, errors).
const maxText = 2000

// text makes s fit a level report and crawl_pages: valid UTF-8, no U+0000
// or other control characters, at most maxText characters.
func text(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n':
			return ' '
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > maxText {
		s = string([]rune(s)[:maxText-1]) + "…"
	}
	return s
}

// location keeps an s3:// location that is clean text, else "".
func location(s string) string {
	if s == "" || !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) ||
		len(s) > 4096 {
		return ""
	}
	return s
}

// pageOutcome is pageReport with what the capturer holds of the capture.
func pageOutcome(url, crawlID string, out CaptureOutcome, submitted, finished time.Time) crawl.PageOutcome {
	po := crawl.PageOutcome{PageReport: pageReport(url, crawlID, out, submitted, finished)}
	if po.ManifestLocation != "" {
		po.Manifest = out.Manifest
	}
	if po.LinksLocation != "" {
		po.Links = out.Links
	}
	return po
}

// pageReport turns one capture into the page's result in the level
// report. Whatever the backend answered, the result is one the report
// accepts: a task id that is not a UUID is dropped (with the page failed,
// saying so), a task id always comes with exactly one manifest outcome, and
// every string is clean text.
func pageReport(url, crawlID string, out CaptureOutcome, submitted, finished time.Time) crawl.PageReport {
	p := crawl.PageReport{URL: url, CorrelationID: crawlID, SubmittedAt: submitted, FinishedAt: finished}
	captured := out.Captured
	failure := text(out.Failure)
	if out.TaskID != "" {
		if id, err := uuid.Parse(out.TaskID); err == nil && len(out.TaskID) == 36 {
			p.TaskID = id.String()
		} else {
			captured = false
			failure = "the capture backend answered a task id that is not a UUID"
		}
	}
	if p.TaskID != "" {
		loc, msg := location(out.ManifestLocation), text(out.ManifestError)
		switch {
		case loc != "":
			p.ManifestLocation = loc
		case msg != "":
			p.ManifestError = msg
		case out.ManifestLocation != "":
			p.ManifestError = "the manifest location is not a usable s3:// location"
		default:
			p.ManifestError = "the capture response carried no manifest outcome"
		}
	}
	if !captured {
		p.Status = crawl.StatusFailed
		if failure == "" {
			failure = "the capture failed without saying why"
		}
		p.SkipReason = failure
		return p
	}
	p.Status = crawl.StatusCaptured
	p.LinksLocation = location(out.LinksLocation)
	if out.FinalURL != "" {
		if u, err := rules.ParseURL(out.FinalURL); err == nil && len(u.Normalized) <= 8192 {
			p.FinalURL = u.Normalized
		}
	}
	return p
}
