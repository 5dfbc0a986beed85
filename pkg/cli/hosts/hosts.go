package hosts

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// HostsOptions are the inputs of `ledgerctl hosts`.
type HostsOptions struct {
	f     *cmdutil.Factory
	JSON  bool
	Since string
	All   bool
}

func NewCmdHosts(f *cmdutil.Factory) *cobra.Command {
	opts := &HostsOptions{f: f}
	cmd := &cobra.Command{
		Use:     "hosts",
		Short:   "What every crawl and direct capture did to one host (operators, offline)",
		Example: "  ledgerctl hosts politeness www.example.com --since 24h",
	}
	pol := &cobra.Command{
		Use:   "politeness HOST",
		Short: "Prove a host was treated politely across every crawl, direct capture and serve process",
		Long: `Lists every capture of HOST (a host name with its port when not the default,
as crawls group pages: 127.0.0.1:8081) by any crawl or direct capture of any
organization, in any process, from the host lease table in PostgreSQL: when
each started and ended (PostgreSQL's clock), the gap since the previous end,
the least gap any party asked for and why (setting: a crawl's perHostDelayMs;
crawl-delay: robots.txt's; cap: a Crawl-delay cut to
CAPTURE_LEDGER_CRAWL_DELAY_MAX_MS; backoff: after a 429/503; host:
CAPTURE_LEDGER_HOST_DELAY_MS). An overlap is a capture that started while
CAPTURE_LEDGER_HOST_CAPTURES_AT_ONCE others ran; a short gap one that
started sooner than that least gap. Reads the database directly and asks no
one's permission: it is for operators.

--since takes a duration back from now (90m, 24h) or an RFC 3339 time.
Exits 1 on any overlap or short gap. A HOST given without a port that has
no capture, while that name with a port has some, gets a line on stderr
naming those hosts (the exit status stays 0).`,
		Example: "  ledgerctl hosts politeness www.example.com\n  ledgerctl hosts politeness 127.0.0.1:8081 --since 1h --json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			host, err := hostArg(args[0])
			if err != nil {
				return err
			}
			since, err := sinceFlag(opts.Since, time.Now())
			if err != nil {
				return err
			}
			a, err := f.App("DATABASE_URL")
			if err != nil {
				return err
			}
			st, err := a.Store(cmd.Context())
			if err != nil {
				return err
			}
			svc := &politeness.HostService{Store: st, AtOnce: a.Settings.HostAtOnce}
			rep, err := svc.Report(cmd.Context(), host, since)
			if err != nil {
				return err
			}
			if opts.JSON {
				if err := json.NewEncoder(f.Streams.Out).Encode(rep); err != nil {
					return err
				}
			} else {
				printHostPoliteness(f, rep, opts.All)
			}
			if rep.Captures == 0 && !hasPort(host) {
				portHint(cmd.Context(), f, svc, host, since)
			}
			if !rep.OK {
				return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("host %s was not treated politely: %d overlap(s), %d short gap(s)", host, rep.Overlaps, rep.ShortGaps)}
			}
			return nil
		},
	}
	pol.Flags().StringVar(&opts.Since, "since", "", "only captures that started since then: a duration back from now (24h) or an RFC 3339 time")
	pol.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	pol.Flags().BoolVar(&opts.All, "all", false, "list every capture, not only the last 50 and those that broke a promise")
	cmd.AddCommand(pol)
	return cmd
}

// hostArg reads HOST: a host name or address with an optional port, in the
// form crawls record it (lower case, IDN as punycode, default port left out
// only when it is 80 or 443 is not said).
func hostArg(raw string) (string, error) {
	bad := func(why string) error {
		return cmdutil.Usagef("HOST %s (for example www.example.com or 127.0.0.1:8081)", why)
	}
	if raw == "" || !utf8.ValidString(raw) || strings.ContainsFunc(raw, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
		return "", bad("must be a host name with an optional port, without spaces or control characters")
	}
	if len(raw) > 300 || strings.ContainsAny(raw, "/?#@\\") {
		return "", bad("must be a host name with an optional port, not a URL")
	}
	u, err := rules.ParseURL("http://" + raw + "/")
	if err != nil {
		return "", bad("is not a host name with an optional port")
	}
	host := u.Host
	// http:// drops :80; a host given with :80 keeps it (an https crawl
	// records it so).
	if strings.HasSuffix(raw, ":80") && !strings.HasSuffix(host, ":80") {
		host += ":80"
	}
	return host, nil
}

// portHintMax is how many hosts with a port portHint names.
const portHintMax = 10

