package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// CrawlOptions are the inputs shared by the `ledgerctl crawl` commands.
type CrawlOptions struct {
	f    *cmdutil.Factory
	As   string
	Orgs []string
	JSON bool
}

func (o *CrawlOptions) caller() (crawl.Caller, error) {
	id, err := cmdutil.ActingAs(o.As, o.Orgs, "the subject to act as (it needs can_submit on one of --org)")
	if err != nil {
		return crawl.Caller{}, err
	}
	return crawl.Caller{Subject: id.Subject, Orgs: id.Organizations}, nil
}

func (o *CrawlOptions) service(ctx context.Context) (*crawl.Service, error) {
	return Service(ctx, o.f)
}

// Service is the crawl use-case the crawl commands run, built from f's
// settings (the ledger, OpenFGA and the bucket).
func Service(ctx context.Context, f *cmdutil.Factory) (*crawl.Service, error) {
	a, err := f.App(cmdutil.StoreSettings...)
	if err != nil {
		return nil, err
	}
	return a.Crawls(ctx)
}

func (o *CrawlOptions) print(v any) error {
	return json.NewEncoder(o.f.Streams.Out).Encode(v)
}

func NewCmdCrawl(f *cmdutil.Factory) *cobra.Command {
	opts := &CrawlOptions{f: f}
	cmd := &cobra.Command{
		Use:     "crawl",
		Example: "  ledgerctl crawl start --as alice --org acme --seed https://www.example.com/\n  ledgerctl crawl list --as alice --org acme",
		Short:   "Start, watch and explain crawls, without a server",
		Long: `The same operations as the /api/crawls routes, acting as --as (a subject with
can_submit on one of --org; OpenFGA decides). A crawl's organization is the
first --org. An organization runs at most CAPTURE_LEDGER_CRAWLS_PER_ORG crawls
at once; other organizations' crawls do not count.

Who runs a started crawl: with CAPTURE_LEDGER_CRAWL_WEBHOOK_URL set, the
Windmill flow; without it, the embedded runner of ledgerctl serve, of
ledgerctl crawl run, or of crawl start --wait (the built-in capturer, or
BrowserHive when CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS is set).`,
	}
	cmd.PersistentFlags().StringVar(&opts.As, "as", "", "subject to act as (required)")
	cmd.PersistentFlags().StringSliceVar(&opts.Orgs, "org", nil, "organization of the subject (repeatable; the first owns new crawls)")
	cmd.PersistentFlags().BoolVar(&opts.JSON, "json", false, "print the API's JSON body")
	cmd.AddCommand(newCmdCrawlStart(opts), newCmdCrawlStatus(opts), newCmdCrawlList(opts), newCmdCrawlDecisions(opts), newCmdCrawlFail(opts),
		newCmdCrawlRun(opts), newCmdCrawlPoliteness(opts), newCmdCrawlStop(opts), newCmdCrawlWhy(opts), newCmdCrawlPages(opts), newCmdCrawlExport(opts))
	return cmd
}

