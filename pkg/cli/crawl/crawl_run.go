package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// newCmdCrawlRun is `ledgerctl crawl run`; newCmdCrawl adds it to the crawl
// command.
func newCmdCrawlRun(opts *CrawlOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "run [CRAWL_ID]",
		Short: "Run a crawl in this terminal with the embedded runner, showing per-host progress",
		Long: `Runs the running crawl (CRAWL_ID, or the one running now) with the same
embedded runner serve uses, without a server: robots.txt, per-host pacing and
capture, level by level, until the crawl ends. Every level's pages are drawn
by state, and every host of the crawl (captured, failed, skipped, pending over
all levels; its delay and robots.txt), with why pages failed, redrawn in place
on a terminal; once the crawl has ended, the pages still pending are counted
as "not captured". Ctrl-C stops cleanly: the pages captured so far are kept,
and serve or another crawl run resumes the crawl where it stopped. Exits 1 when
the crawl ends failed. Not for crawls run by the Windmill flow
(CAPTURE_LEDGER_CRAWL_WEBHOOK_URL set).`,
		Example: "  ledgerctl crawl run --as alice --org acme\n  ledgerctl crawl run 3f0c… --as alice --org acme",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.caller()
			if err != nil {
				return err
			}
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			return runCrawlHere(cmd.Context(), opts, c, id)
		},
	}
}

// runCrawlHere runs the embedded runner in this process until crawl id
// ("": the running one) ends, drawing its progress; when ctx ends first it
// stops the runner cleanly and says how to resume. It is what `crawl run`
// does, and what `crawl start --wait` does after starting.
func runCrawlHere(ctx context.Context, opts *CrawlOptions, c crawl.Caller, id string) error {
	a, err := opts.f.App(cmdutil.StoreSettings...)
	if err != nil {
		return err
	}
	if a.Windmill() {
		return cmdutil.Usagef("this deployment runs crawls on the Windmill flow (CAPTURE_LEDGER_CRAWL_WEBHOOK_URL is set): watch it with ledgerctl crawl status")
	}
	svc, run, err := a.CrawlRunner(ctx, "ledgerctl "+cmdutil.Version)
	if err != nil {
		return err
	}
	if svc == nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: errors.New("the embedded runner cannot capture here: the browser engine has no Chromium (set CAPTURE_LEDGER_CAPTURE_ENGINE=http, CAPTURE_LEDGER_CHROMIUM_PATH or CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS)")}
	}
	if id == "" {
		list, err := svc.List(ctx, c, crawl.StateRunning, nil)
		if err != nil {
			return Error(err, opts.JSON, "")
		}
		if len(list.Crawls) == 0 {
			return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("no crawl is running that %s may see", c.Subject)}
		}
		id = list.Crawls[0].CrawlID
	}
	prog, err := progressService(svc)
	if err != nil {
		return err
	}
	if _, err := prog.Progress(ctx, c, id); err != nil {
		return Error(err, opts.JSON, NoCrawl(c, id))
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- run.Run(runCtx) }()
	err = drawUntilEnd(ctx, opts, prog, c, id, time.Second)
	stop()
	if rerr := <-done; rerr != nil && err == nil {
		err = rerr
	}
	// What the levels admitted is listable when this returns.
	lang := opts.f.Lang()
	if v, gerr := svc.Get(ctx, c, id); gerr == nil && v.PagesCaptured == 0 {
		fmt.Fprintln(opts.f.Streams.Err, words.Say(lang, "archivesNone"))
	} else {
		fmt.Fprint(opts.f.Streams.Err, words.Say(lang, "archivesOfRun"))
		cmdutil.Deliver(ctx, a, opts.f.Streams.Err, lang)
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		fmt.Fprintln(opts.f.Streams.Err, words.Say(lang, "stillRunning", id, c.Subject))
		return nil
	}
	return err
}

