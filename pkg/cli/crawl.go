package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// CrawlOptions are the inputs shared by the `ledgerctl crawl` commands.
type CrawlOptions struct {
	f    *Factory
	As   string
	Orgs []string
	JSON bool
}

func (o *CrawlOptions) caller() (crawl.Caller, error) {
	id, err := actingAs(o.As, o.Orgs, "the subject to act as (it needs can_submit on one of --org)")
	if err != nil {
		return crawl.Caller{}, err
	}
	return crawl.Caller{Subject: id.Subject, Orgs: id.Organizations}, nil
}

func (o *CrawlOptions) service(ctx context.Context) (*crawl.Service, error) {
	a, err := o.f.App(append([]string{"DATABASE_URL", "CAPTURE_LEDGER_FGA_STORE_ID", "CAPTURE_LEDGER_FGA_MODEL_ID"}, s3Vars...)...)
	if err != nil {
		return nil, err
	}
	return a.Crawls(ctx)
}

// runnerService is service for commands that start work: without a runner a
// started crawl would sit running until the stall timeout closes it.
func (o *CrawlOptions) runnerService(ctx context.Context) (*crawl.Service, error) {
	svc, err := o.service(ctx)
	if err == nil && svc.Dispatcher == nil {
		err = usagef("crawls need a runner: set CAPTURE_LEDGER_CRAWL_WEBHOOK_URL and CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN (the Windmill flow)")
	}
	return svc, err
}

func (o *CrawlOptions) print(v any) error {
	return json.NewEncoder(o.f.Streams.Out).Encode(v)
}

func newCmdCrawl(f *Factory) *cobra.Command {
	opts := &CrawlOptions{f: f}
	cmd := &cobra.Command{
		Use:     "crawl",
		Example: "  ledgerctl crawl start --as alice --org acme --seed https://www.example.com/\n  ledgerctl crawl list --as alice --org acme",
		Short:   "Start, watch and explain crawls, without a server",
		Long: `The same operations as the /api/crawls routes, acting as --as (a subject with
can_submit on one of --org; OpenFGA decides). A crawl's organization is the
first --org. Only one crawl runs at a time, across every organization.`,
	}
	cmd.PersistentFlags().StringVar(&opts.As, "as", "", "subject to act as (required)")
	cmd.PersistentFlags().StringSliceVar(&opts.Orgs, "org", nil, "organization of the subject (repeatable; the first owns new crawls)")
	cmd.PersistentFlags().BoolVar(&opts.JSON, "json", false, "print the API's JSON body")
	cmd.AddCommand(newCmdCrawlStart(opts), newCmdCrawlStatus(opts), newCmdCrawlList(opts), newCmdCrawlDecisions(opts), newCmdCrawlFail(opts))
	return cmd
}

func newCmdCrawlStart(opts *CrawlOptions) *cobra.Command {
	var (
		seeds, ruleSpecs                []string
		fromTargets                     bool
		limit, maxDepth, maxPages       int
		perHostDelayMs, hostParallelism int
	)
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start a crawl from seeds or from the organization's capture targets",
		Example: "  ledgerctl crawl start --as alice --org acme --seed https://www.example.com/ --rule skip:ads.example.com --rule follow:same-site\n" +
			"  ledgerctl crawl start --as alice --org acme --from-targets --limit 100",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := opts.caller()
			if err != nil {
				return err
			}
			// Build the API's body so the CLI is validated exactly like it.
			body := map[string]any{}
			if len(seeds) > 0 {
				body["seeds"] = seeds
			}
			if fromTargets {
				ft := map[string]any{}
				if cmd.Flags().Changed("limit") {
					ft["limit"] = limit
				}
				body["fromTargets"] = ft
			}
			if len(ruleSpecs) > 0 {
				var rs []rules.Rule
				for i, spec := range ruleSpecs {
					r, err := rules.ParseSpec(spec)
					if err != nil {
						return usagef("--rule #%d: %v", i, err)
					}
					rs = append(rs, r)
				}
				body["rules"] = rs
			}
			for flag, v := range map[string]int{"max-depth": maxDepth, "max-pages": maxPages, "per-host-delay-ms": perHostDelayMs, "host-parallelism": hostParallelism} {
				if cmd.Flags().Changed(flag) {
					body[camel(flag)] = v
				}
			}
			raw, _ := json.Marshal(body)
			req, err := crawl.DecodeStartRequest(raw)
			if err != nil {
				return usagef("%s", flagNames(err.Error()))
			}
			svc, err := opts.runnerService(cmd.Context())
			if err != nil {
				return err
			}
			id, err := svc.Start(cmd.Context(), c, req)
			if err != nil {
				return crawlError(err, opts.JSON, mayNotStart(c))
			}
			if opts.JSON {
				return opts.print(map[string]string{"crawlId": id})
			}
			fmt.Fprintln(opts.f.Streams.Out, id)
			fmt.Fprintf(opts.f.Streams.Err, "crawl started; follow it with: ledgerctl crawl status %s --as %s --org %s --watch\n", id, c.Subject, strings.Join(c.Orgs, ","))
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&seeds, "seed", nil, "a seed URL (repeatable)")
	cmd.Flags().BoolVar(&fromTargets, "from-targets", false, "start from the organization's enabled capture targets")
	cmd.Flags().IntVar(&limit, "limit", 0, "with --from-targets: at most this many targets")
	cmd.Flags().StringArrayVar(&ruleSpecs, "rule", nil, "a rule ACTION:PATTERN, in order (default follow:same-origin); see: ledgerctl rules check")
	cmd.Flags().IntVar(&maxDepth, "max-depth", 2, "levels of links to follow (0-10; 0 with --from-targets)")
	cmd.Flags().IntVar(&maxPages, "max-pages", 30, "pages in all, seeds included (1-10000; default max(30, seeds))")
	cmd.Flags().IntVar(&perHostDelayMs, "per-host-delay-ms", 2000, "gap between two captures on one host (0-600000)")
	cmd.Flags().IntVar(&hostParallelism, "host-parallelism", 4, "hosts captured at once (1-32)")
	return cmd
}

