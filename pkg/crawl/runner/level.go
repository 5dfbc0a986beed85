package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// levelRun is one level being run: its hosts with the pages still to take.
type levelRun struct {
	l     crawl.Level
	hosts []*hostRun
	kept  int // pages that already had a result
	log   *slog.Logger

	// outcomes are the level's page results by URL, as they are kept (and
	// those an earlier run kept): the level is admitted from them.
	mu       sync.Mutex
	outcomes map[string]crawl.PageOutcome
	// early registers the archives of captured pages while the level
	// runs (nil when the ledger does not, or AdmitEvery is negative).
	early *earlyAdmissions
}

// earlyAdmissions hands a level's captured pages to the ledger while the
// level runs, in batches: the first capture that lands arms a timer of
// every, and when it fires every capture landed since is registered in one
// call. A call that fails is only logged (the level's admission registers
// those archives when the level ends).
type earlyAdmissions struct {
	ctx      context.Context
	admitter CapturedAdmitter
	every    time.Duration
	crawlID  string
	depth    int
	log      *slog.Logger

	mu      sync.Mutex
	waiting []crawl.PageOutcome
	timer   *time.Timer // armed while captures wait
	stopped bool
	running sync.WaitGroup
}

// add queues a page's outcome for registration, when it has a capture to
// register.
func (e *earlyAdmissions) add(po crawl.PageOutcome) {
	if e == nil || po.Manifest == nil || po.Status != crawl.StatusCaptured {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return
	}
	e.waiting = append(e.waiting, po)
	if e.timer == nil {
		e.running.Add(1)
		e.timer = time.AfterFunc(e.every, e.flush)
	}
}

// flush registers what waits.
func (e *earlyAdmissions) flush() {
	defer e.running.Done()
	e.mu.Lock()
	pages := e.waiting
	e.waiting, e.timer = nil, nil
	e.mu.Unlock()
	if len(pages) == 0 || e.ctx.Err() != nil {
		return
	}
	began := time.Now()
	n, err := e.admitter.AdmitCaptured(e.ctx, e.crawlID, e.depth, pages)
	if err != nil {
		if e.ctx.Err() == nil {
			e.log.Warn("crawl runner: could not register captures before the level's end; the level's admission registers them", "pages", len(pages), "error", err.Error())
		}
		return
	}
	e.log.Debug("crawl runner: captures registered before the level's end", "pages", len(pages), "registered", n, "tookMs", time.Since(began).Milliseconds())
}

// stop ends the early registrations: a timer not yet fired is cancelled
// (the level's admission takes its pages), one running is waited for.
// It may be called more than once, and on nil.
func (e *earlyAdmissions) stop() {
	if e == nil {
		return
	}
	e.mu.Lock()
	e.stopped = true
	if e.timer != nil && e.timer.Stop() {
		e.timer, e.waiting = nil, nil
		e.running.Done()
	}
	e.mu.Unlock()
	e.running.Wait()
}

// hostRun is one host of a level: its pages without a result, in frontier
// order, and when the crawl last finished a capture there.
type hostRun struct {
	host   string
	scheme string
	pages  []crawl.FrontierPage
	last   time.Time
	// source is why the host's pace is what it is: the delay's source,
	// or backoff once a 429/503 raised it.
	source string
	// crawlDelay is robots.txt's Crawl-delay (capped; 0 when none), which
	// the host's lease makes every party keep.
	crawlDelay time.Duration
}

