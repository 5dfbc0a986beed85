package capture

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/manifest"
)

// Objects is the bucket the crawl capturer writes into; *blob.Client
// implements it. A missing object is ledger.ErrNoObject.
type Objects interface {
	Put(ctx context.Context, bucket, key, contentType string, body []byte) error
	Get(ctx context.Context, bucket, key string) ([]byte, error)
}

// CrawlCapturer is the embedded crawl runner's default runner.Capturer:
// an Engine (browser or http) whose WACZ, .links.json and .result.json go
// into the ledger's bucket under BrowserHive's names
// (<taskId>_<correlationId>.<ext>). It records nothing in the database:
// the level's admission admits what it wrote, from the manifest and links
// it hands the runner in memory.
type CrawlCapturer struct {
	Engine  Engine
	Objects Objects
	Bucket  string
	// Software names the writer in the WACZ ("ledgerctl <version>").
	Software string
	// Payloads, when set, is the crawls' payload index: a payload an
	// earlier capture of the same crawl stored is written as a revisit
	// record (Options.Payloads).
	Payloads Payloads
	// Log, when set, is told when the payload index could not be used (the
	// capture is whole: it stores every payload, or later captures store
	// its payloads again).
	Log *slog.Logger
}

var (
	_ runner.Capturer  = (*CrawlCapturer)(nil)
	_ runner.Staged    = (*CrawlCapturer)(nil)
	_ runner.Recoverer = (*CrawlCapturer)(nil)
)

// uploadTimeout bounds one object's upload.
const uploadTimeout = 2 * time.Minute

// uploader puts a job's objects into the bucket. The uploads outlive the
// capture's context: a capture that ended is written whole even while the
// runner stops, so that it is not made again.
type uploader struct {
	b *CrawlCapturer
}

func (u uploader) Put(ctx context.Context, name, contentType string, body []byte) (string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), uploadTimeout)
	defer cancel()
	if err := u.b.Objects.Put(ctx, u.b.Bucket, name, contentType, body); err != nil {
		return "", err
	}
	return "s3://" + u.b.Bucket + "/" + name, nil
}

// Capture runs one capture with the engine and writes its objects. A page
// the engine could not capture (an HTTP error, a timeout, a refused
// address) is a failed outcome with its manifest; a job pkg/capture will not
// run (the URL) is a failed outcome without a task. The error is for the
// backend: an engine that cannot capture at all (no Chromium) or a bucket
// that took no manifest.
func (b *CrawlCapturer) Capture(ctx context.Context, req runner.CaptureRequest) (runner.CaptureOutcome, error) {
	f, err := b.Fetch(ctx, req)
	if err != nil {
		return runner.CaptureOutcome{}, err
	}
	return f.Store(ctx)
}

// Fetch is the first step of Capture: the page captured, nothing written
// (runner.Staged). Its error is Capture's for an engine that cannot
// capture; a capture cut off by ctx ending writes its cancelled manifest
// (as BrowserHive's would) and is ctx's error: not the page's outcome, the
// page is captured again when the runner resumes.
func (b *CrawlCapturer) Fetch(ctx context.Context, req runner.CaptureRequest) (runner.Fetched, error) {
	job := Job{TaskID: req.TaskID, CorrelationID: req.CorrelationID, URL: req.URL}
	f, err := Fetch(ctx, b.Engine, job)
	if err != nil {
		var je *JobError
		if errors.As(err, &je) {
			return refused{runner.CaptureOutcome{Failure: "the page cannot be captured: " + je.Error()}}, nil
		}
		return nil, err
	}
	cf := &crawlFetched{b: b, req: req, f: f, turn: NewTurn()}
	if fl := f.Result.Failure; fl != nil && fl.Kind == FailCancelled && ctx.Err() != nil {
		_, _ = cf.Store(ctx)
		return nil, ctx.Err()
	}
	return cf, nil
}

// refused is a job pkg/capture would not run: its outcome, nothing to write.
type refused struct{ out runner.CaptureOutcome }

func (r refused) Host() runner.CaptureOutcome                          { return r.out }
func (r refused) Store(context.Context) (runner.CaptureOutcome, error) { return r.out, nil }

// crawlFetched is a page the engine captured, its objects not yet written.
type crawlFetched struct {
	b    *CrawlCapturer
	req  runner.CaptureRequest
	f    *Fetched
	turn *Turn
}

var _ runner.Ordered = (*crawlFetched)(nil)

// turnOf is the turn of the crawl capture f is or wraps (a Fetched that
// wraps another says so with Unwrap), nil for any other.
func turnOf(f runner.Fetched) *Turn {
	for f != nil {
		switch v := f.(type) {
		case *crawlFetched:
			return v.turn
		case interface{ Unwrap() runner.Fetched }:
			f = v.Unwrap()
		default:
			return nil
		}
	}
	return nil
}

// failed fills o's failure fields from the capture's failure.
func failed(o *runner.CaptureOutcome, f *Failure) {
	o.Failure = fmt.Sprintf("%s: %s", f.Kind, f.Message)
	o.RetryAfter = f.RetryAfter
	switch f.Kind {
	case FailConnection, FailTimeout, FailInternal, FailArtifactSink:
		o.Transient = true
	}
}

