package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/search"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// SearchOptions are the inputs of `ledgerctl search`.
type SearchOptions struct {
	f      *cmdutil.Factory
	As     string
	Orgs   []string
	JSON   bool
	Limit  int
	Cursor string
	// NoWait makes reindex only clear indexed_at.
	NoWait bool
}

// ArgsOfItsOwn annotates a command that has subcommands and also runs
// with arguments of its own: `ledgerctl search QUERY` beside `search
// reindex` (a query that is a subcommand's name is quoted with a second
// word, or typed after --: `ledgerctl search -- status`).
const ArgsOfItsOwn = "args-of-its-own"

func NewCmdSearch(f *cmdutil.Factory) *cobra.Command {
	opts := &SearchOptions{f: f}
	cmd := &cobra.Command{
		Use:   "search QUERY --as SUBJECT --org ORG",
		Short: "Search the text of archived pages as a given person, without a server",
		Long: `Runs the same function as GET /api/search, with the identity given on the
command line instead of a token: the index is asked for matching pages, and
only those of archives OpenFGA says the subject may view are shown. Several
arguments are one query; words in "double quotes" are a phrase. See
docs/search.md for how words match (CJK bigrams, English stems).

The index is the Bleve directory CAPTURE_LEDGER_SEARCH_DIR, or OpenSearch when
CAPTURE_LEDGER_OPENSEARCH_URL is set. While a serve of this database holds
the Bleve index, the search is sent to it (its peer address and secret are in
PostgreSQL) and it runs the search the same way; with no serve, this command
opens the directory itself, which must be the database's index. When the
directory is open in another process that is not recorded (a serve whose
lease ran out), the search goes through serve's admin socket (admin.sock
beside the index directory, readable by serve's user only; no token needed).`,
		Example: "  ledgerctl search 'レスポンシブ' --as alice --org acme\n" +
			"  ledgerctl search '\"responsive design\" tokyo' --as alice --org acme --limit 50 --json\n" +
			"  ledgerctl search reindex\n" +
			"  ledgerctl search status",
		Args:        cobra.MinimumNArgs(1),
		Annotations: map[string]string{ArgsOfItsOwn: "QUERY"},
		RunE:        func(cmd *cobra.Command, args []string) error { return searchRun(cmd, opts, strings.Join(args, " ")) },
	}
	cmd.Flags().StringVar(&opts.As, "as", "", "subject to act as (required)")
	cmd.Flags().StringSliceVar(&opts.Orgs, "org", nil, "organization the subject is a member of (repeatable)")
	cmd.Flags().IntVar(&opts.Limit, "limit", search.DefaultLimit, fmt.Sprintf("hits per page (1-%d)", search.MaxLimit))
	cmd.Flags().StringVar(&opts.Cursor, "cursor", "", "continue after a previous page (the cursor it printed)")
	cmd.PersistentFlags().BoolVar(&opts.JSON, "json", false, "print as JSON (the API's body)")

	reindex := &cobra.Command{
		Use:   "reindex",
		Short: "Rebuild the search index from the archives (clears indexed_at)",
		Long: `Runs the one statement that rebuilds the index — every archive's indexed_at
back to NULL (failed archives are retried now too) — then indexes them all,
with a progress bar on a terminal. When a running serve holds the Bleve
index, serve's background indexer does the work and this command follows
its progress until nothing is pending. Answers stay the same throughout:
an archive's pages are replaced, not dropped first.

Exit status 3 when some archives could not be indexed (see ledgerctl search
status); 4 when PostgreSQL, S3 or the index did not answer (running it again
is safe).`,
		Example: "  ledgerctl search reindex\n  ledgerctl search reindex --no-wait",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return searchReindexRun(cmd, opts) },
	}
	reindex.Flags().BoolVar(&opts.NoWait, "no-wait", false, "only clear indexed_at; serve (or the next reindex) indexes")
	status := &cobra.Command{
		Use:   "status",
		Short: "Count the archives indexed, pending and failed, with the reasons",
		Long: `Reads the ledger only (it works while serve holds the index): how many
archives are indexed, pending (never tried, or due for a retry) and failed
(the last try failed, with why, and when it is retried), which index they
were indexed into, and which process holds it now.`,
		Example: "  ledgerctl search status\n  ledgerctl search status --json",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return searchStatusRun(cmd, opts) },
	}
	cmd.AddCommand(reindex, status)
	return cmd
}

