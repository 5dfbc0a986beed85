package drain

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// DrainOptions are the inputs of `ledgerctl drain`.
type DrainOptions struct {
	f       *cmdutil.Factory
	JSON    bool
	Status  bool
	Requeue bool
}

func NewCmdDrain(f *cmdutil.Factory) *cobra.Command {
	opts := &DrainOptions{f: f}
	cmd := &cobra.Command{
		Use:   "drain",
		Short: "Deliver the queued OpenFGA tuples of the outbox",
		Long: `Delivers every due fga_outbox row to OpenFGA: the same drain serve runs as
rows are added and on a ticker. Tuples already in OpenFGA count as delivered. A failed row is retried
with exponential backoff and dead-lettered after CAPTURE_LEDGER_OUTBOX_MAX_ATTEMPTS
failures; a malformed row is dead-lettered at once. When OpenFGA cannot be
reached the drain stops and leaves the remaining rows untouched (exit 4).

--status lists the dead-lettered rows; --requeue gives them a fresh start.`,
		Example: "  ledgerctl drain\n  ledgerctl drain --json\n  ledgerctl drain --status\n  ledgerctl drain --requeue",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Status && opts.Requeue {
				return cmdutil.Usagef("--status and --requeue cannot be used together")
			}
			return drainRun(cmd, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVar(&opts.Status, "status", false, "list dead-lettered rows and counts instead of draining")
	cmd.Flags().BoolVar(&opts.Requeue, "requeue", false, "move every dead-lettered row back to pending")
	return cmd
}

func drainRun(cmd *cobra.Command, opts *DrainOptions) error {
	ctx := cmd.Context()
	if opts.Status || opts.Requeue {
		a, err := opts.f.App("DATABASE_URL")
		if err != nil {
			return err
		}
		if opts.Requeue {
			n, err := a.RequeueDead(ctx)
			if err != nil {
				return err
			}
			if opts.JSON {
				return json.NewEncoder(opts.f.Streams.Out).Encode(map[string]int64{"requeued": n})
			}
			fmt.Fprintf(opts.f.Streams.Out, "requeued %d dead-lettered row(s)\n", n)
			return nil
		}
		st, err := a.OutboxStatus(ctx, 1000)
		if err != nil {
			return err
		}
		if opts.JSON {
			return json.NewEncoder(opts.f.Streams.Out).Encode(st)
		}
		p := ui.New(opts.f.Streams.Out)
		p.Printf("pending %d, delivered %d, dead %d\n", st.Counts.Pending, st.Counts.Delivered, st.Counts.Dead)
		if len(st.Dead) > 0 {
			rows := make([][]string, len(st.Dead))
			for i, d := range st.Dead {
				rows[i] = []string{strconv.FormatInt(d.ID, 10), ui.Time(d.DeadAt), strconv.Itoa(d.Attempts), d.LastError}
			}
			p.Println()
			p.Table([]string{"id", "dead since", "attempts", "last error"}, rows)
		}
		return nil
	}

	a, err := opts.f.App("DATABASE_URL", "CAPTURE_LEDGER_FGA_STORE_ID", "CAPTURE_LEDGER_FGA_MODEL_ID")
	if err != nil {
		return err
	}
	counts, err := a.OutboxCounts(ctx)
	if err != nil {
		return err
	}
	bar := ui.NewProgress(opts.f.Streams.Err, "drain", counts.Pending)
	res, err := a.Drain(ctx, outbox.Options{Progress: func(n int) { bar.Add(n - bar.Count()) }})
	bar.Done()
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := json.NewEncoder(opts.f.Streams.Out).Encode(res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(opts.f.Streams.Out, "delivered %d, failed %d, dead-lettered %d\n", res.Delivered, res.Failed, res.Dead)
	}
	switch {
	case res.Unreachable != "":
		return &cmdutil.ExitError{Code: cmdutil.ExitUnreachable, Err: fmt.Errorf("%s — is the stack up? (rows left untouched)", res.Unreachable)}
	case res.Failed > 0 || res.Dead > 0:
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("%d row(s) failed and %d were dead-lettered: see `ledgerctl drain --status`", res.Failed, res.Dead)}
	}
	return nil
}