func newCmdCrawlStart(opts *CrawlOptions) *cobra.Command {
	var (
		seeds, ruleSpecs                []string
		fromTargets, wait               bool
		limit, maxDepth, maxPages       int
		perHostDelayMs, hostParallelism int
	)
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start a crawl from seeds or from the organization's capture targets",
		Example: "  ledgerctl crawl start --as alice --org acme --seed https://www.example.com/ --rule skip:ads.example.com --rule follow:same-site\n" +
			"  ledgerctl crawl start --as alice --org acme --from-targets --limit 100\n" +
			"  ledgerctl crawl start --as alice --org acme --seed https://www.example.com/ --wait",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := opts.caller()
			if err != nil {
				return err
			}
			req := crawl.StartRequest{}
			if len(seeds) > 0 {
				req.Seeds = seeds
			}
			if fromTargets {
				req.FromTargets = &crawl.FromTargets{}
				if cmd.Flags().Changed("limit") {
					req.FromTargets.Limit = &limit
				}
			}
			for i, spec := range ruleSpecs {
				r, err := rules.ParseSpec(spec)
				if err != nil {
					return cmdutil.Usagef("--rule #%d: %v", i+1, err)
				}
				req.Rules = append(req.Rules, r)
			}
			for _, f := range []struct {
				flag string
				v    *int
				dst  **int
			}{
				{"max-depth", &maxDepth, &req.MaxDepth}, {"max-pages", &maxPages, &req.MaxPages},
				{"per-host-delay-ms", &perHostDelayMs, &req.PerHostDelayMs}, {"host-parallelism", &hostParallelism, &req.HostParallelism},
			} {
				if cmd.Flags().Changed(f.flag) {
					*f.dst = f.v
				}
			}
			// Refused before any configuration is read (Start checks again).
			if err := req.Validate(); err != nil {
				return Error(err, opts.JSON, MayNotStart(c))
			}
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			id, err := svc.Start(cmd.Context(), c, req)
			if err != nil {
				return Error(err, opts.JSON, MayNotStart(c))
			}
			if opts.JSON {
				if err := opts.print(map[string]string{"crawlId": id}); err != nil {
					return err
				}
			} else {
				fmt.Fprintln(opts.f.Streams.Out, id)
			}
			as := fmt.Sprintf("--as %s --org %s", c.Subject, strings.Join(c.Orgs, ","))
			// Without the webhook nothing in this process has run the
			// crawl yet: its first level waits in the ledger for an
			// embedded runner (serve's, crawl run's, or --wait's here).
			embedded := svc.Dispatcher == nil
			switch {
			case wait && embedded:
				return runCrawlHere(cmd.Context(), opts, c, id)
			case wait:
				return watchCrawl(cmd.Context(), opts, c, id, 2*time.Second)
			case embedded:
				fmt.Fprintln(opts.f.Streams.Err, words.Say(opts.f.Lang(), "startedEmbedded", id, as))
			default:
				fmt.Fprintln(opts.f.Streams.Err, words.Say(opts.f.Lang(), "startedWindmill", id, as))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "then run the crawl here with the embedded runner until it ends, as crawl run does (with the Windmill flow: watch it until it ends)")
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

// crawlFlags names the request fields of the crawl use-cases the way the
// CLI takes them.
var crawlFlags = map[string]string{
	crawl.FieldID: "CRAWL_ID", crawl.FieldSeeds: "--seed", crawl.FieldFromTargets: "--from-targets",
	crawl.FieldFromTargetLimit: "--limit", crawl.FieldRules: "--rule", crawl.FieldMaxDepth: "--max-depth",
	crawl.FieldMaxPages: "--max-pages", crawl.FieldPerHostDelayMs: "--per-host-delay-ms",
	crawl.FieldHostParallelism: "--host-parallelism", crawl.FieldReason: "--reason", crawl.FieldState: "--state",
	crawl.FieldDomain: "--domain", crawl.FieldDays: "--days", crawl.FieldAction: "--action",
}

// flagOf names a field of a *ledger.FieldError as the flag or argument that
// set it: "maxDepth" is --max-depth, "seeds/2" the third --seed (#3) and
// "rules/1/follow" the second --rule (#2): counted from 1, as every
// command's errors count repeated flags.
func flagOf(field string) string {
	head, rest, _ := strings.Cut(field, "/")
	if f, ok := crawlFlags[field]; ok {
		return f
	}
	if f, ok := crawlFlags[head]; ok {
		if i, _, _ := strings.Cut(rest, "/"); i != "" {
			if n, err := strconv.Atoi(i); err == nil {
				return f + " #" + strconv.Itoa(n+1)
			}
		}
		return f
	}
	return field
}

// fieldMessage is a *ledger.FieldError as the CLI says it: the flag, then
// what is wrong with its value.
func fieldMessage(fe *ledger.FieldError) string {
	reason := fe.Reason
	if fe.Field == crawl.FieldID && reason == `must match format "uuid"` {
		reason = "must be a crawl id (a UUID, as crawl list prints it)"
	}
	return flagOf(fe.Field) + " " + reason
}

// Error turns a crawl use-case error into what the CLI says: a
// sentence naming the flag or argument at fault (exit 2 for a refused
// request, 1 for a conflict), or with --json the refusal's machine shape
// (crawlRefusalJSON). absent is the sentence for "absent, or not allowed"
// (the two look the same, as in the API).
func Error(err error, jsonOut bool, absent string) error {
	code := cmdutil.ExitUsage
	if errors.Is(err, crawl.ErrConflict) {
		code = cmdutil.ExitFailure
	}
	if body := crawlRefusalJSON(err); jsonOut && body != nil {
		b, _ := json.Marshal(body)
		return &cmdutil.ExitError{Code: code, Err: fmt.Errorf("%s", b)}
	}
	var (
		field  *ledger.FieldError
		req    *crawl.RequestError
		active *crawl.ActiveCrawlError
	)
	switch {
	case errors.As(err, &field):
		return cmdutil.Usagef("%s", fieldMessage(field))
	case errors.As(err, &req):
		switch req.Message {
		case crawl.MsgSeedsXorTargets:
			return cmdutil.Usagef("give either --seed URL (repeatable) or --from-targets, not both and not neither")
		case crawl.MsgNoTargets:
			return cmdutil.Usagef("this organization has no enabled capture targets; add some with: ledgerctl targets add URL... --org ORG")
		}
		return cmdutil.Usagef("%s", req.Error())
	case errors.As(err, &active):
		bound := "as many crawls as it may run at once"
		if active.Limit > 0 {
			bound = fmt.Sprintf("%d crawl(s), as many as it may run at once (CAPTURE_LEDGER_CRAWLS_PER_ORG)", active.Limit)
		}
		if active.CrawlID == "" {
			return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("the organization already runs %s; try again when one has ended", bound)}
		}
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("the organization already runs %s; the oldest is %s (started %s): wait for one to end, or close it with: ledgerctl crawl fail %s",
			bound, active.CrawlID, ui.Time(active.StartedAt), active.CrawlID)}
	case errors.Is(err, crawl.ErrInvalid), errors.Is(err, crawl.ErrConflict):
		return &cmdutil.ExitError{Code: code, Err: err}
	case errors.Is(err, ledger.ErrNotFound):
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: errors.New(absent)}
	}
	return err
}