// watchCrawl redraws crawl id's progress every interval until it ends or
// ctx ends (`crawl status --watch`).
func watchCrawl(ctx context.Context, opts *CrawlOptions, c crawl.Caller, id string, every time.Duration) error {
	svc, err := opts.service(ctx)
	if err != nil {
		return err
	}
	prog, err := progressService(svc)
	if err != nil {
		return err
	}
	err = drawUntilEnd(ctx, opts, prog, c, id, every)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

func progressService(svc *crawl.Service) (*politeness.ProgressService, error) {
	st, ok := svc.Store.(politeness.ProgressStore)
	if !ok {
		return nil, errors.New("this crawl store keeps no progress")
	}
	return &politeness.ProgressService{Crawls: svc, Store: st}, nil
}

// drawUntilEnd draws the crawl's progress every interval until it is no
// longer running (then it returns nil, or an ExitError when it failed) or
// ctx ends (ctx's error). On a terminal each drawing replaces the last;
// elsewhere a drawing is printed when it changed (with --json, one JSON
// line).
func drawUntilEnd(ctx context.Context, opts *CrawlOptions, prog *politeness.ProgressService, c crawl.Caller, id string, every time.Duration) error {
	out := opts.f.Streams.Out
	term := ui.IsTerminal(out) && !opts.JSON
	last, lines := "", 0
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		p, err := prog.Progress(ctx, c, id)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return Error(err, opts.JSON, NoCrawl(c, id))
		}
		var text string
		if opts.JSON {
			text, err = jsonLine(p)
			if err != nil {
				return err
			}
		} else {
			text = renderProgress(p, opts.f.Lang())
		}
		if text != last {
			if term && lines > 0 {
				fmt.Fprintf(out, "\x1b[%dF\x1b[J", lines)
			}
			_, _ = io.WriteString(out, text)
			last, lines = text, strings.Count(text, "\n")
		}
		if p.State != crawl.StateRunning {
			if p.State == crawl.StateFailed {
				lang := opts.f.Lang()
				if opts.JSON {
					lang = i18n.English
				}
				reason := words.Say(lang, "noReasonRecorded")
				if p.Error != nil {
					reason = *p.Error
				}
				return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: errors.New(words.Say(lang, "crawlFailed", id, reason))}
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func jsonLine(v any) (string, error) {
	var b strings.Builder
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		return "", err
	}
	return b.String(), nil
}

// renderProgress is one drawing, in lang: a summary line, every level's
// pages by state, every host of the crawl, and why pages failed.
func renderProgress(p politeness.Progress, lang i18n.Lang) string {
	var b strings.Builder
	head := words.Say(lang, "watchHead", p.CrawlID, say(lang, "state", p.State))
	if p.StopReason != nil {
		head += words.Say(lang, "watchStop", say(lang, "stop", *p.StopReason))
	}
	fmt.Fprintln(&b, words.Say(lang, "watchLine", head, p.Depth, p.PagesCaptured, p.PagesDiscovered))
	pending := words.Say(lang, pendingKey(p.State))
	rows := make([][]string, len(p.Hosts))
	for i, h := range p.Hosts {
		delay, robots := "-", "-"
		if h.DelayMs != nil && h.DelaySource != nil {
			delay = words.Say(lang, "delay", *h.DelayMs, say(lang, "source", *h.DelaySource))
			if h.BackoffMs > 0 {
				delay += words.Say(lang, "backedOff", h.BackoffMs)
			}
		}
		if h.Robots != nil {
			robots = say(lang, "robots", *h.Robots)
		}
		rows[i] = []string{h.Host, strconv.Itoa(h.Captured), strconv.Itoa(h.Failed), strconv.Itoa(h.Skipped), strconv.Itoa(h.Pending), delay, robots}
	}
	if len(p.Levels) > 1 {
		parts := make([]string, len(p.Levels))
		for i, l := range p.Levels {
			parts[i] = words.Say(lang, "levelPart", l.Depth, l.Captured, l.Failed, l.Skipped, l.Pending, pending)
		}
		fmt.Fprintln(&b, words.Say(lang, "levels", strings.Join(parts, " · ")))
	}
	heads := append(append(columns(lang, "colHost", "colCaptured", "colFailed", "colSkipped"), pending), columns(lang, "colDelay", "colRobots")...)
	(&ui.Printer{W: &b}).Table(heads, rows)
	for _, f := range p.Failures {
		fmt.Fprintln(&b, words.Say(lang, "failedPages", f.Pages, cmdutil.Printable(f.Reason)))
	}
	return b.String()
}

// pendingKey is the word (words) of a page still pending in a crawl in
// state: once the crawl has ended nothing will capture it, and it is "not
// captured".
func pendingKey(state string) string {
	if state != crawl.StateRunning {
		return "notCaptured"
	}
	return "pending"
}
