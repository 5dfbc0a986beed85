package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/chromedp/chromedp"
)

// Behaviors is what the browser engine did to a page once it had loaded,
// and what that added to the capture. It is written into the page's line of
// pages/pages.jsonl as "behaviors".
//
// Nothing is clicked and no form is touched: the behaviours only scroll
// and ask for URLs the page already names.
type Behaviors struct {
	// Ran names the behaviours that ran, in order: "scroll", "fetch".
	Ran    []string       `json:"ran"`
	Scroll ScrollReport   `json:"scroll"`
	Fetch  FetchReport    `json:"fetch"`
	Added  int            `json:"added"` // responses recorded while they ran
	Millis int64          `json:"ms"`    // how long they took
	Limits BehaviorLimits `json:"limits"`
}

// ScrollReport is the scroll behaviour: down one viewport at a time; at the
// bottom, wait for the network to go quiet and see whether the page grew
// (an infinite feed, a "load more" on scroll); stop when it did not.
type ScrollReport struct {
	Steps int `json:"steps"` // viewports scrolled
	Grew  int `json:"grew"`  // times the page grew at its bottom
	// HeightStart and HeightEnd are the document's scroll height before
	// and after, in CSS pixels.
	HeightStart int `json:"heightStart"`
	HeightEnd   int `json:"heightEnd"`
	// Stopped says why it stopped: "stable" (reached the bottom and the
	// page stopped growing), "steps" or "time" (a budget ran out), or
	// "error".
	Stopped string `json:"stopped"`
}

// FetchReport is the fetch behaviour: the URLs the page names but a
// browser loads only on demand — every srcset candidate of img and picture
// sources and each picture's fallback img, lazy-loading attributes (data-src, data-srcset, data-lazy-src,
// data-original), and media sources, posters and tracks whatever their
// preload — asked for from the page (so they are recorded as the page's
// own requests), those the page had not requested yet.
type FetchReport struct {
	Srcset int `json:"srcset"` // srcset candidates asked for
	Lazy   int `json:"lazy"`   // lazy-attribute URLs asked for
	Media  int `json:"media"`  // media URLs asked for
	Failed int `json:"failed"` // of those, requests that failed
	// Skipped counts named URLs over MaxBehaviorFetches.
	Skipped int `json:"skipped,omitempty"`
}

// BehaviorLimits are the budgets the behaviours ran under.
type BehaviorLimits struct {
	Steps  int   `json:"steps"`
	Millis int64 `json:"ms"`
}

// MaxBehaviorFetches bounds the URLs the fetch behaviour asks for per page.
const MaxBehaviorFetches = 300

// stepJS scrolls one viewport down and says where the page is.
const stepJS = `(() => {
	const height = () => Math.max(document.documentElement ? document.documentElement.scrollHeight : 0,
		document.body ? document.body.scrollHeight : 0);
	scrollTo(0, scrollY + innerHeight);
	const h = height();
	return {y: Math.round(scrollY), h: h, bottom: scrollY + innerHeight >= h - 2};
})()`

const heightJS = `Math.max(document.documentElement ? document.documentElement.scrollHeight : 0,
	document.body ? document.body.scrollHeight : 0)`

// collectJS lists the URLs the fetch behaviour asks for, by kind, resolved
// against the document, http(s) only.
const collectJS = `(() => {
	const abs = u => {
		try { const x = new URL(u, document.baseURI); return /^https?:$/.test(x.protocol) ? x.href : ''; } catch (e) { return ''; }
	};
	const candidates = s => (s || '').split(',').map(p => p.trim().split(/\s+/)[0]).filter(Boolean);
	const out = {srcset: [], lazy: [], media: []};
	const add = (kind, u) => { const a = abs(u); if (a) out[kind].push(a); };
	for (const el of document.querySelectorAll('img[srcset], source[srcset]')) {
		for (const u of candidates(el.getAttribute('srcset'))) add('srcset', u);
	}
	// A <picture>'s fallback, which a browser that matched a source skips.
	for (const el of document.querySelectorAll('picture img[src]')) add('srcset', el.getAttribute('src'));
	for (const el of document.querySelectorAll('[data-src], [data-lazy-src], [data-original], [data-srcset]')) {
		for (const name of ['data-src', 'data-lazy-src', 'data-original']) {
			const v = el.getAttribute(name);
			if (v) add('lazy', v.trim());
		}
		for (const u of candidates(el.getAttribute('data-srcset'))) add('lazy', u);
	}
	for (const el of document.querySelectorAll('video[src], audio[src], video source[src], audio source[src], video track[src], audio track[src]')) {
		add('media', el.getAttribute('src'));
	}
	for (const el of document.querySelectorAll('video[poster]')) add('media', el.getAttribute('poster'));
	return out;
})()`

// fetchJS asks for urls from the page, six at a time, within ms; it
// returns how many failed. The bodies are not read by the page: the
// engine records them when their responses arrive.
const fetchJS = `(async (urls, ms) => {
	const ctl = new AbortController();
	const timer = setTimeout(() => ctl.abort(), ms);
	let next = 0, failed = 0;
	const worker = async () => {
		while (next < urls.length) {
			const u = urls[next++];
			try {
				const r = await fetch(u, {mode: 'no-cors', credentials: 'include', signal: ctl.signal});
				if (r.body) { try { await r.arrayBuffer(); } catch (e) {} }
			} catch (e) { failed++; }
		}
	};
	await Promise.all(Array.from({length: 6}, worker));
	clearTimeout(timer);
	return failed;
})(%s, %d)`

