package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// ArchivesOptions are the inputs of `ledgerctl archives`.
type ArchivesOptions struct {
	f        *Factory
	As       string
	Orgs     []string
	JSON     bool
	Before   string
	BeforeID string
}

func newCmdArchives(f *Factory) *cobra.Command {
	opts := &ArchivesOptions{f: f}
	cmd := &cobra.Command{
		Use:   "archives",
		Short: "List archives or mint a URL as a given person, without a server",
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
		Example: "  ledgerctl archives list --as alice --org acme\n  ledgerctl archives list --as alice --org acme --json\n  ledgerctl archives list --as alice --org acme --before 2026-12-01T00:00:00Z",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return archivesListRun(cmd, opts) },
	}
	list.Flags().StringVar(&opts.Before, "before", "", "continue a previous page (the cursor it printed), or start before this time (RFC 3339)")
	list.Flags().StringVar(&opts.BeforeID, "before-id", "", "with a time in --before: start after this archive id")
	url := &cobra.Command{
		Use:     "url ARCHIVE_ID",
		Short:   "Mint a 300-second presigned URL for one archive",
		Example: "  ledgerctl archives url 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 --as alice --org acme",
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return archivesURLRun(cmd, opts, args[0]) },
	}
	cmd.AddCommand(list, url)
	return cmd
}

func (o *ArchivesOptions) identity() (string, []string, error) {
	subject := strings.TrimSpace(o.As)
	if subject == "" {
		return "", nil, usagef("--as is required: the subject to act as")
	}
	var orgs []string
	for _, org := range o.Orgs {
		if org = strings.TrimSpace(org); org != "" {
			orgs = append(orgs, org)
		}
	}
	return subject, orgs, nil
}

func archivesListRun(cmd *cobra.Command, opts *ArchivesOptions) error {
	subject, orgs, err := opts.identity()
	if err != nil {
		return err
	}
	q := map[string][]string{}
	if opts.Before != "" {
		q["before"] = []string{opts.Before}
	}
	if opts.BeforeID != "" {
		q["beforeId"] = []string{opts.BeforeID}
	}
	cursor, err := api.ParseArchiveCursor(q)
	if err != nil {
		return usagef("%s", strings.NewReplacer("querystring/beforeId", "--before-id", "querystring/before", "--before").Replace(err.Error()))
	}
	a, err := opts.f.App("DATABASE_URL", "CAPTURE_LEDGER_FGA_STORE_ID", "CAPTURE_LEDGER_FGA_MODEL_ID")
	if err != nil {
		return err
	}
	access, err := a.Access(cmd.Context())
	if err != nil {
		return err
	}
	at, err := cursor.Open(cmd.Context(), access, subject, orgs)
	var bad *api.BadRequest
	if errors.As(err, &bad) {
		return usagef("%s", strings.Replace(bad.Message, "querystring/before", "--before", 1))
	}
	if err != nil {
		return err
	}
	page, err := access.List(cmd.Context(), subject, orgs, at)
	if err != nil {
		return err
	}
	body := api.NewArchivePage(page)
	if opts.JSON {
		return json.NewEncoder(opts.f.Streams.Out).Encode(body)
	}
	p := ui.New(opts.f.Streams.Out)
	if len(page.Archives) == 0 {
		fmt.Fprintln(opts.f.Streams.Err, "no archive visible to "+subject)
	} else {
		rows := make([][]string, len(page.Archives))
		for i, ar := range page.Archives {
			complete := ""
			if ar.WaczComplete != nil && !*ar.WaczComplete {
				complete = "incomplete"
			}
			rows[i] = []string{ar.ID, ar.CapturedAt.Local().Format(time.DateTime), ar.SourceURL, strings.Join(ar.Labels, ","), complete}
		}
		p.Table([]string{"id", "captured", "source", "labels", ""}, rows)
	}
	if body.Next != nil {
		// The cursor opens only for this --as and these --org values.
		fmt.Fprintf(opts.f.Streams.Err, "more: --before %s\n", body.Next.Before)
	}
	if page.Truncated {
		fmt.Fprintln(opts.f.Streams.Err, "the list's check or time budget ran out before the page filled; continue with the cursor above")
	}
	return nil
}

func archivesURLRun(cmd *cobra.Command, opts *ArchivesOptions, rawID string) error {
	subject, orgs, err := opts.identity()
	if err != nil {
		return err
	}
	id, err := uuid.Parse(rawID)
	if err != nil || len(rawID) != 36 {
		return usagef("ARCHIVE_ID must be a UUID, got %q", rawID)
	}
	a, err := opts.f.App(append([]string{"DATABASE_URL", "CAPTURE_LEDGER_FGA_STORE_ID", "CAPTURE_LEDGER_FGA_MODEL_ID"}, s3Vars...)...)
	if err != nil {
		return err
	}
	access, err := a.Access(cmd.Context())
	if err != nil {
		return err
	}
	u, err := access.URL(cmd.Context(), subject, orgs, id.String())
	if errors.Is(err, ledger.ErrNotFound) {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("archive %s: not found (absent, or %s may not view it)", id, subject)}
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

var s3Vars = []string{"CAPTURE_LEDGER_S3_ENDPOINT", "CAPTURE_LEDGER_S3_BUCKET", "CAPTURE_LEDGER_S3_ACCESS_KEY_ID", "CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY"}