func searchRun(cmd *cobra.Command, opts *SearchOptions, raw string) error {
	id, err := cmdutil.ActingAs(opts.As, opts.Orgs, "the subject whose view to search")
	if err != nil {
		return err
	}
	// The use-case's validation, its fields named after the arguments.
	if opts.Limit < 1 {
		return cmdutil.Usagef("--limit must be an integer between 1 and %d", search.MaxLimit)
	}
	req, err := search.NewRequest(raw, opts.Limit, opts.Cursor)
	var fe *ledger.FieldError
	if errors.As(err, &fe) {
		return cmdutil.Usagef("%s %s", map[string]string{"q": "QUERY", "limit": "--limit", "cursor": "--cursor"}[fe.Field], fe.Reason)
	}
	if err != nil {
		return err
	}
	a, err := opts.f.App("DATABASE_URL", "CAPTURE_LEDGER_FGA_STORE_ID", "CAPTURE_LEDGER_FGA_MODEL_ID")
	if err != nil {
		return err
	}
	var page search.Page
	// The serve holding the database's index answers when one does.
	searcher, err := a.CommandSearcher(cmd.Context())
	switch {
	case errors.Is(err, search.ErrIndexBusy):
		// A running serve holds the Bleve index: ask it through its admin
		// socket (same user, same machine).
		params := url.Values{"q": {raw}, "limit": {strconv.Itoa(opts.Limit)}}
		if opts.Cursor != "" {
			params.Set("cursor", opts.Cursor)
		}
		sock := app.AdminSocketPath(a.Settings.SearchDir)
		page, err = app.AdminSearch(cmd.Context(), sock, id.Subject, id.Organizations, params)
		var ae *app.AdminError
		if errors.As(err, &ae) {
			return cmdutil.Usagef("%s", ae.Message)
		}
		if err != nil {
			return fmt.Errorf("%w; and serve's admin socket did not answer: %v", search.ErrIndexBusy, err)
		}
	case err != nil:
		return err
	default:
		page, err = searcher.Search(cmd.Context(), id.Subject, id.Organizations, req)
		if errors.Is(err, search.ErrBadCursor) {
			return cmdutil.Usagef("--cursor %v", err)
		}
		if err != nil {
			return err
		}
	}
	if opts.JSON {
		return json.NewEncoder(opts.f.Streams.Out).Encode(page)
	}
	printHits(ui.New(opts.f.Streams.Out), opts.f.Streams.Err, opts.f.Lang(), id.Subject, page)
	return nil
}

// words are what a search prints for people, in English and Japanese
// (the console's words: pkg/web/search.go); --json never uses them.
var words = cmdutil.Words{
	"noTitle":      {"(no title)", "（タイトルなし）"},
	"archive":      {"archive %s", "アーカイブ %s"},
	"withheld":     {"text withheld: %s", "本文はアーカイブに入っていません：%s"},
	"others":       {"%d other captures of this page", "このページの他の取得 %d 件"},
	"others_one":   {"1 other capture of this page", "このページの他の取得 1 件"},
	"othersMore":   {"%d other captures of this page (and more)", "このページの他の取得 %d 件以上"},
	"shownAtLeast": {"%[1]d hit(s) shown; at least %[2]d visible to %[3]s", "%[1]d 件を表示（%[3]s が見られるのは少なくとも %[2]d 件）"},
	"shownOf":      {"%[1]d hit(s) shown of %[2]d visible to %[3]s", "%[1]d 件を表示（%[3]s が見られるのは %[2]d 件）"},
	"shown":        {"%d hit(s) shown", "%d 件を表示"},
	"more":         {"more: --cursor %s", "続き：--cursor %s"},
	"budget":       {"the search's check or time budget ran out before the page filled; continue with the cursor above", "ページが埋まる前に検索の確認数か時間の上限に達しました。上のカーソルで続けてください"},
}