// Host is what the page's host answered: the status, where the page ended,
// and the capture's failure with its Retry-After and whether it is worth
// another try. Captured says the capture itself succeeded; writing its
// objects can still fail.
func (c *crawlFetched) Host() runner.CaptureOutcome {
	res := c.f.Result
	o := runner.CaptureOutcome{TaskID: c.f.Job.TaskID, HTTPStatus: res.Status, FinalURL: res.FinalURL}
	if res.Failure != nil {
		failed(&o, res.Failure)
	} else {
		o.Captured = true
	}
	return o
}

// Store writes the capture's WACZ, links file (when the level's links are
// followed) and manifest, and returns Capture's outcome.
func (c *crawlFetched) Store(ctx context.Context) (runner.CaptureOutcome, error) {
	return c.StoreAfter(ctx, nil)
}

// StoreAfter is Store while the capture fetched before it, prev, may
// still be being written (runner.Ordered): it shares prev's files as if
// prev were written (Turn).
func (c *crawlFetched) StoreAfter(ctx context.Context, prev runner.Fetched) (runner.CaptureOutcome, error) {
	b, req, job := c.b, c.req, c.f.Job
	// The links file only when the level's links will be followed.
	out, err := c.f.Store(ctx, uploader{b}, Options{Software: b.Software, Payloads: b.Payloads, NoLinks: !req.Formats.Links,
		Turn: c.turn, After: turnOf(prev)})
	if err != nil {
		return runner.CaptureOutcome{}, err
	}
	if out.Dedup.Err != "" && b.Log != nil {
		b.Log.Warn("capture: the crawl's payload index could not be used; the capture is whole, shared files may be stored more than once",
			"url", job.URL, "crawlId", job.CorrelationID, "taskId", job.TaskID, "error", out.Dedup.Err)
	}
	res := out.Result
	o := runner.CaptureOutcome{TaskID: out.Job.TaskID, ManifestLocation: out.ManifestLocation, HTTPStatus: res.Status, FinalURL: res.FinalURL}
	// The manifest as written, for the level's admission: what reading it
	// back from the bucket would give.
	for _, obj := range out.Objects {
		if obj.Name == job.ManifestName() && obj.Location == out.ManifestLocation {
			if m, err := manifest.Decode(obj.Body); err == nil {
				o.Manifest = &m
			}
		}
	}
	if !out.OK() {
		failed(&o, out.Failure)
		return o, nil
	}
	o.Captured = true
	o.LinksLocation = out.Artifacts.Links
	if !req.Formats.Links {
		return o, nil // the level's links are not followed
	}
	// The links file's content (capture.LinksFile renders these).
	links := make([]manifest.Link, len(res.Links))
	for i, l := range res.Links {
		links[i] = manifest.Link{Href: l.Href}
		if l.Rel != "" {
			rel := l.Rel
			links[i].Rel = &rel
		}
	}
	o.Links = &crawl.PageLinks{FinalURL: res.FinalURL, Links: links}
	return o, nil
}

// Recover reads the manifest a capture with taskID wrote, if it wrote one:
// the capture ended but its runner died before keeping the result. A
// manifest of a cancelled capture, or of another page or crawl, is not a
// result (the page is captured again).
func (b *CrawlCapturer) Recover(ctx context.Context, taskID, correlationID, url string) (runner.CaptureOutcome, bool, error) {
	job := Job{TaskID: taskID, CorrelationID: correlationID}
	data, err := b.Objects.Get(ctx, b.Bucket, job.ManifestName())
	if errors.Is(err, ledger.ErrNoObject) {
		return runner.CaptureOutcome{}, false, nil
	}
	if err != nil {
		return runner.CaptureOutcome{}, false, err
	}
	m, err := manifest.Decode(data)
	if err != nil {
		return runner.CaptureOutcome{}, false, nil
	}
	want, err1 := rules.ParseURL(url)
	got, err2 := rules.ParseURL(m.URL)
	if err1 != nil || err2 != nil || want != got || m.CorrelationID == nil || !strings.EqualFold(*m.CorrelationID, correlationID) ||
		!strings.EqualFold(m.TaskID, taskID) {
		return runner.CaptureOutcome{}, false, nil
	}
	if m.Error != nil && m.Error.Type == "cancelled" {
		return runner.CaptureOutcome{}, false, nil
	}
	o := runner.CaptureOutcome{TaskID: m.TaskID, ManifestLocation: "s3://" + b.Bucket + "/" + job.ManifestName(), FinishedAt: m.Timestamp, Manifest: &m}
	if m.HTTPStatusCode != nil {
		o.HTTPStatus = *m.HTTPStatusCode
	}
	if m.Status == manifest.StatusSuccess && m.Artifacts.WACZ != "" {
		o.Captured = true
		o.LinksLocation = m.Artifacts.Links
		return o, true, nil
	}
	o.Failure = string(m.Status)
	if m.Error != nil {
		o.Failure += ": " + m.Error.Message
	}
	return o, true, nil
}