// crawlRefusalJSON is the machine shape --json gives a refused request: the
// shapes of the API's 400 and 409 bodies (a refused field is the validation
// body, its message naming the flag), so that a script reads one shape from
// either; nil for any other error.
func crawlRefusalJSON(err error) any {
	var (
		field   *ledger.FieldError
		req     *crawl.RequestError
		named   rules.BodyError
		active  *crawl.ActiveCrawlError
		targets *crawl.BadTargetsError
	)
	type errorBody struct {
		Error string `json:"error"`
	}
	switch {
	case errors.As(err, &field):
		return struct {
			StatusCode int    `json:"statusCode"`
			Code       string `json:"code"`
			Error      string `json:"error"`
			Message    string `json:"message"`
		}{400, "FST_ERR_VALIDATION", "Bad Request", fieldMessage(field)}
	case errors.As(err, &req) && errors.As(req.Err, &named):
		return named.Body()
	case errors.As(err, &req):
		return errorBody{req.Message}
	case errors.As(err, &active):
		body := struct {
			Error     string     `json:"error"`
			CrawlID   string     `json:"crawlId,omitempty"`
			StartedAt *time.Time `json:"startedAt,omitempty"`
			Limit     int        `json:"limit,omitempty"`
		}{Error: "a crawl is already in progress", CrawlID: active.CrawlID, Limit: active.Limit}
		if active.CrawlID != "" {
			t := active.StartedAt.UTC()
			body.StartedAt = &t
		}
		return body
	case errors.As(err, &targets):
		return struct {
			Error string         `json:"error"`
			URLs  []crawl.BadURL `json:"urls"`
		}{"every target must be an http(s) URL", targets.URLs}
	case errors.Is(err, crawl.ErrInvalid), errors.Is(err, crawl.ErrConflict):
		return errorBody{err.Error()}
	}
	return nil
}

