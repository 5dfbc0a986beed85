package archives

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// ArchivesOptions are the inputs of `ledgerctl archives`.
type ArchivesOptions struct {
	f        *cmdutil.Factory
	As       string
	Orgs     []string
	JSON     bool
	Before   string
	BeforeID string
	Why      bool
}

func NewCmdArchives(f *cmdutil.Factory) *cobra.Command {
	opts := &ArchivesOptions{f: f}
	cmd := &cobra.Command{
		Use:     "archives",
		Example: "  ledgerctl archives list --as alice --org acme\n  ledgerctl archives url ARCHIVE_ID --as alice --org acme\n  ledgerctl archives open ARCHIVE_ID --as alice --org acme\n  ledgerctl archives add s3://captures/a/b.result.json --as alice --org acme",
		Short:   "List archives or mint a URL as a given person, without a server",
		Long: `Runs the same functions as GET /api/archives and POST /api/archives/{id}/url,
with the identity given on the command line instead of a token. Useful to check
what someone can see; OpenFGA still decides.`,
	}
	cmd.PersistentFlags().StringVar(&opts.As, "as", "", "subject to act as (required)")
	cmd.PersistentFlags().StringSliceVar(&opts.Orgs, "org", nil, "organization the subject is a member of (repeatable)")
	cmd.PersistentFlags().BoolVar(&opts.JSON, "json", false, "print as JSON (the API's body)")
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the archives the subject may view, newest first",
		Example: "  ledgerctl archives list --as alice --org acme\n  ledgerctl archives list --as alice --org acme --json\n  ledgerctl archives list --as alice --org acme --before 2026-12-01T00:00:00Z\n  ledgerctl archives list --as bob --org partner --why",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return archivesListRun(cmd, opts) },
	}
	list.Flags().StringVar(&opts.Before, "before", "", "continue a previous page (the cursor it printed), or start before this time (RFC 3339)")
	list.Flags().StringVar(&opts.BeforeID, "before-id", "", "with a time in --before: start after this archive id")
	list.Flags().BoolVar(&opts.Why, "why", false, "say why the subject sees each archive (member of an organization, owner, a share until …), each reason confirmed by OpenFGA")
	url := &cobra.Command{
		Use:     "url ARCHIVE_ID",
		Short:   "Mint a 300-second presigned URL for one archive",
		Example: "  ledgerctl archives url 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 --as alice --org acme",
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return archivesURLRun(cmd, opts, args[0]) },
	}
	cmd.AddCommand(list, url, newCmdArchivesAdd(f, opts), newCmdArchivesOpen(f, opts), newCmdArchivesDelete(f, opts))
	return cmd
}

// ArchivesAddOptions are the inputs of `ledgerctl archives add`.
type ArchivesAddOptions struct {
	*ArchivesOptions
	Prefix      string
	Concurrency int
}

func newCmdArchivesAdd(f *cmdutil.Factory, parent *ArchivesOptions) *cobra.Command {
	opts := &ArchivesAddOptions{ArchivesOptions: parent}
	cmd := &cobra.Command{
		Use:   "add [MANIFEST_KEY...] --org ORG --as SUBJECT [--prefix PREFIX]",
		Short: "Register archives already in the bucket from their manifests",
		Long: `Reads each BrowserHive result manifest (.result.json) from the configured
bucket, records its capture as submitted by --as for --org, and admits the
archive with the same admission as level reports and reconcile: the
submission, the archives row and the queued OpenFGA tuples are written in one
transaction (deliver the tuples with ` + "`ledgerctl drain`" + ` or serve). See
docs/manifests.md for the fields read.

A key is a bare key or s3://<bucket>/<key> in the configured bucket; --prefix
adds every key ending in .result.json under a prefix. Keys are held to the
ledger's rules: no empty, "." or ".." segment, at most 1,024 bytes.

Each manifest ends as registered, known (its archive is already in the
ledger), no-archive (a failed capture: the submission is recorded, nothing
else), refused (the task is recorded for another organization, or with
another correlation: nothing is written), missing (no such object) or error
(a key the ledger does not read, a key S3 refuses, a manifest that is not a
report, a WACZ outside the bucket). Running the same add twice registers
nothing new.

Exit status 3 when some manifests were missing, refused or in error; 4 when
S3 or PostgreSQL did not answer (the run stops; running it again is safe).`,
		Example: "  ledgerctl archives add captures/2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4_.result.json --org acme --as alice\n" +
			"  ledgerctl archives add s3://browserhive/2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4_.result.json --org acme --as alice\n" +
			"  ledgerctl archives add --prefix captures/2026-11/ --org acme --as alice --json",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return archivesAddRun(cmd, opts, args) },
	}
	cmd.Flags().StringVar(&opts.Prefix, "prefix", "", "add every .result.json under this prefix (a bare prefix or s3://bucket/prefix)")
	cmd.Flags().IntVar(&opts.Concurrency, "concurrency", 8, "manifests handled at once")
	return cmd
}

