package migrate

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// MigrateOptions are the inputs of the migrate subcommands.
type MigrateOptions struct {
	f      *cmdutil.Factory
	JSON   bool
	Action string // up, down, status, force
	Force  int
	// Yes skips down's question on a terminal.
	Yes bool
}

func NewCmdMigrate(f *cmdutil.Factory) *cobra.Command {
	opts := &MigrateOptions{f: f}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply, revert or inspect the ledger schema",
		Long: `Runs the SQL migrations embedded in ledgerctl against DATABASE_URL.

up is idempotent; down reverts exactly one migration; force records a version
without running anything, to recover after a failed migration was repaired.`,
		Example: "  ledgerctl migrate up\n  ledgerctl migrate status --json\n  ledgerctl migrate down --yes",
	}
	sub := func(use, short string, args cobra.PositionalArgs, prep func([]string) error) *cobra.Command {
		action := use
		if i := len("force"); len(use) > i && use[:i] == "force" {
			action = "force"
		}
		c := &cobra.Command{
			Use: use, Short: short, Args: args,
			Example: "  ledgerctl migrate " + strings.Replace(use, "VERSION", "2", 1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if prep != nil {
					if err := prep(args); err != nil {
						return err
					}
				}
				opts.Action = action
				return migrateRun(cmd, opts)
			},
		}
		c.Flags().BoolVar(&opts.JSON, "json", false, "print the resulting status as JSON")
		return c
	}
	down := sub("down", "Revert the last applied migration (asks first on a terminal)", cobra.NoArgs, nil)
	down.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "revert without asking")
	cmd.AddCommand(
		sub("up", "Apply every pending migration", cobra.NoArgs, nil),
		down,
		sub("status", "Show the applied and available migrations", cobra.NoArgs, nil),
		sub("force VERSION", "Record VERSION as applied and clean, running nothing", cobra.ExactArgs(1), func(args []string) error {
			v, err := strconv.Atoi(args[0])
			if err != nil || v < 0 {
				return cmdutil.Usagef("migrate force: VERSION must be a migration number (0 for none), got %q", args[0])
			}
			opts.Force = v
			return nil
		}),
	)
	return cmd
}

func migrateRun(cmd *cobra.Command, opts *MigrateOptions) error {
	s, err := opts.f.Settings("DATABASE_URL")
	if err != nil {
		return err
	}
	m, err := postgres.NewMigrator(cmd.Context(), s.DatabaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	before, err := m.Status()
	if err != nil {
		return err
	}
	switch opts.Action {
	case "up":
		err = m.Up()
	case "down":
		if before.Current == 0 {
			return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: errors.New("migrate down: no migration is applied")}
		}
		q := fmt.Sprintf("Revert migration %d of the ledger schema? Its tables and columns are dropped with their rows. [y/N] ", before.Current)
		if asked, yes := opts.ask(q); asked && !yes {
			return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: errors.New("migrate down: not confirmed; nothing was reverted (--yes skips the question)")}
		}
		err = m.Down()
	case "force":
		err = m.Force(opts.Force)
	}
	if err != nil {
		return err
	}
	after, err := m.Status()
	if err != nil {
		return err
	}
	if opts.JSON {
		return json.NewEncoder(opts.f.Streams.Out).Encode(after)
	}
	p := ui.New(opts.f.Streams.Out)
	switch opts.Action {
	case "up":
		if after.Current == before.Current {
			p.Printf("schema already at version %d (latest)\n", after.Current)
		} else {
			p.Printf("migrated from version %d to %d\n", before.Current, after.Current)
		}
	case "down":
		p.Printf("reverted version %d; schema now at version %d\n", before.Current, after.Current)
	case "force":
		p.Printf("recorded version %d as applied (nothing was run)\n", after.Current)
	case "status":
		state := "clean"
		if after.Dirty {
			state = "DIRTY — a migration failed halfway; repair it, then `ledgerctl migrate force VERSION`"
		}
		p.Printf("current version: %d (%s)\nlatest version:  %d\npending:         %d\n", after.Current, state, after.Latest, after.Pending())
	}
	if after.Dirty && opts.Action != "status" {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("schema is dirty at version %d", after.Current)}
	}
	return nil
}

// ask puts question to the operator when stdin and stderr are a terminal and
// --yes was not given; asked is false when nobody was asked.
func (o *MigrateOptions) ask(question string) (asked, yes bool) {
	if o.Yes {
		return false, true
	}
	if o.f.Confirm != nil {
		return o.f.Confirm(question)
	}
	in, ok := o.f.Streams.In.(*os.File)
	if !ok || !ui.IsTerminal(in) || !ui.IsTerminal(o.f.Streams.Err) {
		return false, true
	}
	fmt.Fprint(o.f.Streams.Err, question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	answer := strings.ToLower(strings.TrimSpace(line))
	return true, answer == "y" || answer == "yes"
}
