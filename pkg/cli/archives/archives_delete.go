package archives

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// ArchivesDeleteOptions are the inputs of `ledgerctl archives delete`.
type ArchivesDeleteOptions struct {
	*ArchivesOptions
	// Yes skips the question on a terminal; without a terminal it is
	// required.
	Yes bool
	// Pending finishes the deletions whose objects are not all removed.
	Pending bool
}

func newCmdArchivesDelete(f *cmdutil.Factory, parent *ArchivesOptions) *cobra.Command {
	opts := &ArchivesDeleteOptions{ArchivesOptions: parent}
	cmd := &cobra.Command{
		Use:   "delete ARCHIVE_ID --as SUBJECT --org ORG [--yes] | --pending",
		Short: "Delete an archive: its ledger entry, its objects and its permissions",
		Long: `Runs the same function as DELETE /api/archives/{id}. Only the archive's owner
may delete it (can_delete); to anyone else it looks absent. It asks first on a
terminal; without a terminal it refuses to run unless --yes is given.

The ledger keeps a tombstone (who deleted it, when, where its objects were), so
reconcile, level reports and archives add never register that object key or
task again. The archive's shares end, and its OpenFGA tuples are queued for
deletion in the same transaction (` + "`ledgerctl drain`" + ` or serve delivers them).
Then the WACZ and its sidecars (.result.json, .links.json, the manifest key
its submission recorded) are removed from the bucket.

A deletion interrupted after the ledger entry is gone (S3 unreachable, a
crash) is finished by running the same delete again, or by --pending, which
removes the objects of every such deletion. Exit status 3 when objects are
left to remove. See docs/shares.md.`,
		Example: "  ledgerctl archives delete 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 --as alice --org acme\n" +
			"  ledgerctl archives delete 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 --as alice --org acme --yes --json\n" +
			"  ledgerctl archives delete --pending",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return archivesDeleteRun(cmd, opts, args) },
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "delete without asking")
	cmd.Flags().BoolVar(&opts.Pending, "pending", false, "finish the deletions whose objects are not all removed yet (no ARCHIVE_ID, no --as)")
	return cmd
}

func archivesDeleteRun(cmd *cobra.Command, opts *ArchivesDeleteOptions, args []string) error {
	if opts.Pending {
		if len(args) > 0 {
			return cmdutil.Usagef("--pending takes no ARCHIVE_ID: it finishes every pending deletion")
		}
		return archivesDeletePendingRun(cmd, opts)
	}
	if len(args) == 0 {
		return cmdutil.Usagef("give the ARCHIVE_ID to delete (or --pending)")
	}
	who, err := cmdutil.ActingAs(opts.As, opts.Orgs, "the person deleting (the archive's owner)")
	if err != nil {
		return err
	}
	id, err := cmdutil.UUIDArg("ARCHIVE_ID", args[0])
	if err != nil {
		return err
	}
	a, err := opts.f.App(append(append([]string{}, cmdutil.ShareSettings...), cmdutil.S3Vars...)...)
	if err != nil {
		return err
	}
	q := fmt.Sprintf("Delete archive %s? Its WACZ and sidecars are removed from s3://%s and it cannot be registered again. [y/N] ", id, a.Settings.S3Bucket)
	if asked, yes, err := opts.confirm(q); err != nil {
		return err
	} else if asked && !yes {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: errors.New("archives delete: not confirmed; nothing was deleted (--yes skips the question)")}
	}
	d, err := a.Deleter(cmd.Context())
	if err != nil {
		return err
	}
	del, err := d.Delete(cmd.Context(), who.Subject, id)
	if errors.Is(err, ledger.ErrNotFound) {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("archive %s: not found (absent, or %s may not delete it)", id, who.Subject)}
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := json.NewEncoder(opts.f.Streams.Out).Encode(del); err != nil {
			return err
		}
	} else {
		printDeletions(opts.f, []archive.Deletion{del})
	}
	fmt.Fprintf(opts.f.Streams.Err, "archive %s is deleted from the ledger; its permissions leave OpenFGA once the outbox is drained (`ledgerctl drain` or serve)\n", id)
	if !del.ObjectsDeleted {
		return &cmdutil.ExitError{Code: cmdutil.ExitIncomplete, Err: fmt.Errorf("removing its objects failed (%s); `ledgerctl archives delete --pending` (or running this again) finishes it", cmdutil.Printable(cmdutil.Deref(del.Pending)))}
	}
	return nil
}

func archivesDeletePendingRun(cmd *cobra.Command, opts *ArchivesDeleteOptions) error {
	if opts.As != "" || len(opts.Orgs) > 0 {
		return cmdutil.Usagef("--pending acts for nobody: the deletions were authorized when they were recorded (drop --as and --org)")
	}
	a, err := opts.f.App(append([]string{"DATABASE_URL"}, cmdutil.S3Vars...)...)
	if err != nil {
		return err
	}
	// Finishing needs no permission check: no OpenFGA.
	d, err := a.FinishDeletes(cmd.Context())
	if err != nil {
		return err
	}
	res, err := d.FinishPending(cmd.Context(), 1000)
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := json.NewEncoder(opts.f.Streams.Out).Encode(res); err != nil {
			return err
		}
	} else {
		ui.New(opts.f.Streams.Out).Printf("pending deletions: %d, finished: %d, still pending: %d\n", res.Pending, res.Finished, len(res.Failures))
		if len(res.Failures) > 0 {
			printDeletions(opts.f, res.Failures)
		}
	}
	if len(res.Failures) > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitIncomplete, Err: fmt.Errorf("%d deletion(s) still have objects to remove; run it again later", len(res.Failures))}
	}
	return nil
}

// confirm asks on a terminal unless --yes was given; without a terminal and
// without --yes it refuses (a usage error: nothing was deleted). asked is
// false when nobody was asked.
func (o *ArchivesDeleteOptions) confirm(question string) (asked, yes bool, err error) {
	if o.Yes {
		return false, true, nil
	}
	if o.f.Confirm != nil {
		asked, yes = o.f.Confirm(question)
		return asked, yes, nil
	}
	in, ok := o.f.Streams.In.(*os.File)
	if !ok || !ui.IsTerminal(in) || !ui.IsTerminal(o.f.Streams.Err) {
		return false, false, cmdutil.Usagef("archives delete needs --yes when standard input is not a terminal (nobody to confirm with; nothing was deleted): give --yes to delete without asking")
	}
	fmt.Fprint(o.f.Streams.Err, question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	answer := strings.ToLower(strings.TrimSpace(line))
	return true, answer == "y" || answer == "yes", nil
}

// printDeletions prints deletions as a table on stdout.
func printDeletions(f *cmdutil.Factory, ds []archive.Deletion) {
	rows := make([][]string, len(ds))
	for i, d := range ds {
		state := "objects removed"
		if !d.ObjectsDeleted {
			state = "objects pending: " + cmdutil.Deref(d.Pending)
		}
		rows[i] = []string{d.ArchiveID, cmdutil.Printable(d.SourceURL), d.DeletedBy, ui.Time(d.DeletedAt), fmt.Sprint(len(d.Objects)), cmdutil.Printable(state)}
	}
	ui.New(f.Streams.Out).Table([]string{"archive", "source", "deleted by", "deleted", "objects", "state"}, rows)
}