// prepare reads what was kept of the level, recovers the captures a
// stopped runner left in flight when the capturer can, and groups the
// pages still without a result by host.
func (r *Runner) prepare(ctx context.Context, l crawl.Level, log *slog.Logger) (*levelRun, error) {
	kept, err := r.store.RunnerResults(ctx, l.CrawlID, l.Depth)
	if err != nil {
		log.Error("crawl runner: could not read the level's kept results; it will be tried again", "error", err.Error())
		return nil, err
	}
	done := make(map[string]bool, len(kept))
	lastSeen := map[string]time.Time{}
	see := func(host string, t *time.Time) {
		if t != nil && t.After(lastSeen[host]) {
			lastSeen[host] = t.UTC()
		}
	}
	lv := &levelRun{l: l, log: log, outcomes: make(map[string]crawl.PageOutcome, len(l.Frontier))}
	rec, canRecover := r.capturer.(Recoverer)
	for _, k := range kept {
		see(k.Host, k.FinishedAt)
		see(k.Host, k.SubmittedAt) // a capture cut off in flight still reached the host
		if k.Result != nil {
			var pr crawl.PageReport
			if err := json.Unmarshal(k.Result, &pr); err != nil {
				return nil, fmt.Errorf("the kept result of %s does not read back: %w", k.URL, err)
			}
			// Kept by an earlier run: its manifest and links are read from
			// the bucket when the level is admitted.
			lv.outcomes[k.URL] = crawl.PageOutcome{PageReport: pr}
			done[k.URL] = true
			continue
		}
		if !canRecover || k.TaskID == nil || *k.TaskID == "" || k.SubmittedAt == nil {
			continue
		}
		out, found, err := rec.Recover(ctx, *k.TaskID, l.CrawlID, k.URL)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			log.Warn("crawl runner: could not look for a capture left in flight; it will be made again", "url", k.URL, "taskId", *k.TaskID, "error", err.Error())
			continue
		}
		if !found || out.HTTPStatus == http.StatusTooManyRequests || out.HTTPStatus == http.StatusServiceUnavailable {
			continue // made again (a refusal is retried the usual way)
		}
		sub, fin := recoveredTimes(*k.SubmittedAt, out)
		see(k.Host, &fin)
		if err := r.keep(ctx, lv, k.Host, pageOutcome(k.URL, l.CrawlID, out, sub, fin), 1, 0, 0); err != nil {
			return nil, err
		}
		done[k.URL] = true
		log.Info("crawl runner: recovered a capture a stopped runner had made", "url", k.URL, "taskId", *k.TaskID)
	}

	byHost := map[string]*hostRun{}
	seen := map[string]bool{}
	for _, p := range l.Frontier {
		if seen[p.URL] {
			continue
		}
		seen[p.URL] = true
		if p.LastFinishedAt != nil {
			see(p.Host, p.LastFinishedAt)
		}
		if done[p.URL] {
			lv.kept++
			continue
		}
		h := byHost[p.Host]
		if h == nil {
			h = &hostRun{host: p.Host, scheme: "https"}
			if u, err := url.Parse(p.URL); err == nil && u.Scheme != "" {
				h.scheme = u.Scheme
			}
			byHost[p.Host] = h
			lv.hosts = append(lv.hosts, h)
		}
		h.pages = append(h.pages, p)
	}
	for _, h := range lv.hosts {
		h.last = lastSeen[h.host]
	}
	return lv, nil
}

// capture runs the level's hosts, at most hostParallelism at once (and no
// more than the capturer has slots). The first error of a host (other
// than ctx ending) stops the others.
func (r *Runner) capture(ctx context.Context, lv *levelRun) error {
	slots := max(lv.l.HostParallelism, 1)
	if s, ok := r.capturer.(Slotted); ok && s.Slots() > 0 {
		slots = min(slots, s.Slots())
	}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		work     = make(chan *hostRun)
	)
	for range min(slots, len(lv.hosts)) {
		wg.Go(func() {
			for h := range work {
				if err := r.runHost(hctx, lv, h); err != nil {
					mu.Lock()
					if firstErr == nil && hctx.Err() == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
				}
			}
		})
	}
