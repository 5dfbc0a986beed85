package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/temoto/robotstxt"
)

// The robots.txt outcomes a host can have at a level (crawl_runner_hosts).
const (
	// RobotsFetched: a 2xx robots.txt was read; its rules for our group
	// (our product token, else *) apply.
	RobotsFetched = "fetched"
	// RobotsAbsent: any other status (404, 403, 500, …): no rules.
	RobotsAbsent = "absent"
	// RobotsUnreachable: no answer (refused, timed out, refused by the
	// address policy): no rules.
	RobotsUnreachable = "unreachable"
	// RobotsUnparsable: a 2xx body that could not be read: no rules.
	RobotsUnparsable = "unparsable"
)

// maxRobots is how much of a robots.txt is read (RFC 9309 §2.5 asks
// crawlers to parse at least 500 KiB).
const maxRobots = 500 << 10

// RobotsTimeout bounds one robots.txt fetch (the flow's value); the
// wiring gives Config.RobotsClient the same timeout.
const RobotsTimeout = 10 * time.Second

// Robots is what a host's robots.txt says to this runner.
type Robots struct {
	// Outcome is one of the Robots* constants.
	Outcome string
	// Status is the HTTP status of the answer (0 when none came).
	Status int
	// Error says why there was no answer, or why the body was not read.
	Error string
	// CrawlDelay is our group's Crawl-delay (HasDelay false when it has
	// none). A value too large to represent is math.MaxInt64.
	CrawlDelay time.Duration
	HasDelay   bool

	group *robotstxt.Group
}

// Allowed says whether our group may fetch u (its path and query are
// matched, RFC 9309 §2.2.2). No rules allow everything.
func (r Robots) Allowed(u *url.URL) bool {
	if r.group == nil {
		return true
	}
	target := u.EscapedPath()
	if target == "" {
		target = "/"
	}
	if u.RawQuery != "" {
		target += "?" + u.RawQuery
	}
	return r.group.Test(target)
}

// ParseRobots reads a robots.txt answer for the product token agent:
// a non-2xx status means no rules, as the Windmill flow reads it; a 2xx body is parsed
// after dropping the lines a lenient reader ignores (rules before any
// User-agent line, a Crawl-delay that is not a non-negative number), and
// our group is the most specific one naming agent, else *.
func ParseRobots(status int, body []byte, agent string) Robots {
	r := Robots{Status: status}
	if status < 200 || status > 299 {
		r.Outcome = RobotsAbsent
		return r
	}
	if len(body) > maxRobots {
		body = body[:maxRobots]
	}
	data, err := robotstxt.FromBytes(lenientRobots(body))
	if err != nil {
		r.Outcome, r.Error = RobotsUnparsable, text(err.Error())
		return r
	}
	r.Outcome = RobotsFetched
	g := data.FindGroup(strings.ToLower(agent))
	r.group = g
	// "Crawl-delay: 0" reads as none: either way the setting's delay holds.
	if g.CrawlDelay != 0 {
		r.HasDelay = true
		r.CrawlDelay = g.CrawlDelay
		if g.CrawlDelay < 0 {
			// The seconds overflowed a Duration: a very long delay.
			r.CrawlDelay = math.MaxInt64
		}
	}
	return r
}

// lenientRobots drops the lines the robots.txt parser would reject the whole
// file for, so that one bad line does not cost the site its other rules.
func lenientRobots(body []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(body))
	seenAgent := false
	for line := range bytes.Lines(body) {
		content := line
		if i := bytes.IndexByte(content, '#'); i >= 0 {
			content = content[:i]
		}
		key, val, ok := bytes.Cut(content, []byte(":"))
		if ok {
			k := strings.ToLower(strings.TrimSpace(string(key)))
			v := strings.TrimSpace(string(val))
			switch k {
			case "user-agent", "useragent":
				seenAgent = seenAgent || v != ""
			case "disallow", "allow", "crawl-delay", "crawldelay":
				if !seenAgent {
					continue
				}
				if k == "crawl-delay" || k == "crawldelay" {
					f, err := strconv.ParseFloat(v, 64)
					if v == "" || err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
						continue
					}
				}
			}
		}
		out.Write(line)
		if !bytes.HasSuffix(line, []byte("\n")) {
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

// fetchRobots fetches <scheme>://<host>/robots.txt once with client, as
// userAgent, and reads it for agent.
func fetchRobots(ctx context.Context, client *http.Client, scheme, host, userAgent, agent string) Robots {
	ctx, cancel := context.WithTimeout(ctx, RobotsTimeout)
	defer cancel()
	u := scheme + "://" + host + "/robots.txt"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Robots{Outcome: RobotsUnreachable, Error: "not a usable robots.txt URL"}
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if ctx.Err() == context.DeadlineExceeded {
			return Robots{Outcome: RobotsUnreachable, Error: "no answer within " + RobotsTimeout.String()}
		}
		return Robots{Outcome: RobotsUnreachable, Error: text(err.Error())}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Robots{Outcome: RobotsAbsent, Status: resp.StatusCode}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRobots))
	if err != nil {
		return Robots{Outcome: RobotsUnreachable, Status: resp.StatusCode, Error: "the answer broke off: " + text(err.Error())}
	}
	return ParseRobots(resp.StatusCode, body, agent)
}