// camel turns a flag name into the API's key (max-depth → maxDepth).
func camel(flag string) string {
	parts := strings.Split(flag, "-")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// flagNames rewrites the API's body/… paths into the flags that set them.
func flagNames(msg string) string {
	return strings.NewReplacer("body/maxDepth", "--max-depth", "body/maxPages", "--max-pages", "body/perHostDelayMs", "--per-host-delay-ms",
		"body/hostParallelism", "--host-parallelism", "body/fromTargets/limit", "--limit", "body/seeds", "--seed", "body/rules", "--rule",
		"body/reason", "--reason", "params/id", "CRAWL_ID", "querystring/domain", "--domain", "querystring/days", "--days",
		"querystring/action", "--action", "querystring/state", "--state", `must match format "uuid"`, "must be a crawl id (a UUID, as crawl list prints it)").Replace(msg)
}

// crawlError turns a crawl use-case error into what the CLI says. With
// --json the API's body is the message (the machine shape); otherwise a
// sentence naming the flag or argument at fault. absent is the sentence for
// "absent, or not allowed" (the two look the same, as in the API).
func crawlError(err error, jsonOut bool, absent string) error {
	var bodied interface{ Body() any }
	if jsonOut && errors.As(err, &bodied) {
		b, _ := json.Marshal(bodied.Body())
		code := ExitUsage
		if errors.Is(err, crawl.ErrConflict) {
			code = ExitFailure
		}
		return &ExitError{Code: code, Err: fmt.Errorf("%s", b)}
	}
	var (
		valid  *crawl.ValidationError
		req    *crawl.RequestError
		active *crawl.ActiveCrawlError
	)
	switch {
	case errors.As(err, &valid):
		return usagef("%s", flagNames(valid.Error()))
	case errors.As(err, &req):
		switch req.Message {
		case crawl.MsgSeedsXorTargets:
			return usagef("give either --seed URL (repeatable) or --from-targets, not both and not neither")
		case crawl.MsgNoTargets:
			return usagef("this organization has no enabled capture targets; add some with: ledgerctl targets add URL... --org ORG")
		}
		return usagef("%s", flagNames(req.Error()))
	case errors.As(err, &active):
		if active.CrawlID == "" {
			return &ExitError{Code: ExitFailure, Err: errors.New("a crawl is already in progress (one runs at a time); try again when it has ended")}
		}
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("crawl %s is already in progress (started %s); wait for it, or close it with: ledgerctl crawl fail %s",
			active.CrawlID, ui.Time(active.StartedAt), active.CrawlID)}
	case errors.Is(err, crawl.ErrInvalid), errors.Is(err, crawl.ErrConflict):
		code := ExitUsage
		if errors.Is(err, crawl.ErrConflict) {
			code = ExitFailure
		}
		return &ExitError{Code: code, Err: err}
	case errors.Is(err, ledger.ErrNotFound):
		return &ExitError{Code: ExitFailure, Err: errors.New(absent)}
	}
	return err
}

// mayNotStart is the sentence for a start refused as "not found": the
// caller has no can_submit on the organization the crawl would belong to.
func mayNotStart(c crawl.Caller) string {
	org := "ORG"
	if len(c.Orgs) > 0 {
		org = c.Orgs[0]
	}
	return fmt.Sprintf("%s may not start crawls for %s (no can_submit on it; a crawl belongs to the first --org); an administrator can allow it with: ledgerctl fga grant submitter %s %s",
		c.Subject, org, c.Subject, org)
}

