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
		sub := k.SubmittedAt.UTC()
		fin := out.FinishedAt.UTC().Truncate(time.Microsecond)
		if fin.Before(sub) {
			fin = sub
		}
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
	for _, p := range h.pages {
		if u, err := url.Parse(p.URL); err == nil && !robots.Allowed(u) {
			pr := crawl.PageOutcome{PageReport: crawl.PageReport{URL: p.URL, Status: crawl.StatusSkipped, SkipReason: crawl.SkipRobots}}
			if err := r.keep(ctx, lv, h.host, pr, 0, 0, pace); err != nil {
				return err
			}
			continue
		}
		pr, attempts, backoff, err := r.capturePage(ctx, lv, h, p, &pace)
		if err != nil {
			return err
		}
		if err := r.keep(ctx, lv, h.host, pr, attempts, backoff, pace); err != nil {
			return err
		}
		if backoff > 0 {
			rec.Backoffs++
			rec.BackoffMs = max(rec.BackoffMs, int(backoff/time.Millisecond))
			if err := r.store.RunnerSaveHost(ctx, rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// capturePage captures one page with the host's pacing: it waits until the
// delay since the host's last capture ended has passed, then for a place of
// the organization's capture capacity (Config.Capacity), captures, and on a
// 429 or 503 backs the host off (Retry-After, capped) and tries once more;
// a transient failure is tried once more after the delay. A backend that
// cannot be used is waited for (not counted as an attempt) until
// GiveUpAfter. It returns the page's result, the attempts made and the
// back-off waited before the retry (0 when none).
func (r *Runner) capturePage(ctx context.Context, lv *levelRun, h *hostRun, p crawl.FrontierPage, pace *time.Duration) (crawl.PageOutcome, int, time.Duration, error) {
	l := lv.l
	var (
		wait      = *pace
		attempts  int
		backoff   time.Duration
		unusable  time.Time
		retryStep = time.Second
	)
	waitSource := h.source
	for {
		if !h.last.IsZero() {
			if err := sleepUntil(ctx, r.cfg.Now, h.last.Add(wait)); err != nil {
				return crawl.PageOutcome{}, 0, 0, err
			}
		} else if ctx.Err() != nil {
			return crawl.PageOutcome{}, 0, 0, ctx.Err()
		}
		release := func() {}
		if r.cfg.Capacity != nil {
			var err error
			if release, err = r.cfg.Capacity.Acquire(ctx, l.OrgID); err != nil {
				return crawl.PageOutcome{}, 0, 0, err
			}
		}
		held, err := r.holdHost(ctx, l, h, p.URL, wait, waitSource)
		if err != nil {
			release()
			return crawl.PageOutcome{}, 0, 0, err
		}
		taskID := uuid.NewString()
		submitted := r.cfg.Now()
		if err := r.store.RunnerBegin(ctx, l.CrawlID, l.Depth, p.URL, h.host, taskID, submitted); err != nil {
			r.releaseHost(ctx, lv, held, *pace, h.source)
			release()
			return crawl.PageOutcome{}, 0, 0, err
		}
		out, err := r.capturer.Capture(ctx, CaptureRequest{
			URL: p.URL, CorrelationID: l.CrawlID, TaskID: taskID, Formats: l.CaptureFormats, Signing: l.Signing,
		})
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
				return crawl.PageOutcome{}, 0, 0, ctx.Err()
			}
			if unusable.IsZero() {
				unusable = submitted
			}
			if down := finished.Sub(unusable); down >= r.cfg.GiveUpAfter {
				return crawl.PageOutcome{}, 0, 0, &backendError{err: err, since: down}
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
				backoff, wait, waitSource = b, b, ledger.HostSourceBackoff
				lv.log.Info("crawl runner: the host answered "+http.StatusText(out.HTTPStatus)+"; backing off and retrying once",
					"url", p.URL, "backoffMs", b.Milliseconds())
				continue
			}
		} else if attempts == 1 && out.Transient {
			wait, waitSource = *pace, h.source
			lv.log.Info("crawl runner: transient capture failure; retrying once after the delay", "url", p.URL, "failure", text(out.Failure))
			continue
		}
		return pageOutcome(p.URL, l.CrawlID, out, submitted, finished), attempts, backoff, nil
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
		return errClosed
	}
	lv.mu.Lock()
	lv.outcomes[pr.URL] = po
	lv.mu.Unlock()
	if r.cfg.OnPage != nil {
		r.cfg.OnPage(PageEvent{CrawlID: l.CrawlID, Depth: l.Depth, Host: host, Result: pr, Attempts: attempts, Delay: delay})
	}
	return nil
}