// MayNotStart is the sentence for a start refused as "not found": the
// caller has no can_submit on the organization the crawl would belong to.
func MayNotStart(c crawl.Caller) string {
	org := "ORG"
	if len(c.Orgs) > 0 {
		org = c.Orgs[0]
	}
	return fmt.Sprintf("%s may not start crawls for %s (no can_submit on it; a crawl belongs to the first --org); an administrator can allow it with: ledgerctl fga grant submitter %s %s",
		c.Subject, org, c.Subject, org)
}

// NoCrawl is the sentence for a crawl the caller cannot see.
func NoCrawl(c crawl.Caller, id string) string {
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
			if watch {
				return watchCrawl(cmd.Context(), opts, c, args[0], 2*time.Second)
			}
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			v, err := svc.Get(cmd.Context(), c, args[0])
			if err != nil {
				return Error(err, opts.JSON, NoCrawl(c, args[0]))
			}
			if opts.JSON {
				return opts.print(v)
			}
			printStatus(ui.New(opts.f.Streams.Out), opts.f.Lang(), v)
			return nil
		},
	}
	cmd.Flags().BoolVar(&watch, "watch", false, "redraw the crawl's per-host progress every 2 s until it ends (exit 1 when it failed; with --json, one line per change)")
	return cmd
}