// noCrawl is the sentence for a crawl the caller cannot see.
func noCrawl(c crawl.Caller, id string) string {
	return fmt.Sprintf("no crawl %s that %s may see (absent, or not a crawl of %s that %s requested or may submit for)",
		id, c.Subject, orgList(c.Orgs), c.Subject)
}

// orgList names organizations for a sentence.
func orgList(orgs []string) string {
	if len(orgs) == 0 {
		return "any organization (no --org given)"
	}
	return strings.Join(orgs, ", ")
}

func newCmdCrawlStatus(opts *CrawlOptions) *cobra.Command {
	var watch bool
	cmd := &cobra.Command{
		Use:     "status CRAWL_ID",
		Short:   "Show a crawl's state, counters, limits and last failures",
		Example: "  ledgerctl crawl status 3f0c… --as alice --org acme\n  ledgerctl crawl status 3f0c… --as alice --org acme --watch",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.caller()
			if err != nil {
				return err
			}
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			var bar *ui.Progress
			for {
				v, err := svc.Get(cmd.Context(), c, args[0])
				if err != nil {
					return crawlError(err, opts.JSON, noCrawl(c, args[0]))
				}
				if watch && v.State == crawl.StateRunning {
					if bar == nil {
						bar = ui.NewProgress(opts.f.Streams.Err, "pages captured", v.MaxPages)
					}
					bar.Add(v.PagesCaptured - bar.Count())
					select {
					case <-cmd.Context().Done():
						bar.Done()
						return cmd.Context().Err()
					case <-time.After(2 * time.Second):
					}
					continue
				}
				if bar != nil {
					bar.Done()
				}
				if opts.JSON {
					return opts.print(v)
				}
				p := ui.New(opts.f.Streams.Out)
				stop := "—"
				if v.StopReason != nil {
					stop = *v.StopReason
				}
				p.Printf("crawl %s (%s, by %s)\nstate: %s   stop reason: %s\npages: %d captured, %d discovered (limit %d, depth ≤ %d)\nseeds: %s\n",
					v.CrawlID, v.OrgID, v.RequestedBy, v.State, stop, v.PagesCaptured, v.PagesDiscovered, v.MaxPages, v.MaxDepth, strings.Join(v.Seeds, " "))
				for i, r := range v.Rules {
					p.Printf("rule %d: %s\n", i+1, r)
				}
				if v.Error != nil {
					p.Printf("error: %s\n", *v.Error)
				}
				for _, fl := range v.Failures {
					reason := "no reason given"
					if fl.Reason != nil {
						reason = *fl.Reason
					}
					p.Printf("failed (depth %d): %s — %s\n", fl.Depth, fl.URL, reason)
				}
				return nil
			}
		},
	}
	cmd.Flags().BoolVar(&watch, "watch", false, "poll every 2 s with a progress bar until the crawl ends")
	return cmd
}

func newCmdCrawlList(opts *CrawlOptions) *cobra.Command {
	var state string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List crawls of every organization, newest first",
		Example: "  ledgerctl crawl list --as alice --org acme --state running",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := opts.caller()
			if err != nil {
				return err
			}
			if err := crawl.CheckState(state); err != nil {
				return usagef("--state must be running, succeeded or failed")
			}
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			list, err := svc.List(cmd.Context(), c, state, nil)
			if err != nil {
				return crawlError(err, opts.JSON, c.Subject+" may not list crawls")
			}
			if opts.JSON {
				return opts.print(list)
			}
			rows := make([][]string, len(list.Crawls))
			for i, cr := range list.Crawls {
				stop := ""
				if cr.StopReason != nil {
					stop = *cr.StopReason
				}
				rows[i] = []string{cr.CrawlID, ui.Time(cr.StartedAt), cr.OrgID, cr.State, stop, strconv.Itoa(cr.PagesCaptured), strconv.Itoa(cr.WaczCount)}
			}
			ui.New(opts.f.Streams.Out).Table([]string{"crawl", "started", "org", "state", "stop", "captured", "wacz"}, rows)
			return nil
		},
	}
	cmd.Flags().StringVar(&state, "state", "", "only crawls in this state: running, succeeded or failed")
	return cmd
}

