package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// Uploader puts one object of a job where the ledger reads it and says
// where: `s3://<bucket>/<key>`, as a BrowserHive manifest reports it. The
// name is the object's BrowserHive name; the uploader may prefix it.
//
// Run puts the WACZ and the links file concurrently: Put must be safe for
// concurrent use.
type Uploader interface {
	Put(ctx context.Context, name, contentType string, body []byte) (location string, err error)
}

// Object is one object a job wrote.
type Object struct {
	Name        string
	ContentType string
	Body        []byte
	Location    string // what the uploader answered
}

// Collect is an Uploader that keeps the objects in memory and answers
// `s3://<Bucket>/<Prefix><name>`: for tests, and for callers that upload
// the bytes themselves.
type Collect struct {
	Bucket, Prefix string

	mu      sync.Mutex
	Objects []Object
}

// Put keeps the object.
func (c *Collect) Put(_ context.Context, name, contentType string, body []byte) (string, error) {
	loc := "s3://" + c.Bucket + "/" + c.Prefix + name
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Objects = append(c.Objects, Object{Name: name, ContentType: contentType, Body: body, Location: loc})
	return loc, nil
}

// Outcome is what Run did for one job.
type Outcome struct {
	Job    Job
	Result *Result
	// Summary is wacz.Write's report; nil when no WACZ was written.
	Summary *wacz.Summary
	// Objects are the objects written: the WACZ and the links file (put
	// at the same time, once the WACZ is written), then the manifest. Each
	// has its Location when its upload succeeded.
	Objects   []Object
	Artifacts Artifacts
	// ManifestLocation is where the manifest went ("" if its upload failed).
	ManifestLocation string
	// Failure is why the job produced no archive: the capture's failure,
	// or packaging or uploading the WACZ or links; nil on success.
	Failure *Failure
	// Complete is the manifest's completeness.complete (false on failure).
	Complete bool
	// Dedup is what the crawl's payload index did to the WACZ.
	Dedup DedupStats
}

// OK reports whether the job produced an archive.
func (o *Outcome) OK() bool { return o.Failure == nil }

// Run captures job.URL with eng, writes the WACZ (wacz.Write), and puts
// the WACZ, the links file and the v12 manifest through up, in
// BrowserHive's layout: `<taskId>_<correlationId>.wacz`, `.links.json`,
// `.result.json`. A capture that failed (connection, timeout, refusal, HTTP
// error) still gets its manifest, with no archive; so does a WACZ or links
// upload that failed (errorDetails.type artifact_sink).
//
// The error is for jobs where no manifest could be written: a bad job
// (*JobError, nothing written), an engine that could not attempt the
// capture (a missing Chromium, a closed engine), or a failed manifest
// upload (the Outcome then says what was uploaded before).
func Run(ctx context.Context, eng Engine, job Job, up Uploader, software string) (*Outcome, error) {
	return RunWith(ctx, eng, job, up, Options{Software: software})
}

// Options are what RunWith is told beyond the job.
type Options struct {
	// Software names the WACZ's writer.
	Software string
	// Payloads, when set, is the index of what the job's crawl (its
	// CorrelationID) already stored: a payload stored by an earlier capture
	// of the crawl is written as a revisit record naming that capture's
	// WACZ, and the payloads this WACZ stores are added once the WACZ, the
	// links file and the manifest are all uploaded (an archive that is not
	// admitted is never referred to). A job without a CorrelationID is not
	// deduplicated.
	Payloads Payloads
	// NoLinks leaves out the links file (the manifest names none): a crawl
	// level whose links will not be followed (its last) asks for it, so
	// that each of its pages is one object fewer to write and to keep. The
	// links are still in the Outcome's Result.
	NoLinks bool
	// Turn, when set, is this capture's place among captures of the crawl
	// written at the same time (see Turn), and After the turn of the one
	// before it (nil for the first). Store settles Turn, whatever happens.
	Turn, After *Turn
}

// payloadsTimeout bounds one question to, or one addition to, the index.
const payloadsTimeout = 30 * time.Second

// RunWith is Run with options.
func RunWith(ctx context.Context, eng Engine, job Job, up Uploader, opts Options) (*Outcome, error) {
	f, err := Fetch(ctx, eng, job)
	if err != nil {
		return nil, err
	}
	return f.Store(ctx, up, opts)
}

// Fetched is a job whose page has been captured and whose objects are not
// yet written: what Fetch returns and Store finishes. Nothing more is asked
// of the page's host once it exists, so a crawl can let the host's next
// capture start while this one's objects are written.
type Fetched struct {
	Job    Job
	Result *Result
}

// Fetch checks the job and captures its page with eng: the first half of
// RunWith. Its errors are RunWith's before anything is written (a bad job,
// an engine that could not attempt the capture).
func Fetch(ctx context.Context, eng Engine, job Job) (*Fetched, error) {
	if err := job.Check(); err != nil {
		return nil, err
	}
	res, err := eng.Capture(ctx, job.URL)
	if err != nil {
		return nil, err
	}
	return &Fetched{Job: job, Result: res}, nil
}