type scrollStep struct {
	Y      int  `json:"y"`
	H      int  `json:"h"`
	Bottom bool `json:"bottom"`
}

type collected struct {
	Srcset []string `json:"srcset"`
	Lazy   []string `json:"lazy"`
	Media  []string `json:"media"`
}

// behave runs the behaviours within budget and reports them.
func (c *browserCapture) behave(ctx context.Context, budget time.Duration) *Behaviors {
	cfg := c.b.cfg
	start := time.Now()
	end := start.Add(budget)
	b := &Behaviors{Ran: []string{"scroll", "fetch"}, Limits: BehaviorLimits{Steps: cfg.ScrollMaxSteps, Millis: budget.Milliseconds()}}
	before := c.recordedCount()
	bctx, cancel := context.WithDeadline(ctx, end.Add(2*time.Second))
	defer cancel()

	height := func() (int, error) {
		return chromedp.Run(bctx, chromedp.Evaluate[int](heightJS))
	}
	h, err := height()
	if err != nil {
		b.Scroll.Stopped = "error"
		return b
	}
	b.Scroll.HeightStart = h
	sleep := func(d time.Duration) bool {
		select {
		case <-bctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	for {
		if time.Now().After(end) {
			b.Scroll.Stopped = "time"
			break
		}
		if b.Scroll.Steps >= cfg.ScrollMaxSteps {
			b.Scroll.Stopped = "steps"
			break
		}
		scrolled := time.Now()
		st, err := chromedp.Run(bctx, chromedp.Evaluate[scrollStep](stepJS))
		if err != nil {
			b.Scroll.Stopped = "error"
			break
		}
		b.Scroll.Steps++
		if !st.Bottom {
			if !sleep(100 * time.Millisecond) {
				b.Scroll.Stopped = "time"
				break
			}
			continue
		}
		// At the bottom: let scroll handlers start their requests, wait
		// for the network to go quiet (as long as the site takes, within
		// the budget), then watch the height a little longer. A request
		// that starts while the height is watched (a debounced handler, a
		// busy page) keeps the watch open until a second after the
		// network is quiet again.
		if !sleep(150 * time.Millisecond) {
			b.Scroll.Stopped = "time"
			break
		}
		c.waitIdle(bctx, 300*time.Millisecond, min(5*time.Second, time.Until(end)))
		grew := false
		// The watch never outlasts the budget, nor five seconds (a page
		// that polls without growing would otherwise hold it open).
		limit := time.Now().Add(min(5*time.Second, max(0, time.Until(end))))
		for wait := time.Now().Add(min(time.Second, max(0, time.Until(end)))); ; {
			now, err := height()
			if err != nil {
				break
			}
			if now > st.H {
				grew = true
				break
			}
			if busy, last := c.activity(); last.After(scrolled) {
				if busy {
					last = time.Now()
				}
				if until := last.Add(time.Second); until.After(wait) {
					wait = until
				}
				if wait.After(limit) {
					wait = limit
				}
			}
			if time.Now().After(wait) || !sleep(100*time.Millisecond) {
				break
			}
		}
		if !grew {
			if time.Now().After(end) {
				b.Scroll.Stopped = "time"
			} else {
				b.Scroll.Stopped = "stable"
			}
			break
		}
		b.Scroll.Grew++
	}
	b.Scroll.HeightEnd, _ = height()

	// Fetch what the page names but has not asked for, with what is left
	// of the budget (at least two seconds).
	if found, err := chromedp.Run(bctx, chromedp.Evaluate[collected](collectJS)); err == nil {
		seen := c.requestedURLs()
		var urls []string
		take := func(list []string, n *int) {
			for _, u := range list {
				if seen[u] {
					continue
				}
				seen[u] = true
				if len(urls) >= MaxBehaviorFetches {
					b.Fetch.Skipped++
					continue
				}
				if _, err := url.Parse(u); err != nil {
					continue
				}
				urls = append(urls, u)
				*n++
			}
		}
		take(found.Srcset, &b.Fetch.Srcset)
		take(found.Lazy, &b.Fetch.Lazy)
		take(found.Media, &b.Fetch.Media)
		if len(urls) > 0 {
			left := max(2*time.Second, time.Until(end))
			fctx, cancel := context.WithTimeout(ctx, left+time.Second)
			js := fmt.Sprintf(fetchJS, jsonString(urls), left.Milliseconds())
			if failed, err := chromedp.Run(fctx, chromedp.Evaluate[int](js, chromedp.EvalAwaitPromise)); err == nil {
				b.Fetch.Failed = failed
			}
			cancel()
		}
	}
	_, _ = chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`scrollTo(0, 0)`))
	c.waitIdle(ctx, cfg.IdleTime, min(cfg.SettleTimeout, max(time.Second, time.Until(end))))
	b.Added = c.recordedCount() - before
	b.Millis = time.Since(start).Milliseconds()
	return b
}

// recordedCount is how many exchanges the capture has recorded so far.
func (c *browserCapture) recordedCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.exchanges)
}

// requestedURLs is every URL the tab has asked for so far.
func (c *browserCapture) requestedURLs() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := make(map[string]bool, len(c.urls))
	for _, u := range c.urls {
		seen[u] = true
	}
	return seen
}

// jsonString is v as a JavaScript literal.
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "[]"
	}
	return string(b)
}