feed:
	for _, h := range lv.hosts {
		select {
		case work <- h:
		case <-hctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return firstErr
}

// runHost takes one host's pages, one at a time.
func (r *Runner) runHost(ctx context.Context, lv *levelRun, h *hostRun) error {
	l := lv.l
	robots := fetchRobots(ctx, r.cfg.RobotsClient, h.scheme, h.host, r.cfg.UserAgent, r.agent())
	if ctx.Err() != nil {
		return ctx.Err()
	}
	delay, source := EffectiveDelay(time.Duration(l.PerHostDelayMs)*time.Millisecond, robots, r.cfg.CrawlDelayMax)
	rec := ledger.RunnerHost{
		CrawlID: l.CrawlID, Depth: l.Depth, Host: h.host, Robots: robots.Outcome,
		DelayMs: int(delay / time.Millisecond), DelaySource: source,
	}
	if robots.Status != 0 {
		rec.RobotsStatus = &robots.Status
	}
	if robots.Error != "" {
		rec.RobotsError = &robots.Error
	}
	if robots.HasDelay {
		ms := int(min(ceilMs(robots.CrawlDelay)/time.Millisecond, 1<<31-1))
		rec.CrawlDelayMs = &ms
	}
	if err := r.store.RunnerSaveHost(ctx, rec); err != nil {
		return err
	}
	lv.log.Info("crawl runner: host paced", "host", h.host, "pages", len(h.pages), "robots", robots.Outcome,
		"delayMs", rec.DelayMs, "delaySource", source)

	pace := delay
	h.source = source
	if robots.HasDelay {
		h.crawlDelay = min(ceilMs(robots.CrawlDelay), ceilMs(r.cfg.CrawlDelayMax))
	}
	// A staged capturer's objects are written while the host's next page
	// is captured: at most storesPerHost captures of the host are being
	// written (at once when the capturer's are Ordered, one at a time
	// otherwise), and their results are kept in the pages' order.
	// The writes run on storesPerHost goroutines of the host's own, which
	// keep the stacks the S3 client grew them to (a goroutine per write
	// grew a new one each time: ≈3% of a crawl's CPU at delay 0).
	jobs := make(chan func(), storesPerHost)
	var writers sync.WaitGroup
	for range storesPerHost {
		writers.Go(func() {
			for job := range jobs {
				job()
			}
		})
	}
	defer func() {
		close(jobs)
		writers.Wait()
	}()
	var writes []*write
	defer func() {
		for _, w := range writes {
			<-w.done
		}
	}()
	keepCaptured := func(c captured) error {
		return r.keep(ctx, lv, h.host, c.outcome(), c.attempts, c.backoff, c.pace)
	}
	settle := func() error {
		w := writes[0]
		<-w.done
		writes = writes[1:]
		if w.err != nil || !w.redo {
			return w.err
		}
		// The capture could not be written: the page is captured again,
		// written before the next one starts.
		c, err := r.capturePage(ctx, lv, h, w.page, &pace, false)
		if err != nil {
			return err
		}
		if err := r.noteBackoff(ctx, &rec, c.backoff); err != nil {
			return err
		}
		return keepCaptured(c)
	}
	for _, p := range h.pages {
		if u, err := url.Parse(p.URL); err == nil && !robots.Allowed(u) {
			pr := crawl.PageOutcome{PageReport: crawl.PageReport{URL: p.URL, Status: crawl.StatusSkipped, SkipReason: crawl.SkipRobots}}
			if err := r.keep(ctx, lv, h.host, pr, 0, 0, pace); err != nil {
				return err
			}
			continue
		}
		c, err := r.capturePage(ctx, lv, h, p, &pace, true)
		if err != nil {
			return err
		}
		if err := r.noteBackoff(ctx, &rec, c.backoff); err != nil {
			return err
		}
		if c.fetched == nil {
			if err := keepCaptured(c); err != nil {
				return err
			}
			continue
		}
		for len(writes) >= storesPerHost {
			if err := settle(); err != nil {
				return err
			}
		}
		w := &write{page: p, fetched: c.fetched, stored: make(chan struct{}), done: make(chan struct{})}
		var prev *write
		if len(writes) > 0 {
			prev = writes[len(writes)-1]
		}
		writes = append(writes, w)
		// Never blocks: at most storesPerHost writes are pending, each
		// on a writer or in the queue.
		jobs <- func() {
			defer close(w.done)
			// A host's pages share their files as when they were written
			// one after the other: an Ordered capture keeps that order
			// itself while it is written beside the one before; any other
			// is written once the one before is.
			var (
				out CaptureOutcome
				err error
			)
			if o, ok := c.fetched.(Ordered); ok {
				var before Fetched
				if prev != nil {
					before = prev.fetched
				}
				out, err = o.StoreAfter(ctx, before)
			} else {
				if prev != nil {
					<-prev.stored
				}
				out, err = c.fetched.Store(ctx)
			}
			close(w.stored)
			if prev != nil {
				<-prev.done
			}
			if err != nil || (out.Transient && !c.out.Transient) {
				reason := out.Failure
				if err != nil {
					reason = err.Error()
				}
				lv.log.Warn("crawl runner: a capture could not be written; the page will be captured again", "url", p.URL, "error", text(reason))
				w.redo = true
				return
			}
			c.out = out
			w.err = keepCaptured(c)
		}
	}
	for len(writes) > 0 {
		if err := settle(); err != nil {
			return err
		}
	}
	return nil
}

// storesPerHost bounds the captures of one host waiting to be written or
// being written (each holds its page's records in memory until it is).
const storesPerHost = 3

// write is a staged capture of a page being written: stored once its
// objects are (or could not be), done once its result is kept.
type write struct {
	page         crawl.FrontierPage
	fetched      Fetched
	stored, done chan struct{}
	// err is keeping the result's; redo says the capture could not be
	// written and the page is to be captured again.
	err  error
	redo bool
}

// noteBackoff records a back-off the host's pages waited.
func (r *Runner) noteBackoff(ctx context.Context, rec *ledger.RunnerHost, backoff time.Duration) error {
	if backoff <= 0 {
		return nil
	}
	rec.Backoffs++
	rec.BackoffMs = max(rec.BackoffMs, int(backoff/time.Millisecond))
	return r.store.RunnerSaveHost(ctx, *rec)
}

// captured is a page's last capture: its outcome, or (staged) what its
// host answered with the objects still to write.
type captured struct {
	url, crawlID        string
	out                 CaptureOutcome
	fetched             Fetched // nil when out is the written capture's
	submitted, finished time.Time
	attempts            int
	backoff, pace       time.Duration
}

func (c captured) outcome() crawl.PageOutcome {
	return pageOutcome(c.url, c.crawlID, c.out, c.submitted, c.finished)
}

// capturePage captures one page with the host's pacing: it waits until the
// delay since the host's last capture ended has passed, then for a place of
// the organization's capture capacity (Config.Capacity), captures, and on a
// 429 or 503 backs the host off (Retry-After, capped) and tries once more;
// a transient failure is tried once more after the delay. A backend that
// cannot be used is waited for (not counted as an attempt) until
// GiveUpAfter. It returns the page's last capture with the attempts made
// and the back-off waited before the retry (0 when none). With staged
// (and a Staged capturer) the host's turn ends when the page is fetched:
// the last capture comes back unwritten (captured.fetched), an earlier
// attempt's is written before the retry.
func (r *Runner) capturePage(ctx context.Context, lv *levelRun, h *hostRun, p crawl.FrontierPage, pace *time.Duration, staged bool) (captured, error) {
	l := lv.l
	var (
		wait      = *pace
		attempts  int
		backoff   time.Duration
		unusable  time.Time
		retryStep = time.Second
	)
	waitSource := h.source
	stager, _ := r.capturer.(Staged)
	if !staged {
		stager = nil
	}
	for {
		if !h.last.IsZero() {
			if err := sleepUntil(ctx, r.cfg.Now, h.last.Add(wait)); err != nil {
				return captured{}, err
			}
		} else if ctx.Err() != nil {
			return captured{}, ctx.Err()
		}
		release := func() {}
		if r.cfg.Capacity != nil {
			var err error
			if release, err = r.cfg.Capacity.Acquire(ctx, l.OrgID); err != nil {
				return captured{}, err
			}
		}
		held, err := r.holdHost(ctx, l, h, p.URL, wait, waitSource)
		if err != nil {
			release()
			return captured{}, err
		}
		taskID := uuid.NewString()
		submitted := r.cfg.Now()
		// Recorded only while the crawl runs: a crawl closed meanwhile (its
		// last result may still be being written) captures nothing more.
		running, err := r.store.RunnerBegin(ctx, l.CrawlID, l.Depth, p.URL, h.host, taskID, submitted)
		if err == nil && !running {
			err = errClosed
		}
		if err != nil {
			r.releaseHost(ctx, lv, held, *pace, h.source)
			release()
			return captured{}, err
		}
		req := CaptureRequest{URL: p.URL, CorrelationID: l.CrawlID, TaskID: taskID, Formats: l.CaptureFormats, Signing: l.Signing}
		var (
			out     CaptureOutcome
			fetched Fetched
		)
		if stager != nil {
			if fetched, err = stager.Fetch(ctx, req); err == nil {
				out = fetched.Host()
			}
		} else {
			out, err = r.capturer.Capture(ctx, req)
		}
		finished := r.cfg.Now()
		if finished.Before(submitted) {
			finished = submitted
		}
		h.last = finished
		// The next party on the host, of any crawl, keeps this crawl's
		// pace after this capture (a back-off's, after a 429/503).
		hold, holdSource := *pace, h.source
		if err == nil && (out.HTTPStatus == http.StatusTooManyRequests || out.HTTPStatus == http.StatusServiceUnavailable) {
			if b := Backoff(*pace, out.RetryAfter, r.cfg.BackoffMax); b > hold {
				hold, holdSource = b, ledger.HostSourceBackoff
			}
		}
		r.releaseHost(ctx, lv, held, hold, holdSource)
		release()
		if err != nil {
			if ctx.Err() != nil {
				return captured{}, ctx.Err()
			}
			if unusable.IsZero() {
				unusable = submitted
			}
			if down := finished.Sub(unusable); down >= r.cfg.GiveUpAfter {
				return captured{}, &backendError{err: err, since: down}
			}
			lv.log.Warn("crawl runner: the capture backend could not be used; waiting", "url", p.URL, "error", err.Error(), "in", retryStep.String())
			wait, waitSource = max(*pace, retryStep), h.source
			retryStep = min(2*retryStep, 30*time.Second)
			continue
		}
		unusable, retryStep = time.Time{}, time.Second
		attempts++
		if out.HTTPStatus == http.StatusTooManyRequests || out.HTTPStatus == http.StatusServiceUnavailable {
			// The site asks us to slow down: keep the longer delay for the
			// rest of the host's pages in this level, and retry once.
			b := Backoff(*pace, out.RetryAfter, r.cfg.BackoffMax)
			if b > *pace {
				*pace, h.source = b, ledger.HostSourceBackoff
			}
			if attempts == 1 {
				r.storeAttempt(ctx, lv, p.URL, fetched)
				backoff, wait, waitSource = b, b, ledger.HostSourceBackoff
				lv.log.Info("crawl runner: the host answered "+http.StatusText(out.HTTPStatus)+"; backing off and retrying once",
					"url", p.URL, "backoffMs", b.Milliseconds())
				continue
			}
		} else if attempts == 1 && out.Transient {
			r.storeAttempt(ctx, lv, p.URL, fetched)
			wait, waitSource = *pace, h.source
			lv.log.Info("crawl runner: transient capture failure; retrying once after the delay", "url", p.URL, "failure", text(out.Failure))
			continue
		}
		return captured{url: p.URL, crawlID: l.CrawlID, out: out, fetched: fetched, submitted: submitted, finished: finished,
			attempts: attempts, backoff: backoff, pace: *pace}, nil
	}
}

// storeAttempt writes a staged capture that is to be made again (a
// refusal, a transient failure), as an unstaged one is written: its
// manifest records the attempt.
func (r *Runner) storeAttempt(ctx context.Context, lv *levelRun, url string, f Fetched) {
	if f == nil {
		return
	}
	if _, err := f.Store(ctx); err != nil {
		lv.log.Warn("crawl runner: could not write a capture that will be made again", "url", url, "error", text(err.Error()))
	}
}

// holdHost takes the host's lease for one capture (nil without
// Config.Hosts): it waits until no other capture of the host runs (beyond
// HostAtOnce) and the largest delay any party keeps has passed since the
// host's last capture, by any crawl or direct capture, ended.
func (r *Runner) holdHost(ctx context.Context, l crawl.Level, h *hostRun, url string, wait time.Duration, source string) (*ledger.HeldHost, error) {
	if r.cfg.Hosts == nil {
		return nil, nil
	}
	if r.cfg.HostDelay > wait {
		wait, source = r.cfg.HostDelay, ledger.HostSourceHost
	}
	held, err := ledger.AcquireHost(ctx, r.cfg.Hosts, ledger.HostLeaseRequest{
		Host: h.host, Kind: ledger.HostKindCrawl, Org: l.OrgID, CrawlID: l.CrawlID, URL: url,
		Delay: wait, Source: source, AtOnce: r.cfg.HostAtOnce, TTL: r.cfg.HostLeaseTTL,
		RobotsRead: true, CrawlDelay: h.crawlDelay,
	})
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return held, err
}

// releaseHost ends the capture's lease; the next party keeps at least hold
// after it.
func (r *Runner) releaseHost(ctx context.Context, lv *levelRun, held *ledger.HeldHost, hold time.Duration, source string) {
	if held == nil {
		return
	}
	if r.cfg.HostDelay > hold {
		hold, source = r.cfg.HostDelay, ledger.HostSourceHost
	}
	if err := held.Release(ctx, hold, source); err != nil {
		lv.log.Warn("crawl runner: could not release the host's lease; it expires", "error", err.Error())
	}
}

// keep stores one page's result, and holds it (with what the capturer
// holds of the capture) for the level's admission; errClosed when the crawl
// was closed in the meantime (nothing is kept then).
func (r *Runner) keep(ctx context.Context, lv *levelRun, host string, po crawl.PageOutcome, attempts int, backoff, delay time.Duration) error {
	l, pr := lv.l, po.PageReport
	data, err := json.Marshal(pr)
	if err != nil {
		return err
	}
	// A result whose capture ended is kept even when the runner is being
	// stopped: the capture happened and must not be made again.
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	running, err := r.store.RunnerSave(kctx, l.CrawlID, ledger.RunnerPageResult{
		URL: pr.URL, Host: host, Depth: l.Depth, TaskID: pr.TaskID, SubmittedAt: pr.SubmittedAt, FinishedAt: pr.FinishedAt,
		Result: data, Attempts: attempts, BackoffMs: int(backoff / time.Millisecond),
	}, r.cfg.Now())
	if err != nil {
		return err
	}
	if !running {
		r.admitInFlight(kctx, lv, po)
		return errClosed
	}
	lv.mu.Lock()
	lv.outcomes[pr.URL] = po
	lv.mu.Unlock()
	lv.early.add(po)
	if r.cfg.OnPage != nil {
		r.cfg.OnPage(PageEvent{CrawlID: l.CrawlID, Depth: l.Depth, Host: host, Result: pr, Attempts: attempts, Delay: delay})
	}
	return nil
}

// admitInFlight registers the archive of a capture that was in flight when
// its crawl was closed (stopped, failed): its result can no longer be
// kept, but it began before the close, so the ledger keeps it
// (crawl.Service.AdmitCaptured) and its WACZ is not left in the bucket
// outside the ledger. A failure is only logged.
func (r *Runner) admitInFlight(ctx context.Context, lv *levelRun, po crawl.PageOutcome) {
	a, ok := r.getLedger().(CapturedAdmitter)
	if !ok || po.Manifest == nil || po.Status != crawl.StatusCaptured {
		return
	}
	n, err := a.AdmitCaptured(ctx, lv.l.CrawlID, lv.l.Depth, []crawl.PageOutcome{po})
	switch {
	case err != nil:
		lv.log.Warn("crawl runner: could not register a capture that was in flight when the crawl was closed", "url", po.URL, "error", err.Error())
	case n > 0:
		lv.log.Info("crawl runner: registered a capture that was in flight when the crawl was closed", "url", po.URL, "taskId", po.TaskID)
	}
}