// printHits prints page's hits to out and what the search found to errw,
// in lang: each hit's title, capture time, URL, archive, the other
// captures of its page and its matches between « and ».
func printHits(p *ui.Printer, errw io.Writer, lang i18n.Lang, subject string, page search.Page) {
	for i, h := range page.Hits {
		title := h.Title
		if title == "" {
			title = words.Say(lang, "noTitle")
		}
		p.Printf("%d. %s  %s\n", i+1, cmdutil.Printable(title), p.Dim(ui.Time(h.CapturedAt)))
		p.Printf("   %s\n", cmdutil.Printable(h.URL))
		p.Printf("   %s\n", p.Dim(words.Say(lang, "archive", h.ArchiveID)))
		if h.TextWithheld != nil {
			p.Printf("   %s\n", p.Dim(words.Say(lang, "withheld", cmdutil.Printable(*h.TextWithheld))))
		}
		if n := len(h.OtherCaptures); n > 0 {
			line := words.Say(lang, "others_one")
			switch {
			case h.OtherCapturesMore:
				line = words.Say(lang, "othersMore", n)
			case n > 1:
				line = words.Say(lang, "others", n)
			}
			p.Printf("   %s\n", p.Dim(line))
		}
		for _, frag := range h.Highlight {
			p.Printf("   %s\n", plainSnippet(frag))
		}
	}
	switch {
	case page.Total != nil && !page.TotalExact:
		fmt.Fprintln(errw, words.Say(lang, "shownAtLeast", len(page.Hits), *page.Total, subject))
	case page.Total != nil:
		fmt.Fprintln(errw, words.Say(lang, "shownOf", len(page.Hits), *page.Total, subject))
	default:
		fmt.Fprintln(errw, words.Say(lang, "shown", len(page.Hits)))
	}
	if page.Next != nil {
		// The cursor opens only for this --as, these --org values and this query.
		fmt.Fprintln(errw, words.Say(lang, "more", *page.Next))
	}
	if page.Truncated {
		fmt.Fprintln(errw, words.Say(lang, "budget"))
	}
}

// plainSnippet turns a highlighted fragment (HTML) into terminal text: the
// matches between « and ».
func plainSnippet(frag string) string {
	frag = strings.NewReplacer(search.MarkOpen, "«", search.MarkClose, "»").Replace(frag)
	return cmdutil.Printable(html.UnescapeString(frag))
}

func searchReindexRun(cmd *cobra.Command, opts *SearchOptions) error {
	a, err := opts.f.App(append([]string{"DATABASE_URL"}, cmdutil.S3Vars...)...)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	st, err := a.Store(ctx)
	if err != nil {
		return cmdutil.Unreachable("search reindex", err)
	}
	n, err := st.ClearIndexed(ctx)
	if err != nil {
		return cmdutil.Unreachable("search reindex", err)
	}
	w := opts.f.Streams.Err
	fmt.Fprintf(w, "%d archive(s) to index again (indexed_at cleared)\n", n)
	if opts.NoWait {
		return nil
	}
	counts, _, err := st.IndexStatus(ctx, 0)
	if err != nil {
		return cmdutil.Unreachable("search reindex", err)
	}
	ix, err := a.RebuildIndexer(ctx)
	if errors.Is(err, search.ErrIndexBusy) {
		fmt.Fprintln(w, "the index is held by a running serve: following its indexer")
		return followIndexing(ctx, opts, st, counts.Archives)
	}
	if err != nil {
		return cmdutil.Unreachable("search reindex", err)
	}
	bar := ui.NewProgress(w, "index", counts.Archives-counts.Indexed)
	res, err := ix.IndexPending(ctx, func() { bar.Add(1) })
	bar.Done()
	if err != nil {
		return cmdutil.Unreachable("search reindex", err)
	}
	if opts.JSON {
		if err := json.NewEncoder(opts.f.Streams.Out).Encode(res); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "indexed %d archive(s), %d page(s); %d failed; %d malformed pages.jsonl line(s) skipped\n", res.Indexed, res.Pages, res.Failed, res.SkippedLines)
	if res.Failed > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitIncomplete, Err: fmt.Errorf("%d archive(s) could not be indexed: see `ledgerctl search status`", res.Failed)}
	}
	return nil
}

