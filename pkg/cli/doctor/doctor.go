package doctor

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/health"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// DoctorOptions are the inputs of `ledgerctl doctor`.
type DoctorOptions struct {
	f       *cmdutil.Factory
	JSON    bool
	Timeout time.Duration
}

func NewCmdDoctor(f *cmdutil.Factory) *cobra.Command {
	opts := &DoctorOptions{f: f}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration and every dependency, with a fix per problem",
		Long: `Checks, from a terminal, what serve's /readyz checks and more: the
configuration loads (naming every missing or invalid variable), PostgreSQL,
OpenFGA and S3 answer (a SELECT 1, a read of the pinned store and model, a
HEAD of the bucket), each can do what serve needs (postgres-write: a row
written and read back in a transaction rolled back; s3-write: a probe object
under .ledgerctl-doctor/ put, read back and deleted; fga-check: a can_view
check answered by the pinned model), the pinned model is the store's latest and matches the
one this ledgerctl carries, every migration is applied, the outbox has no
dead letters, and this machine's clock agrees with PostgreSQL's (within 5s).

Each check is bounded by --timeout and they run concurrently. A table (check,
status, detail, hint) goes to stdout, or JSON with --json. A warn does not
fail the command; a fail exits 1, an unreachable dependency 4, a
configuration problem 2.`,
		Example: "  ledgerctl doctor\n  ledgerctl doctor --json\n  ledgerctl doctor --timeout 5s",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return doctorRun(cmd, opts) },
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the checks as JSON")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", health.DefaultTimeout, "bound on each check")
	return cmd
}

// doctorReport is the --json output.
type doctorReport struct {
	OK     bool            `json:"ok"`
	Checks []health.Result `json:"checks"`
}

func doctorRun(cmd *cobra.Command, opts *DoctorOptions) error {
	if opts.Timeout <= 0 {
		return cmdutil.Usagef("--timeout must be positive")
	}
	s, cfgErr := doctorSettings(opts.f)
	if cfgErr != nil {
		r := health.Result{Check: "config", Status: health.Fail, Detail: cfgErr.Error(), Hint: configHint(cfgErr)}
		if err := printDoctor(opts, []health.Result{r}); err != nil {
			return err
		}
		return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: errors.New("doctor: the configuration does not load (see the config check)")}
	}
	a := app.New(s, nil)
	opts.f.OnClose(a.Close)
	rs := append([]health.Result{{Check: "config", Status: health.OK, Detail: "every required variable is set and valid; OpenFGA: " + authz.Where(s)}},
		(&health.Checker{App: a, Timeout: opts.Timeout}).Doctor(cmd.Context())...)
	if err := printDoctor(opts, rs); err != nil {
		return err
	}
	var unreachable, failed []string
	for _, r := range rs {
		if r.Status != health.Fail {
			continue
		}
		if r.Unreachable {
			unreachable = append(unreachable, r.Check)
		} else {
			failed = append(failed, r.Check)
		}
	}
	switch {
	case len(unreachable) > 0:
		return &cmdutil.ExitError{Code: cmdutil.ExitUnreachable, Err: fmt.Errorf("doctor: unreachable: %s (see the hints above)", dependencyNames(unreachable))}
	case len(failed) > 0:
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("doctor: failed: %s (see the hints above)", strings.Join(failed, ", "))}
	}
	return nil
}

// doctorSettings loads the configuration and reports every missing and
// every invalid variable together.
func doctorSettings(f *cmdutil.Factory) (config.Settings, error) {
	c, err := f.Config()
	if err != nil {
		return config.Settings{}, err
	}
	missing := c.Require(config.Required()...)
	s, invalid := c.Settings()
	if err := errors.Join(missing, invalid); err != nil {
		return config.Settings{}, err
	}
	return s, nil
}

func configHint(err error) string {
	var missing *config.MissingError
	if errors.As(err, &missing) {
		deployOnly := true
		for _, n := range missing.Names {
			if v, _ := config.Lookup(n); v.Source != config.FromDeploy {
				deployOnly = false
			}
		}
		if deployOnly {
			return "`ledgerctl fga deploy` (writes the ids to .env.local)"
		}
		return "`cp -n .env.example .env` and fill it in (or `make run` for a local stack), then `ledgerctl fga deploy`"
	}
	return "fix the variables named (docs/configuration.md lists every one)"
}

// dependencyNames spells check names the way messages name dependencies.
func dependencyNames(checks []string) string {
	names := map[string]string{health.Postgres: "PostgreSQL", health.OpenFGA: "OpenFGA", health.S3: "S3"}
	out := make([]string, len(checks))
	for i, c := range checks {
		if n, ok := names[c]; ok {
			out[i] = n
		} else {
			out[i] = c
		}
	}
	return strings.Join(out, ", ")
}

func printDoctor(opts *DoctorOptions, rs []health.Result) error {
	if opts.JSON {
		return json.NewEncoder(opts.f.Streams.Out).Encode(doctorReport{OK: health.Ready(rs), Checks: rs})
	}
	p := ui.New(opts.f.Streams.Out)
	rows := make([][]string, len(rs))
	for i, r := range rs {
		rows[i] = []string{r.Check, string(r.Status), r.Detail, r.Hint}
	}
	p.Table([]string{"check", "status", "detail", "hint"}, rows)
	return nil
}