func archivesAddRun(cmd *cobra.Command, opts *ArchivesAddOptions, keys []string) error {
	id, err := cmdutil.ActingAs(opts.As, opts.Orgs, "the person the captures are recorded as submitted by (their owner)")
	if err != nil {
		return err
	}
	if len(id.Organizations) != 1 {
		return cmdutil.Usagef("--org: give exactly one organization, the one the archives are attributed to (got %d)", len(id.Organizations))
	}
	org := id.Organizations[0]
	if cmd.Flags().Changed("prefix") && opts.Prefix == "" {
		return cmdutil.Usagef("--prefix: empty; give the prefix the manifests are under")
	}
	if len(keys) == 0 && opts.Prefix == "" {
		return cmdutil.Usagef("give at least one MANIFEST_KEY, or --prefix")
	}
	for _, k := range keys {
		if k == "" {
			return cmdutil.Usagef("MANIFEST_KEY: an empty argument")
		}
	}
	if opts.Concurrency < 1 || opts.Concurrency > 64 {
		return cmdutil.Usagef("--concurrency: must be between 1 and 64, got %d", opts.Concurrency)
	}
	a, err := opts.f.App(append([]string{"DATABASE_URL"}, cmdutil.S3Vars...)...)
	if err != nil {
		return err
	}
	bucket := a.Settings.S3Bucket
	if opts.Prefix != "" {
		if _, err := archive.ParsePrefix(opts.Prefix, bucket); err != nil {
			return cmdutil.Usagef("--prefix: %v", err)
		}
	}
	ctx := cmd.Context()
	adder, err := a.Adder(ctx)
	if err != nil {
		return err
	}
	bar := ui.NewProgress(opts.f.Streams.Err, "add", 0)
	adder.Concurrency, adder.Start, adder.Progress = opts.Concurrency, bar.SetTotal, func() { bar.Add(1) }
	res, err := adder.Add(ctx, archive.AddRequest{Keys: keys, Prefix: opts.Prefix, Org: org, SubmittedBy: id.Subject})
	bar.Done()
	if errors.Is(err, ledger.ErrUnreachable) {
		return &cmdutil.ExitError{Code: cmdutil.ExitUnreachable, Err: fmt.Errorf("archives add stopped (running it again is safe): %w", ledger.UnreachableCause(err))}
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := json.NewEncoder(opts.f.Streams.Out).Encode(res); err != nil {
			return err
		}
	} else {
		if res.Manifests == 0 {
			fmt.Fprintf(opts.f.Streams.Err, "no manifest (*%s) under %s\n", archive.ManifestSuffix, cmdutil.Printable(opts.Prefix))
		}
		p := ui.New(opts.f.Streams.Out)
		p.Table([]string{"manifests", "registered", "known", "no-archive", "refused", "missing", "errors"}, [][]string{{
			strconv.Itoa(res.Manifests), strconv.Itoa(res.Registered), strconv.Itoa(res.Known), strconv.Itoa(res.NoArchive),
			strconv.Itoa(res.Refused), strconv.Itoa(res.Missing), strconv.Itoa(res.Errored),
		}})
		for _, r := range res.Results {
			switch r.Outcome {
			case archive.AddMissing:
				p.Printf("missing: %s\n", cmdutil.Printable(r.Key))
			case archive.AddRefused, archive.AddError:
				p.Printf("%s: %s: %s\n", r.Outcome, cmdutil.Printable(r.Key), cmdutil.Printable(r.Reason))
			}
		}
	}
	if res.Registered > 0 {
		fmt.Fprintf(opts.f.Streams.Err, "%d archive(s) registered for %s; their permissions reach OpenFGA with `ledgerctl drain` (or serve)\n", res.Registered, org)
	}
	if res.Incomplete() {
		return &cmdutil.ExitError{Code: cmdutil.ExitIncomplete, Err: fmt.Errorf("%d manifest(s) missing, %d refused, %d in error; nothing of them was written",
			res.Missing, res.Refused, res.Errored)}
	}
	return nil
}