func newCmdCrawlDecisions(opts *CrawlOptions) *cobra.Command {
	var domain, action string
	var days int
	cmd := &cobra.Command{
		Use:   "decisions [CRAWL_ID]",
		Short: "Why was a URL not captured: what the rules and robots.txt decided",
		Long: `With CRAWL_ID: the rules pinned on the crawl and, per level, rule and hostname,
how many distinct links they decided, with samples; and the pages robots.txt
kept out. With --domain: across crawls of the last --days, the decisions on
that hostname and its subdomains (label boundaries), newest crawl first.`,
		Example: "  ledgerctl crawl decisions 3f0c… --as alice --org acme\n  ledgerctl crawl decisions --domain ads.example.com --days 30 --as alice --org acme",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.caller()
			if err != nil {
				return err
			}
			if (len(args) == 1) == (domain != "") {
				return usagef("give either a CRAWL_ID or --domain")
			}
			var q crawl.DomainQuery
			if domain != "" {
				v := url.Values{"domain": {domain}, "action": {action}}
				if cmd.Flags().Changed("days") {
					v.Set("days", strconv.Itoa(days))
				}
				if q, err = crawl.ParseDomainQuery(v); err != nil {
					return usagef("%s", strings.NewReplacer("querystring/", "--").Replace(err.Error()))
				}
			}
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			p := ui.New(opts.f.Streams.Out)
			if domain != "" {
				d, err := svc.DecisionsByDomain(cmd.Context(), c, q.Domain, q.Days, q.Action)
				if err != nil {
					return crawlError(err, opts.JSON, fmt.Sprintf("%s may not read crawl decisions: it needs can_submit on one of %s", c.Subject, orgList(c.Orgs)))
				}
				if opts.JSON {
					return opts.print(d)
				}
				rows := make([][]string, len(d.Decisions))
				for i, x := range d.Decisions {
					pattern := "(no rule matched)"
					if x.Pattern != nil {
						pattern = *x.Pattern
					}
					rows[i] = []string{x.CrawlID, ui.Time(x.StartedAt), strconv.Itoa(x.Depth), fmt.Sprintf("%d %s", x.Rule, pattern), x.Action, x.Hostname, strconv.Itoa(x.Links)}
				}
				p.Table([]string{"crawl", "started", "depth", "rule", "action", "hostname", "links"}, rows)
				if d.Truncated {
					fmt.Fprintln(opts.f.Streams.Err, "only the newest 500 rows are shown")
				}
				return nil
			}
			v, err := svc.Decisions(cmd.Context(), c, args[0])
			if err != nil {
				return crawlError(err, opts.JSON, noCrawl(c, args[0]))
			}
			if opts.JSON {
				return opts.print(v)
			}
			for i, r := range v.Rules {
				p.Printf("rule %d: %s\n", i+1, r)
			}
			p.Println()
			rows := make([][]string, len(v.Decisions))
			for i, x := range v.Decisions {
				rows[i] = []string{strconv.Itoa(x.Depth), strconv.Itoa(x.Rule), x.Action, x.Hostname, strconv.Itoa(x.Links), strings.Join(x.Samples, " ")}
			}
			p.Table([]string{"depth", "rule", "action", "hostname", "links", "samples"}, rows)
			if len(v.Robots) > 0 {
				p.Println()
				rows = rows[:0]
				for _, r := range v.Robots {
					rows = append(rows, []string{r.Hostname, strconv.Itoa(r.Pages), strings.Join(r.Samples, " ")})
				}
				p.Table([]string{"robots.txt kept out", "pages", "samples"}, rows)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&domain, "domain", "", "a hostname: decisions on it and its subdomains across crawls")
	cmd.Flags().IntVar(&days, "days", 90, "with --domain: crawls started in the last N days")
	cmd.Flags().StringVar(&action, "action", "skip", "with --domain: follow, capture or skip")
	return cmd
}

func newCmdCrawlFail(opts *CrawlOptions) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:     "fail CRAWL_ID",
		Short:   "Close a running crawl as failed (e.g. one whose runner died)",
		Example: "  ledgerctl crawl fail 3f0c… --as alice --org acme --reason \"runner lost\"",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.caller()
			if err != nil {
				return err
			}
			var req crawl.FailRequest
			if cmd.Flags().Changed("reason") {
				raw, _ := json.Marshal(map[string]string{"reason": reason})
				if req, err = crawl.DecodeFailRequest(raw); err != nil {
					return usagef("--reason: %v", err)
				}
			}
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			res, err := svc.Fail(cmd.Context(), c, args[0], req)
			if err != nil {
				return crawlError(err, opts.JSON, noCrawl(c, args[0]))
			}
			if opts.JSON {
				return opts.print(res)
			}
			if !res.Closed {
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("crawl %s is not running; nothing was changed", args[0])}
			}
			fmt.Fprintf(opts.f.Streams.Out, "crawl %s closed as failed\n", args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (kept as the crawl's error)")
	return cmd
}
