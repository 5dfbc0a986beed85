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
	lang := opts.f.Lang()
	enc := json.NewEncoder(opts.f.Streams.Out)
	svc.Progress = func(pg archive.CapturedPage) {
		pg.Error = operatorReason(pg)
		if opts.JSON {
			_ = enc.Encode(pg)
			return
		}
		switch pg.Status {
		case archive.Captured:
			line := words.Say(lang, "captured", cmdutil.Printable(pg.URL), pg.ArchiveID)
			if !pg.Complete {
				line += words.Say(lang, "incomplete")
			}
			fmt.Fprintln(opts.f.Streams.Out, line)
		default:
			fmt.Fprintln(opts.f.Streams.Out, words.Say(lang, "notCaptured", say(lang, string(pg.Status)), cmdutil.Printable(pg.URL), cmdutil.Printable(pg.Error)))
		}
	}
	p.Println(words.Say(lang, "capturing", len(urls), eng.Name(), req.Org))
	if opts.JSON {
		lang = i18n.English // the errors below, for scripts
	}
	res, err := svc.Capture(ctx, req)
	if errors.Is(err, ledger.ErrNotFound) {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: errors.New(words.Say(lang, "mayNotSubmit", id.Subject, req.Org))}
	}
	var quota *archive.QuotaError
	if errors.As(err, &quota) {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("%s: %w", words.Say(lang, "nothingCaptured"), quota)}
	}
	if errors.Is(err, ledger.ErrUnreachable) {
		return &cmdutil.ExitError{Code: cmdutil.ExitUnreachable, Err: fmt.Errorf("%s: %w", words.Say(lang, "stoppedAfter", len(res.Pages)), ledger.UnreachableCause(err))}
	}
	if err != nil {
		return err
	}
	if n := len(res.Pages) - res.Failed(); n > 0 {
		fmt.Fprint(opts.f.Streams.Err, words.Say(lang, "registered", n, req.Org))
		cmdutil.Deliver(ctx, a, opts.f.Streams.Err, lang)
		indexNow(ctx, a, archiveIDs(res), opts.f.Streams.Err, lang)
	}
	if n := res.Failed(); n > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitIncomplete, Err: errors.New(words.Say(lang, "someNotCaptured", n, len(res.Pages)))}
	}
	return nil
}

// words are what capture prints for people, in English and Japanese (the
// console's words: pkg/web/capture.go); --json never uses them. A page's
// reason for failing is the capture's own (English) words.
var words = cmdutil.Words{
	"capturing":       {"capturing %[1]d page(s) with the %[2]s engine for %[3]s", "%[3]s のために %[2]s エンジンで %[1]d ページをキャプチャします"},
	"captured":        {"captured  %[1]s  archive %[2]s", "取得  %[1]s  アーカイブ %[2]s"},
	"incomplete":      {" (incomplete: a size cap cut a body short)", "（不完全：サイズの上限で本文の一部が切り捨てられました）"},
	"notCaptured":     {"%-8[1]s  %[2]s  %[3]s", "%[1]s  %[2]s  %[3]s"},
	"status:failed":   {"failed", "失敗"},
	"status:error":    {"error", "エラー"},
	"mayNotSubmit":    {"%[1]s may not submit captures for %[2]s (can_submit)", "%[1]s は %[2]s のキャプチャを依頼できません（can_submit）"},
	"nothingCaptured": {"nothing was captured", "何もキャプチャしませんでした"},
	"stoppedAfter":    {"capture stopped after %d page(s)", "%d ページでキャプチャが止まりました"},
	"registered":      {"%[1]d archive(s) registered for %[2]s; ", "%[2]s のアーカイブを %[1]d 件登録しました。"},
	"someNotCaptured": {"%[1]d of %[2]d page(s) were not captured", "%[2]d ページ中 %[1]d ページをキャプチャできませんでした"},

	"indexBusy":        {"search: the index is held by the running serve, whose indexer adds them", "検索：索引は実行中の serve が持っており、その索引処理が追加します"},
	"indexUnreachable": {"search: not indexed yet, a dependency did not answer (%v): `ledgerctl search reindex` (or serve) indexes them", "検索：まだ索引に入っていません。依存先が応答しませんでした（%v）。`ledgerctl search reindex`（または serve）が索引に入れます"},
	"indexFailed":      {"search: not indexed yet (%v): `ledgerctl search reindex` (or serve) indexes them", "検索：まだ索引に入っていません（%v）。`ledgerctl search reindex`（または serve）が索引に入れます"},
	"indexSome":        {"search: %[1]d archive(s) indexed, %[2]d could not be: see `ledgerctl search status`", "検索：アーカイブ %[1]d 件を索引に入れ、%[2]d 件は入れられませんでした。`ledgerctl search status` を見てください"},
	"indexDone":        {"search: %[1]d archive(s) indexed (%[2]d page(s)): a search finds them now", "検索：アーカイブ %[1]d 件（%[2]d ページ）を索引に入れました。もう検索で見つかります"},
}

// say is a capture status in lang (a status without words, as it is).
func say(lang i18n.Lang, status string) string {
	if _, ok := words["status:"+status]; ok {
		return words.Say(lang, "status:"+status)
	}
	return status
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