// hasPort says whether host (as hostArg gives it) names a port.
func hasPort(host string) bool {
	_, _, err := net.SplitHostPort(host)
	return err == nil
}

// portHint tells, on stderr, that name (given without a port) has no
// capture since since, and which hosts of that name with a port have some:
// hosts are recorded with their port when it is not the scheme's default,
// so www.example.com finds nothing of www.example.com:8080. Nothing is
// printed when no such host has a capture either. The report is already
// out, so a failure to look says so on stderr and leaves the exit status to
// the report.
func portHint(ctx context.Context, f *cmdutil.Factory, svc *politeness.HostService, name string, since time.Time) {
	others, err := svc.WithPort(ctx, name, since, portHintMax+1)
	if err != nil {
		fmt.Fprintf(f.Streams.Err, "could not look for captures of %s with a port: %v\n", cmdutil.Printable(name), err)
		return
	}
	if len(others) == 0 {
		return
	}
	more := ""
	if len(others) > portHintMax {
		others, more = others[:portHintMax], ", …"
	}
	when := ""
	if !since.IsZero() {
		when = " since " + since.UTC().Format(time.RFC3339)
	}
	for i, h := range others {
		others[i] = cmdutil.Printable(h)
	}
	fmt.Fprintf(f.Streams.Err, "no capture of %s%s; captures exist of %s%s — hosts are named with their port (ledgerctl hosts politeness %s)\n",
		cmdutil.Printable(name), when, strings.Join(others, ", "), more, others[0])
}

// sinceFlag reads --since: empty (everything), a duration back from now,
// or an RFC 3339 time.
func sinceFlag(raw string, now time.Time) (time.Time, error) {
	if raw == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(raw); err == nil {
		if d < 0 {
			return time.Time{}, cmdutil.Usagef("--since must be a duration back from now (24h) or an RFC 3339 time, not a negative duration")
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, raw); err == nil {
		return t, nil
	}
	return time.Time{}, cmdutil.Usagef("--since must be a duration back from now (24h) or an RFC 3339 time (2026-12-01T09:00:00Z)")
}

func printHostPoliteness(f *cmdutil.Factory, rep politeness.HostReport, all bool) {
	p := ui.New(f.Streams.Out)
	ms := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatFloat(*v, 'f', 1, 64)
	}
	p.Printf("host %s: %d capture(s) by %d crawl(s) and %d direct capture(s) of %d organization(s); at most %d at once\n",
		rep.Host, rep.Captures, rep.Crawls, rep.Direct, len(rep.Organizations), rep.AtOnce)
	p.Printf("gaps %d (min %s ms, median %s ms), overlaps %d, short gaps %d, running %d, expired leases %d\n",
		rep.Gaps, ms(rep.MinGapMs), ms(rep.MedianGapMs), rep.Overlaps, rep.ShortGaps, rep.Running, rep.Expired)
	// Fairness between organizations (round robin per host: at most 1).
	who := ""
	if rep.MostTurnsWhileWaiting > 0 {
		who = fmt.Sprintf(" (%s waited while %s took them)", cmdutil.Printable(rep.TurnsWaiter), cmdutil.Printable(rep.TurnsTaker))
	}
	p.Printf("fairness: while an organization waited for its turn, another started at most %d capture(s)%s; longest wait %s ms\n",
		rep.MostTurnsWhileWaiting, who, ms(rep.LongestWaitMs))
	var rows [][]string
	for i, e := range rep.Entries {
		if !all && !e.Overlap && !e.ShortGap && i < len(rep.Entries)-50 {
			continue
		}
		who := "capture"
		if e.CrawlID != nil {
			who = "crawl " + (*e.CrawlID)[:8]
		}
		end := "running"
		if e.EndedAt != nil {
			end = e.EndedAt.Format("15:04:05.000")
			if e.Expired {
				end += " (expired)"
			}
		}
		verdict := "ok"
		switch {
		case e.Overlap:
			verdict = "OVERLAP"
		case e.ShortGap:
			verdict = "SHORT"
		}
		rows = append(rows, []string{e.StartedAt.Format("15:04:05.000"), end, ms(e.GapMs),
			fmt.Sprintf("%d (%s)", e.RequiredMs, e.RequiredSource), e.Org, who, e.URL, verdict})
	}
	if len(rows) < len(rep.Entries) {
		p.Printf("(the last 50 captures and every one that broke a promise; --all lists them all)\n")
	}
	p.Table([]string{"started", "ended", "gap ms", "required ms", "organization", "by", "url", ""}, rows)
}
