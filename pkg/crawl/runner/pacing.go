package runner

import (
	"context"
	"math"
	"time"
)

// Where a host's delay came from (crawl_runner_hosts.delay_source).
const (
	// SourceSetting: the crawl's perHostDelayMs.
	SourceSetting = "setting"
	// SourceCrawlDelay: robots.txt's Crawl-delay, longer than the setting.
	SourceCrawlDelay = "crawl-delay"
	// SourceCap: a Crawl-delay longer than the runner's maximum, cut to it.
	SourceCap = "cap"
)

// Defaults of the runner's bounds.
const (
	// DefaultCrawlDelayMax caps a robots.txt Crawl-delay (a site asking
	// for an hour between pages would hold the crawl for days).
	DefaultCrawlDelayMax = 60 * time.Second
	// DefaultBackoffMax caps the wait after a 429 or 503 (Retry-After).
	DefaultBackoffMax = 120 * time.Second
)

// ceilMs rounds d up to a whole millisecond, so that the delay recorded in
// milliseconds is never longer than the one waited.
func ceilMs(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	if d > math.MaxInt64-time.Millisecond {
		return math.MaxInt64 / time.Millisecond * time.Millisecond
	}
	return (d + time.Millisecond - 1) / time.Millisecond * time.Millisecond
}

// EffectiveDelay is the delay between one capture's end and the next one's
// start on a host: the crawl's setting, raised to robots.txt's Crawl-delay
// when that is longer, but never past max (a site's value is never
// shortened below the setting; the cap only bounds how far a site can
// raise it). It returns the delay and its source.
func EffectiveDelay(setting time.Duration, r Robots, max time.Duration) (time.Duration, string) {
	setting = ceilMs(setting)
	if !r.HasDelay {
		return setting, SourceSetting
	}
	cd := ceilMs(r.CrawlDelay)
	switch {
	case cd <= setting:
		return setting, SourceSetting
	case cd > max && max > setting:
		return ceilMs(max), SourceCap
	case cd > max:
		return setting, SourceSetting
	}
	return cd, SourceCrawlDelay
}

// Backoff is the wait after a 429 or 503 before the page is tried again:
// the answer's Retry-After when it gave one, else twice the delay (at least
// a second); never shorter than the delay, never longer than max unless
// the delay itself is.
func Backoff(delay, retryAfter, max time.Duration) time.Duration {
	b := retryAfter
	if b <= 0 {
		b = 2 * delay
		if b < time.Second {
			b = time.Second
		}
	}
	if b > max {
		b = max
	}
	if b < delay {
		b = delay
	}
	return ceilMs(b)
}

// wallNow is the clock the runner reads: wall time, to the microsecond
// PostgreSQL keeps, so that a gap checked in the database is the gap
// waited here.
func wallNow() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// sleepUntil returns once the wall clock has reached t (at once when it
// has), or ctx's error when ctx ends first. It checks the wall clock again
// after every timer: the timers run on the monotonic clock, and the times
// recorded are wall times.
func sleepUntil(ctx context.Context, now func() time.Time, t time.Time) error {
	for {
		d := t.Sub(now())
		if d <= 0 {
			return ctx.Err()
		}
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
}