// printStatus prints v as `crawl status` shows it to people, in lang.
func printStatus(p *ui.Printer, lang i18n.Lang, v crawl.CrawlView) {
	stop := "—"
	if v.StopReason != nil {
		stop = say(lang, "stop", *v.StopReason)
	}
	p.Println(words.Say(lang, "crawlBy", v.CrawlID, v.OrgID, v.RequestedBy))
	p.Println(words.Say(lang, "stateLine", say(lang, "state", v.State), stop))
	p.Println(words.Say(lang, "pagesLine", v.PagesCaptured, v.PagesDiscovered, v.MaxPages, v.MaxDepth))
	p.Println(words.Say(lang, "seedsLine", strings.Join(v.Seeds, " ")))
	for i, r := range v.Rules {
		p.Println(words.Say(lang, "ruleLine", i+1, r))
	}
	if v.Error != nil {
		p.Println(words.Say(lang, "errorLine", *v.Error))
	}
	if cs := v.Search; cs != nil {
		line := words.Say(lang, "searchable", cs.Indexed, cs.Archives)
		if cs.SearchableAfterMs != nil {
			line += words.Say(lang, "searchableAfter", (time.Duration(*cs.SearchableAfterMs) * time.Millisecond).String())
		}
		p.Println(line)
	}
	for _, fl := range v.Failures {
		reason := words.Say(lang, "noReasonGiven")
		if fl.Reason != nil {
			reason = *fl.Reason
		}
		p.Println(words.Say(lang, "failedAt", fl.Depth, fl.URL, reason))
	}
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
				return cmdutil.Usagef("--state must be running, succeeded or failed")
			}
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			list, err := svc.List(cmd.Context(), c, state, nil)
			if err != nil {
				return Error(err, opts.JSON, c.Subject+" may not list crawls")
			}
			if opts.JSON {
				return opts.print(list)
			}
			lang := opts.f.Lang()
			rows := make([][]string, len(list.Crawls))
			for i, cr := range list.Crawls {
				stop := ""
				if cr.StopReason != nil {
					stop = say(lang, "stop", *cr.StopReason)
				}
				rows[i] = []string{cr.CrawlID, ui.Time(cr.StartedAt), cr.OrgID, say(lang, "state", cr.State), stop, strconv.Itoa(cr.PagesCaptured), strconv.Itoa(cr.WaczCount)}
			}
			ui.New(opts.f.Streams.Out).Table(columns(lang, "colCrawl", "colStarted", "colOrg", "colState", "colStop", "colCaptured", "colWacz"), rows)
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
				return cmdutil.Usagef("give either a CRAWL_ID or --domain")
			}
			if domain == "" {
				for _, f := range []string{"action", "days"} {
					if cmd.Flags().Changed(f) {
						return cmdutil.Usagef("--%s goes with --domain; a CRAWL_ID's decisions are all of them", f)
					}
				}
			}
			q := crawl.DomainQuery{Domain: domain, Action: action}
			if domain != "" {
				// 0 days and an empty action are the defaults to the
				// use-case; given as flags they are mistakes.
				if cmd.Flags().Changed("days") {
					if days < 1 {
						return cmdutil.Usagef("--days must be a positive integer")
					}
					q.Days = days
				}
				if action == "" {
					return cmdutil.Usagef("--action must be equal to one of the allowed values (follow, capture, skip)")
				}
				if err := q.Validate(); err != nil {
					return Error(err, false, "")
				}
			}
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			p := ui.New(opts.f.Streams.Out)
			lang := opts.f.Lang()
			if domain != "" {
				d, err := svc.DecisionsByDomain(cmd.Context(), c, q.Domain, q.Days, q.Action)
				if err != nil {
					return Error(err, opts.JSON, fmt.Sprintf("%s may not read crawl decisions: it needs can_submit on one of %s", c.Subject, orgList(c.Orgs)))
				}
				if opts.JSON {
					return opts.print(d)
				}
				rows := make([][]string, len(d.Decisions))
				for i, x := range d.Decisions {
					pattern := words.Say(lang, "noRuleMatched")
					if x.Pattern != nil {
						pattern = *x.Pattern
					}
					rows[i] = []string{x.CrawlID, ui.Time(x.StartedAt), strconv.Itoa(x.Depth), fmt.Sprintf("%d %s", x.Rule, pattern), say(lang, "action", x.Action), x.Hostname, strconv.Itoa(x.Links)}
				}
				p.Table(columns(lang, "colCrawl", "colStarted", "colDepth", "colRule", "colAction", "colHostname", "colLinks"), rows)
				if d.Truncated {
					fmt.Fprintln(opts.f.Streams.Err, words.Say(lang, "newest500"))
				}
				return nil
			}
			v, err := svc.Decisions(cmd.Context(), c, args[0])
			if err != nil {
				return Error(err, opts.JSON, NoCrawl(c, args[0]))
			}
			if opts.JSON {
				return opts.print(v)
			}
			for i, r := range v.Rules {
				p.Println(words.Say(lang, "ruleLine", i+1, r))
			}
			p.Println()
			rows := make([][]string, len(v.Decisions))
			for i, x := range v.Decisions {
				rows[i] = []string{strconv.Itoa(x.Depth), strconv.Itoa(x.Rule), say(lang, "action", x.Action), x.Hostname, strconv.Itoa(x.Links), strings.Join(x.Samples, " ")}
			}
			p.Table(columns(lang, "colDepth", "colRule", "colAction", "colHostname", "colLinks", "colSamples"), rows)
			if len(v.Robots) > 0 {
				p.Println()
				rows = rows[:0]
				for _, r := range v.Robots {
					rows = append(rows, []string{r.Hostname, strconv.Itoa(r.Pages), strings.Join(r.Samples, " ")})
				}
				p.Table(columns(lang, "colRobotsOut", "colPages", "colSamples"), rows)
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
				req.Reason = &reason
			}
			if err := req.Validate(); err != nil {
				return Error(err, opts.JSON, NoCrawl(c, args[0]))
			}
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			res, err := svc.Fail(cmd.Context(), c, args[0], req)
			if err != nil {
				return Error(err, opts.JSON, NoCrawl(c, args[0]))
			}
			if opts.JSON {
				return opts.print(res)
			}
			lang := opts.f.Lang()
			if !res.Closed {
				return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: errors.New(words.Say(lang, "notRunning", args[0]))}
			}
			fmt.Fprintln(opts.f.Streams.Out, words.Say(lang, "closedFailed", args[0]))
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (kept as the crawl's error)")
	return cmd
}