// followIndexing shows serve's indexer catching up, from the ledger, until
// nothing is pending.
func followIndexing(ctx context.Context, opts *SearchOptions, st *postgres.Store, total int) error {
	bar := ui.NewProgress(opts.f.Streams.Err, "index", total)
	defer bar.Done()
	for {
		c, _, err := st.IndexStatus(ctx, 0)
		if err != nil {
			return cmdutil.Unreachable("search reindex", err)
		}
		bar.Add(c.Indexed + c.Failed - bar.Count())
		if c.Pending == 0 {
			if c.Failed > 0 {
				return &cmdutil.ExitError{Code: cmdutil.ExitIncomplete, Err: fmt.Errorf("%d archive(s) could not be indexed: see `ledgerctl search status`", c.Failed)}
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// SearchStatus is `ledgerctl search status --json`.
type SearchStatus struct {
	Archives int                   `json:"archives"`
	Indexed  int                   `json:"indexed"`
	Pending  int                   `json:"pending"`
	Failed   int                   `json:"failed"`
	Failures []SearchStatusFailure `json:"failures"`
	// Index is the index the marks were made for ("" before any), and
	// Holder who holds it now (Bleve; null when no process does).
	Index  string              `json:"index"`
	Holder *SearchStatusHolder `json:"holder"`
}

// SearchStatusHolder is the process holding the Bleve index.
type SearchStatusHolder struct {
	// Address is where it answers forwarded searches ("" for a command).
	Address    string    `json:"address"`
	LeaseUntil time.Time `json:"leaseUntil"`
}

// SearchStatusFailure is one archive that could not be indexed.
type SearchStatusFailure struct {
	ArchiveID string    `json:"archiveId"`
	ObjectKey string    `json:"objectKey"`
	Reason    string    `json:"reason"`
	Attempts  int       `json:"attempts"`
	FailedAt  time.Time `json:"failedAt"`
	RetryAt   time.Time `json:"retryAt"`
}

// statusFailures is how many failures status lists.
const statusFailures = 100

func searchStatusRun(cmd *cobra.Command, opts *SearchOptions) error {
	a, err := opts.f.App("DATABASE_URL")
	if err != nil {
		return err
	}
	st, err := a.Store(cmd.Context())
	if err != nil {
		return cmdutil.Unreachable("search status", err)
	}
	counts, failures, err := st.IndexStatus(cmd.Context(), statusFailures)
	if err != nil {
		return cmdutil.Unreachable("search status", err)
	}
	out := SearchStatus{Archives: counts.Archives, Indexed: counts.Indexed, Pending: counts.Pending, Failed: counts.Failed, Failures: []SearchStatusFailure{}}
	rec, err := st.SearchIndexer(cmd.Context())
	if err != nil {
		return cmdutil.Unreachable("search status", err)
	}
	out.Index = rec.IndexID
	if rec.Live {
		out.Holder = &SearchStatusHolder{Address: rec.Address, LeaseUntil: rec.Until.UTC()}
	}
	for _, f := range failures {
		out.Failures = append(out.Failures, SearchStatusFailure{ArchiveID: f.ArchiveID, ObjectKey: f.ObjectKey, Reason: f.Reason, Attempts: f.Attempts, FailedAt: f.FailedAt.UTC(), RetryAt: f.RetryAt.UTC()})
	}
	if opts.JSON {
		return json.NewEncoder(opts.f.Streams.Out).Encode(out)
	}
	p := ui.New(opts.f.Streams.Out)
	p.Table([]string{"archives", "indexed", "pending", "failed"}, [][]string{{
		strconv.Itoa(out.Archives), strconv.Itoa(out.Indexed), strconv.Itoa(out.Pending), strconv.Itoa(out.Failed),
	}})
	switch {
	case out.Holder != nil && out.Holder.Address != "":
		p.Printf("index %s, held by the serve answering at %s\n", cmdutil.Printable(out.Index), out.Holder.Address)
	case out.Holder != nil:
		p.Printf("index %s, held by a ledgerctl command while it indexes\n", cmdutil.Printable(out.Index))
	case out.Index != "":
		p.Printf("index %s, held by no process now\n", cmdutil.Printable(out.Index))
	}
	if len(out.Failures) > 0 {
		p.Println()
		rows := make([][]string, len(out.Failures))
		for i, f := range out.Failures {
			rows[i] = []string{f.ArchiveID, strconv.Itoa(f.Attempts), ui.Time(f.RetryAt), cmdutil.Printable(f.Reason)}
		}
		p.Table([]string{"failed archive", "attempts", "retry at", "reason"}, rows)
		if out.Failed > len(out.Failures) {
			p.Printf("(%d more)\n", out.Failed-len(out.Failures))
		}
	}
	return nil
}
