package capture

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// CaptureOptions are the flags of `ledgerctl capture`.
type CaptureOptions struct {
	f      *cmdutil.Factory
	As     string
	Orgs   []string
	Engine string
	JSON   bool
}

func NewCmdCapture(f *cmdutil.Factory) *cobra.Command {
	opts := &CaptureOptions{f: f}
	cmd := &cobra.Command{
		Use:   "capture URL... --org ORG --as SUBJECT [--engine browser|http]",
		Short: "Capture pages with the built-in capturer and register their archives",
		Long: `Capture loads each URL with the built-in capturer, writes its WACZ, links
file and result manifest into the configured bucket in BrowserHive's layout
(<taskId>_<correlationId>.wacz, .links.json, .result.json), records the
capture as submitted by --as for --org, and registers the archive with the
same admission as level reports and reconcile (the archive row and its
OpenFGA tuples in one transaction), then delivers the tuples to OpenFGA
and indexes the archives for search before it exits, so they are listable
and searchable at once (what cannot be done now is named, with
` + "`ledgerctl drain`" + ` or ` + "`ledgerctl search reindex`" + ` to finish it).

--as needs can_submit on --org (through its membership), like the API.

Engines: browser (the default, headless Chromium: runs the page's
JavaScript, records every response it loads, takes a screenshot) and http
(Go's HTTP client: the document and the stylesheets, scripts, images and
fonts its HTML and CSS name; runs no JavaScript). Captures refuse loopback,
private and link-local addresses, at every redirect hop, unless
CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE=1.

A page that fails (connection, timeout, HTTP error, refused address) is
recorded with its manifest and no archive; the command then exits 3.`,
		Example: "  ledgerctl capture https://example.com/ --org acme --as alice\n" +
			"  ledgerctl capture https://example.com/ https://example.com/about --org acme --as alice --engine http --json",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return captureRun(cmd, opts, args) },
	}
	cmd.Flags().StringVar(&opts.As, "as", "", "the subject the captures are submitted by (their owner)")
	cmd.Flags().StringSliceVar(&opts.Orgs, "org", nil, "the organization the archives belong to (exactly one)")
	cmd.Flags().StringVar(&opts.Engine, "engine", "", "capture engine: browser, http or auto (default: CAPTURE_LEDGER_CAPTURE_ENGINE, else browser)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON object per URL")
	return cmd
}

func captureRun(cmd *cobra.Command, opts *CaptureOptions, urls []string) error {
	id, err := cmdutil.ActingAs(opts.As, opts.Orgs, "the person the captures are submitted by (their owner)")
	if err != nil {
		return err
	}
	if len(id.Organizations) != 1 {
		return cmdutil.Usagef("--org: give exactly one organization, the one the archives belong to (got %d)", len(id.Organizations))
	}
	if opts.Engine != "" && !slices.Contains(capture.Engines, opts.Engine) {
		return cmdutil.Usagef("--engine: %q is not an engine (known: %s)", opts.Engine, strings.Join(capture.Engines, ", "))
	}
	req := archive.CaptureRequest{URLs: urls, Org: id.Organizations[0], Subject: id.Subject}
	if err := archive.CheckCaptureRequest(req); err != nil {
		return captureFieldError(err)
	}
	a, err := opts.f.App(cmdutil.StoreSettings...)
	if err != nil {
		return err
	}
	// Refused before the engine starts: nothing is captured unsigned.
	if err := a.DirectCapturesRefused(); err != nil {
		return err
	}
	eng, err := a.CaptureEngine(opts.Engine)
	if err != nil {
		var ce *capture.ConfigError
		if errors.As(err, &ce) {
			return cmdutil.Usagef("%v", err)
		}
		return err
	}
	defer eng.Close()
	ctx := cmd.Context()
	svc, err := a.Captures(ctx, eng, "ledgerctl "+cmdutil.Version)
	if err != nil {
		return err
	}
	p := ui.New(opts.f.Streams.Err)
	enc := json.NewEncoder(opts.f.Streams.Out)
	svc.Progress = func(pg archive.CapturedPage) {
		pg.Error = operatorReason(pg)
		if opts.JSON {
			_ = enc.Encode(pg)
			return
		}
		switch pg.Status {
		case archive.Captured:
			note := ""
			if !pg.Complete {
				note = " (incomplete: a size cap cut a body short)"
			}
			fmt.Fprintf(opts.f.Streams.Out, "captured  %s  archive %s%s\n", cmdutil.Printable(pg.URL), pg.ArchiveID, note)
		default:
			fmt.Fprintf(opts.f.Streams.Out, "%-8s  %s  %s\n", pg.Status, cmdutil.Printable(pg.URL), cmdutil.Printable(pg.Error))
		}
	}
	p.Printf("capturing %d page(s) with the %s engine for %s\n", len(urls), eng.Name(), req.Org)
	res, err := svc.Capture(ctx, req)
	if errors.Is(err, ledger.ErrNotFound) {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("%s may not submit captures for %s (can_submit)", id.Subject, req.Org)}
	}
	var quota *archive.QuotaError
	if errors.As(err, &quota) {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("nothing was captured: %w", quota)}
	}
	if errors.Is(err, ledger.ErrUnreachable) {
		return &cmdutil.ExitError{Code: cmdutil.ExitUnreachable, Err: fmt.Errorf("capture stopped after %d page(s): %w", len(res.Pages), ledger.UnreachableCause(err))}
	}
	if err != nil {
		return err
	}
	if n := len(res.Pages) - res.Failed(); n > 0 {
		fmt.Fprintf(opts.f.Streams.Err, "%d archive(s) registered for %s; ", n, req.Org)
		// capture's own lines are English (README): so is this one.
		cmdutil.Deliver(ctx, a, opts.f.Streams.Err, i18n.English)
		indexNow(ctx, a, archiveIDs(res), opts.f.Streams.Err)
	}
	if n := res.Failed(); n > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitIncomplete, Err: fmt.Errorf("%d of %d page(s) were not captured", n, len(res.Pages))}
	}
	return nil
}

// refusedHint is what `ledgerctl capture` adds to the coarse "refused by
// policy": the address policy refuses only addresses that are not public,
// and only while CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE is not 1 (pkg/capture,
// ssrf.go). The API tells its callers the coarse words alone; this command is
// run by whoever sets the configuration, so it names the setting. It still
// names no address: the detail stays in the log and the manifest.
var refusedHint = fmt.Sprintf("the page's address (or a redirect hop's) is not public — loopback, private, link-local or reserved; set %s=1 to capture such addresses", capture.EnvAllowPrivate)

// operatorReason is the reason the command prints for pg: the coarse one,
// with refusedHint after a refusal by the address policy.
func operatorReason(pg archive.CapturedPage) string {
	if pg.Status == archive.CaptureFailed && pg.Error == capture.CoarseRefused {
		return pg.Error + ": " + refusedHint
	}
	return pg.Error
}

// captureFieldError names the argument or flag a request field came from.
func captureFieldError(err error) error {
	var fe *ledger.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	var i int
	switch {
	case fe.Field == "organization":
		return cmdutil.Usagef("--org %s", fe.Reason)
	case fe.Field == "urls":
		return cmdutil.Usagef("URL: %s", fe.Reason)
	case sscanIndex(fe.Field, "urls/%d", &i):
		return cmdutil.Usagef("URL #%d %s", i+1, fe.Reason)
	}
	return cmdutil.Usagef("%v", err)
}

func sscanIndex(s, format string, i *int) bool {
	n, err := fmt.Sscanf(s, format, i)
	return err == nil && n == 1
}