func (o *ArchivesOptions) identity() (string, []string, error) {
	id, err := cmdutil.ActingAs(o.As, o.Orgs, "the subject to act as")
	return id.Subject, id.Organizations, err
}

func archivesListRun(cmd *cobra.Command, opts *ArchivesOptions) error {
	subject, orgs, err := opts.identity()
	if err != nil {
		return err
	}
	start, err := archive.ParseListStart(nonEmpty(opts.Before), nonEmpty(opts.BeforeID))
	if err != nil {
		return cmdutil.AsFlags(err, listFlags)
	}
	start.Why = opts.Why
	a, err := opts.f.App("DATABASE_URL", "CAPTURE_LEDGER_FGA_STORE_ID", "CAPTURE_LEDGER_FGA_MODEL_ID")
	if err != nil {
		return err
	}
	access, err := a.Access(cmd.Context())
	if err != nil {
		return err
	}
	page, err := access.ListFrom(cmd.Context(), subject, orgs, start)
	if err != nil {
		return cmdutil.AsFlags(err, listFlags) // a --before handed to someone else
	}
	body := page.Body()
	if opts.JSON {
		return json.NewEncoder(opts.f.Streams.Out).Encode(body)
	}
	p := ui.New(opts.f.Streams.Out)
	lang := opts.f.Lang()
	if len(page.Archives) == 0 {
		fmt.Fprintln(opts.f.Streams.Err, listWords.Say(lang, "none", subject))
	} else {
		head, rows := archiveTable(page.Archives, opts.Why, lang)
		p.Table(head, rows)
	}
	if body.Next != nil {
		// The cursor opens only for this --as and these --org values.
		fmt.Fprintln(opts.f.Streams.Err, listWords.Say(lang, "more", body.Next.Before))
	}
	if page.Truncated {
		fmt.Fprintln(opts.f.Streams.Err, listWords.Say(lang, "budget"))
	}
	return nil
}

// listWords are what archives list prints for people, in English and
// Japanese (the console's words: pkg/web/archives.go); --json never uses
// them.
var listWords = cmdutil.Words{
	"colID":       {"id", "ID"},
	"colCaptured": {"captured", "取得日時"},
	"colSource":   {"source", "取得元"},
	"colLabels":   {"labels", "ラベル"},
	"colWacz":     {"wacz", "WACZ"},
	"colWhy":      {"why", "見える理由"},
	"incomplete":  {"incomplete", "不完全"},
	"whyOrg":      {"member of %s", "%s のメンバー"},
	"whyOwner":    {"owner", "自分の取得"},
	"whyShare":    {"shared with you", "自分に共有"},
	"whyShareOrg": {"shared with %s", "%s に共有"},
	"whyUntil":    {"%[1]s until %[2]s", "%[1]s（%[2]s まで）"},
	"none":        {"no archive visible to %s", "%s が見られるアーカイブはありません"},
	"more":        {"more: --before %s", "続き：--before %s"},
	"budget":      {"the list's check or time budget ran out before the page filled; continue with the cursor above", "ページが埋まる前に一覧の確認数か時間の上限に達しました。上のカーソルで続けてください"},
}

