package reconcile

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// ReconcileOptions are the inputs of `ledgerctl reconcile`.
type ReconcileOptions struct {
	f           *cmdutil.Factory
	SinceDays   string
	Concurrency int
	JSON        bool
}

func NewCmdReconcile(f *cmdutil.Factory) *cobra.Command {
	opts := &ReconcileOptions{f: f}
	cmd := &cobra.Command{
		Use:   "reconcile",
		Short: "Register captures whose archive never reached the ledger",
		Long: `Reads capture_submissions rows that carry a manifest key but have no archive,
fetches exactly those manifests from the configured bucket (it never lists the
bucket and never builds a key), and admits each successful capture with the
submission's organization and submitter. Running it twice registers nothing new.

The submission row decides the organization: a manifest whose taskId is not the
row's, or whose correlationId is not the row's correlation, is refused and never
admitted. A row that cannot be handled (a manifest key with an empty, "." or ".."
segment or over 1,024 bytes, a key S3 refuses, a manifest that is not a report,
a WACZ location the ledger does not read) is counted and listed as an error, and
the other rows go on.

The table counts the rows it read (pending) by what became of each:
registered (its archive admitted now), skipped (a capture with no archive to
admit — failed, cancelled, no WACZ — or one already in the ledger), missing (no
manifest where the capture said it wrote one), refused (the manifest is not
this row's capture) and errors.

Exit status 3 when some manifests were missing, refused or in error; 4 when S3
or PostgreSQL did not answer (the run stops).`,
		Example: "  ledgerctl reconcile\n  ledgerctl reconcile --since-days 30\n  ledgerctl reconcile --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var since *time.Time
			if cmd.Flags().Changed("since-days") {
				n, err := strconv.Atoi(opts.SinceDays)
				if err != nil || n < 1 {
					return cmdutil.Usagef("--since-days: must be a positive integer, got %q", opts.SinceDays)
				}
				t := time.Now().Add(-time.Duration(n) * 24 * time.Hour)
				since = &t
			}
			if opts.Concurrency < 1 || opts.Concurrency > 64 {
				return cmdutil.Usagef("--concurrency: must be between 1 and 64, got %d", opts.Concurrency)
			}
			return reconcileRun(cmd, opts, since)
		},
	}
	cmd.Flags().StringVar(&opts.SinceDays, "since-days", "", "only submissions from the last N days (a positive integer)")
	cmd.Flags().IntVar(&opts.Concurrency, "concurrency", 8, "manifests fetched at once")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func reconcileRun(cmd *cobra.Command, opts *ReconcileOptions, since *time.Time) error {
	a, err := opts.f.App(append([]string{"DATABASE_URL"}, cmdutil.S3Vars...)...)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	adm, err := a.Admitter(ctx)
	if err != nil {
		return err
	}
	bar := ui.NewProgress(opts.f.Streams.Err, "reconcile", 0)
	r := &archive.Reconciler{Admitter: adm, Objects: a.Blob(), Concurrency: opts.Concurrency, Start: bar.SetTotal, Progress: func() { bar.Add(1) }}
	res, err := r.Reconcile(ctx, since)
	bar.Done()
	var unreachable *archive.UnreachableError
	if errors.As(err, &unreachable) {
		return &cmdutil.ExitError{Code: cmdutil.ExitUnreachable, Err: fmt.Errorf("reconcile stopped: %w", err)}
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := json.NewEncoder(opts.f.Streams.Out).Encode(res); err != nil {
			return err
		}
	} else {
		p := ui.New(opts.f.Streams.Out)
		p.Table([]string{"pending", "registered", "skipped", "missing", "refused", "errors"}, [][]string{{
			strconv.Itoa(res.Pending), strconv.Itoa(res.Registered), strconv.Itoa(res.Skipped), strconv.Itoa(res.Missing),
			strconv.Itoa(res.Refused), strconv.Itoa(res.Errored),
		}})
		for _, k := range res.MissingKeys {
			p.Printf("missing: %s\n", cmdutil.Printable(k))
		}
		for _, r := range res.Refusals {
			p.Printf("refused: %s: %s\n", cmdutil.Printable(r.Key), cmdutil.Printable(r.Reason))
		}
		for _, r := range res.Errors {
			p.Printf("error: %s: %s\n", cmdutil.Printable(r.Key), cmdutil.Printable(r.Reason))
		}
	}
	if res.Incomplete() {
		return &cmdutil.ExitError{Code: cmdutil.ExitIncomplete, Err: fmt.Errorf("%d manifest(s) missing, %d refused, %d in error; those rows stay pending",
			res.Missing, res.Refused, res.Errored)}
	}
	return nil
}