// Store writes a fetched job's WACZ, links file and manifest through up:
// the second half of RunWith, with its outcome and errors. The uploads
// outlive ctx's end only as far as up lets them.
func (f *Fetched) Store(ctx context.Context, up Uploader, opts Options) (*Outcome, error) {
	job, res := f.Job, f.Result
	res.Capture.Software = opts.Software
	out := &Outcome{Job: job, Result: res, Failure: res.Failure}
	var (
		stored  []StoredPayload
		written bool // the manifest, and with it the archive, is written
	)
	if opts.Turn != nil {
		defer func() { opts.Turn.finish(written && out.Failure == res.Failure) }()
	}
	// The captures whose pending payloads this one refers to.
	var used map[*Turn]bool
	if opts.Payloads != nil && job.CorrelationID != "" && out.Failure == nil {
		idx := opts.Payloads
		if opts.After != nil {
			<-opts.After.asked
			used = map[*Turn]bool{}
			idx = &withPending{Payloads: idx, pending: opts.After.pending, used: used}
		}
		// Past the capture's own context, as the uploads are: a capture
		// that was made is written whole, sharing what it can.
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), payloadsTimeout)
		var err error
		stored, out.Dedup, err = dedup(qctx, idx, job.CorrelationID, job.WACZName(), &res.Capture)
		cancel()
		if err != nil {
			// Every payload is stored, and none is offered: a revisit
			// must never point at a record nobody knows was written.
			out.Dedup = DedupStats{Err: "asking the crawl's payload index: " + err.Error()}
			for i := range res.Capture.Exchanges {
				res.Capture.Exchanges[i].Revisit = nil
			}
			stored = nil
			clear(used)
		}
	}
	if opts.Turn != nil {
		opts.Turn.decided(opts.After, stored)
	}
	step := ""
	put := func(name, ct string, body []byte) (string, error) {
		loc, err := up.Put(ctx, name, ct, body)
		o := Object{Name: name, ContentType: ct, Body: body}
		if err == nil {
			o.Location = loc
		}
		out.Objects = append(out.Objects, o)
		return loc, err
	}
	var archive bytes.Buffer
	if out.Failure == nil {
		sum, err := wacz.Write(&archive, res.Capture)
		if err != nil {
			out.Failure = &Failure{Kind: FailInternal, URL: res.URL, Message: fmt.Sprintf("writing the WACZ: %v", err)}
			step = "package-wacz"
		} else {
			out.Summary = &sum
		}
	}
	if out.Failure == nil {
		// The WACZ and the links file go up together (neither names the
		// other); the manifest, which names both, after them.
		var (
			links    []byte
			linksErr error
		)
		if !opts.NoLinks {
			links, linksErr = LinksFile(job, res)
		}
		var (
			waczObj, linksObj = Object{Name: job.WACZName(), ContentType: ContentTypeWACZ, Body: archive.Bytes()}, Object{Name: job.LinksName(), ContentType: ContentTypeJSON, Body: links}
			waczErr, putErr   error
			wg                sync.WaitGroup
		)
		if !opts.NoLinks && linksErr == nil {
			wg.Go(func() { linksObj.Location, putErr = up.Put(ctx, linksObj.Name, linksObj.ContentType, linksObj.Body) })
		}
		waczObj.Location, waczErr = up.Put(ctx, waczObj.Name, waczObj.ContentType, waczObj.Body)
		wg.Wait()
		out.Objects = append(out.Objects, waczObj)
		if !opts.NoLinks && linksErr == nil {
			out.Objects = append(out.Objects, linksObj)
		}
		switch {
		case waczErr != nil:
			out.Failure, step = sinkFailure(job.WACZName(), waczErr), "upload-wacz"
		case linksErr != nil || putErr != nil:
			out.Artifacts.WACZ = waczObj.Location
			out.Failure, step = sinkFailure(job.LinksName(), errors.Join(linksErr, putErr)), "write-formats"
		default:
			out.Artifacts.WACZ, out.Artifacts.Links = waczObj.Location, linksObj.Location
		}
	}
	in := ManifestInput{Job: job, Result: res, Artifacts: out.Artifacts, Summary: out.Summary}
	if out.Failure != res.Failure {
		in.Failure, in.Step = out.Failure, step
	}
	m, err := ManifestFile(in)
	if err != nil {
		return out, fmt.Errorf("capture: rendering the manifest of %s: %w", job.TaskID, err)
	}
	if out.Failure == nil {
		_, _, out.Complete = Completeness(res, out.Summary)
	}
	// A capture referring to payloads still being written counts only
	// once they are.
	if err := waitFor(used); err != nil {
		return out, err
	}
	loc, err := put(job.ManifestName(), ContentTypeJSON, m)
	if err != nil {
		return out, fmt.Errorf("capture: uploading %s: %w", job.ManifestName(), err)
	}
	out.ManifestLocation, written = loc, true
	if len(stored) > 0 && out.OK() {
		// Past the capture's own context, as the uploads are: the archive
		// exists now.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), payloadsTimeout)
		if err := opts.Payloads.RememberPayloads(rctx, job.CorrelationID, stored); err != nil {
			out.Dedup.Err = "adding to the crawl's payload index: " + err.Error()
		}
		cancel()
	}
	return out, nil
}

func sinkFailure(name string, err error) *Failure {
	msg := fmt.Sprintf("uploading %s failed: %v", name, err)
	if errors.Is(err, context.Canceled) {
		msg = fmt.Sprintf("uploading %s was cancelled", name)
	}
	return &Failure{Kind: FailArtifactSink, Message: msg}
}