// reasonText says a confirmed reason in a few words, for the table, in
// lang.
func reasonText(lang i18n.Lang, r ledger.Reason) string {
	switch r.Kind {
	case ledger.ReasonOrganization:
		return listWords.Say(lang, "whyOrg", r.Organization)
	case ledger.ReasonOwner:
		return listWords.Say(lang, "whyOwner")
	}
	s := listWords.Say(lang, "whyShare")
	if r.Organization != "" {
		s = listWords.Say(lang, "whyShareOrg", r.Organization)
	}
	if r.Until != nil {
		s = listWords.Say(lang, "whyUntil", s, r.Until.UTC().Format("2006-01-02 15:04Z"))
	}
	return s
}

// archiveTable lays out archives list's table, in lang: id, captured,
// source, then labels and wacz ("incomplete" when the WACZ is known to lack
// something) only when some row has one — a column empty in every row is
// left out — and why with --why.
func archiveTable(archives []ledger.Archive, why bool, lang i18n.Lang) (head []string, rows [][]string) {
	var labels, incomplete bool
	for _, ar := range archives {
		labels = labels || len(ar.Labels) > 0
		incomplete = incomplete || (ar.WaczComplete != nil && !*ar.WaczComplete)
	}
	col := func(key string) string { return listWords.Say(lang, key) }
	head = []string{col("colID"), col("colCaptured"), col("colSource")}
	if labels {
		head = append(head, col("colLabels"))
	}
	if incomplete {
		head = append(head, col("colWacz"))
	}
	if why {
		head = append(head, col("colWhy"))
	}
	rows = make([][]string, len(archives))
	for i, ar := range archives {
		row := []string{ar.ID, ui.Time(ar.CapturedAt), ar.SourceURL}
		if labels {
			row = append(row, strings.Join(ar.Labels, ","))
		}
		if incomplete {
			state := ""
			if ar.WaczComplete != nil && !*ar.WaczComplete {
				state = col("incomplete")
			}
			row = append(row, state)
		}
		if why {
			var reasons []string
			if ar.Why != nil {
				for _, r := range *ar.Why {
					reasons = append(reasons, reasonText(lang, r))
				}
			}
			row = append(row, strings.Join(reasons, "; "))
		}
		rows[i] = row
	}
	return head, rows
}

// listFlags name the list's request fields as the flags that set them.
var listFlags = map[string]string{archive.FieldBefore: "--before", archive.FieldBeforeID: "--before-id", archive.FieldWhy: "--why"}

// nonEmpty is a flag's value as the list of values given: none when unset.
func nonEmpty(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}

func archivesURLRun(cmd *cobra.Command, opts *ArchivesOptions, rawID string) error {
	subject, orgs, err := opts.identity()
	if err != nil {
		return err
	}
	id, err := cmdutil.UUIDArg("ARCHIVE_ID", rawID)
	if err != nil {
		return err
	}
	a, err := opts.f.App(cmdutil.StoreSettings...)
	if err != nil {
		return err
	}
	access, err := a.Access(cmd.Context())
	if err != nil {
		return err
	}
	u, err := access.URL(cmd.Context(), subject, orgs, id)
	if errors.Is(err, ledger.ErrNotFound) {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("archive %s: not found (absent, or %s may not view it)", id, subject)}
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		return json.NewEncoder(opts.f.Streams.Out).Encode(u)
	}
	fmt.Fprintln(opts.f.Streams.Out, u.URL)
	fmt.Fprintf(opts.f.Streams.Err, "valid for %d seconds\n", u.ExpiresIn)
	return nil
}
