package dev

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/devstack"
)

func NewCmdDev(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "dev",
		Example: "  ledgerctl dev stack up --env-local\n  ledgerctl dev issuer\n  ledgerctl dev demo",
		Short:   "Local development helpers (never for production)",
	}
	cmd.AddCommand(newCmdDevStack(f), newCmdDevIssuer(f), newCmdDevToken(f), newCmdDevDemo(f))
	return cmd
}

// DevStackOptions are the inputs of `ledgerctl dev stack`.
type DevStackOptions struct {
	f         *cmdutil.Factory
	Dir       string
	PGBin     string
	Versitygw string
	Shell     bool
	EnvLocal  bool
	Database  string
	Bucket    string
	// apiPort is CAPTURE_LEDGER_API_PORT from the environment, checked,
	// written to .env.local with --env-local; "" when unset.
	apiPort string
}

func newCmdDevStack(f *cmdutil.Factory) *cobra.Command {
	opts := &DevStackOptions{f: f}
	cmd := &cobra.Command{
		Use:     "stack",
		Example: "  ledgerctl dev stack up --env-local\n  ledgerctl dev stack down",
		Short:   "Start or stop the single-machine PostgreSQL and versitygw",
		Long: `Starts a private PostgreSQL cluster and a versitygw S3 gateway on 127.0.0.1,
both under one state folder (default .state, git-ignored). The first start
picks free ports and records them in <dir>/stack.env; every later start of the
same folder reuses them, so settings written once (.env.local) stay right. A
service gets a new port only when its recorded one is taken by something else;
up says so, and --env-local rewrites .env.local.

--env-local also writes CAPTURE_LEDGER_API_PORT to .env.local when it is set
in the environment (make run CAPTURE_LEDGER_API_PORT=7071), replacing the one
there: the port serve is started on is then the one every later command (say
archives open, whose links name it) reads. Unset, .env.local keeps its own.

up on a running stack starts nothing and prints the same settings. A failed up
stops whatever it had started.`,
	}
	cmd.PersistentFlags().StringVar(&opts.Dir, "dir", ".state", "state folder")
	up := &cobra.Command{
		Use:   "up",
		Short: "Start whatever is not running and print where it is",
		Example: "  ledgerctl dev stack up\n" +
			"  eval \"$(ledgerctl dev stack up --shell)\"\n" +
			"  ledgerctl dev stack up --env-local",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return devStackUp(cmd.Context(), opts) },
	}
	up.Flags().StringVar(&opts.PGBin, "pg-bin", "", "folder of initdb and pg_ctl (default: found)")
	up.Flags().StringVar(&opts.Versitygw, "versitygw", "", "versitygw binary (default: found on PATH or in ~/.cache/ledgerctl/bin)")
	up.Flags().BoolVar(&opts.Shell, "shell", false, "print export lines for the test harness instead of a summary")
	up.Flags().BoolVar(&opts.EnvLocal, "env-local", false, "create the ledger database and bucket and write their settings (and CAPTURE_LEDGER_API_PORT when set) to .env.local")
	up.Flags().StringVar(&opts.Database, "database", "capture_ledger", "database created with --env-local")
	up.Flags().StringVar(&opts.Bucket, "bucket", "browserhive", "bucket created with --env-local")
	down := &cobra.Command{
		Use:     "down",
		Example: "  ledgerctl dev stack down\n  ledgerctl dev stack down --dir .state",
		Short:   "Stop the stack's services",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := devstack.Down(devstack.Options{Dir: opts.Dir}); err != nil {
				return err
			}
			fmt.Fprintln(f.Streams.Err, "stack stopped")
			return nil
		},
	}
	cmd.AddCommand(up, down)
	return cmd
}

func devStackUp(ctx context.Context, opts *DevStackOptions) error {
	errw := opts.f.Streams.Err
	var envPath string
	var readyErr error
	var ready func(context.Context, devstack.Stack) error
	if opts.EnvLocal {
		port, err := envAPIPort(opts.f)
		if err != nil {
			return err // before anything starts
		}
		opts.apiPort = port
		// Inside Up, so that a failure here stops what Up started.
		ready = func(ctx context.Context, st devstack.Stack) error {
			readyErr = writeEnvLocal(ctx, opts, st, &envPath)
			return readyErr
		}
	}
	st, err := devstack.Up(ctx, devstack.Options{
		Dir: opts.Dir, PGBin: opts.PGBin, Versitygw: opts.Versitygw, Ready: ready,
		Log: func(format string, a ...any) { fmt.Fprintf(errw, format+"\n", a...) },
	})
	if err != nil {
		var setup *devstack.SetupError
		switch {
		case errors.As(err, &setup):
			return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
		case readyErr != nil && errors.Is(err, readyErr):
			return err // creating the database or bucket, or writing .env.local, failed
		}
		return &cmdutil.ExitError{Code: cmdutil.ExitUnreachable, Err: err}
	}
	if st.AlreadyUp {
		fmt.Fprintf(errw, "stack already up (%s)\n", st.Dir)
	}
	written := "DATABASE_URL and CAPTURE_LEDGER_S3_*"
	if opts.apiPort != "" {
		written = "DATABASE_URL, CAPTURE_LEDGER_S3_* and CAPTURE_LEDGER_API_PORT=" + opts.apiPort
	}
	switch {
	case opts.EnvLocal && len(st.Moved) > 0:
		fmt.Fprintf(errw, "ports changed: rewrote %s in %s for the new ports\n", written, envPath)
	case opts.EnvLocal:
		fmt.Fprintf(errw, "wrote %s to %s\n", written, envPath)
	case len(st.Moved) > 0:
		fmt.Fprintln(errw, "ports changed: settings written for the old ports (.env.local) are stale; rerun with --env-local to rewrite them")
	}
	env := st.TestEnv()
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := opts.f.Streams.Out
	if opts.Shell {
		for _, k := range keys {
			fmt.Fprintf(out, "export %s=%s\n", k, shellQuote(env[k]))
		}
		return nil
	}
	fmt.Fprintf(out, "PostgreSQL  %s\nS3          %s (access key %s)\nstate       %s\n", st.AdminURL(), st.S3Endpoint(), st.AccessKey, st.Dir)
	return nil
}

// writeEnvLocal creates the ledger database and bucket on st and writes their
// settings to .env.local; *path is the file written.
func writeEnvLocal(ctx context.Context, opts *DevStackOptions, st devstack.Stack, path *string) error {
	if err := provision(ctx, st, opts.Database, opts.Bucket); err != nil {
		return err
	}
	values := map[string]string{
		"DATABASE_URL":                        st.DatabaseURL(opts.Database),
		"CAPTURE_LEDGER_S3_ENDPOINT":          st.S3Endpoint(),
		"CAPTURE_LEDGER_S3_BUCKET":            opts.Bucket,
		"CAPTURE_LEDGER_S3_ACCESS_KEY_ID":     st.AccessKey,
		"CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY": st.SecretKey,
		"CAPTURE_LEDGER_S3_FORCE_PATH_STYLE":  "true",
	}
	if opts.apiPort != "" {
		values["CAPTURE_LEDGER_API_PORT"] = opts.apiPort
	}
	p, err := config.UpsertEnvLocal(opts.f.Dir, values)
	*path = p
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// envAPIPort is CAPTURE_LEDGER_API_PORT as the environment sets it (the
// shell, or make's command line: make run CAPTURE_LEDGER_API_PORT=7071),
// "" when unset or empty. That is the port serve will listen on whatever
// .env.local says (the shell beats the files), so --env-local writes it
// there for the commands run later from another shell. The settings read it
// as serve does, so a value serve would refuse is refused here, named.
func envAPIPort(f *cmdutil.Factory) (string, error) {
	if raw, _ := f.LookupEnv("CAPTURE_LEDGER_API_PORT"); strings.TrimSpace(raw) == "" {
		return "", nil
	}
	s, err := f.Settings()
	if err != nil {
		return "", err
	}
	return strconv.Itoa(s.APIPort), nil
}

// provision creates the ledger database and bucket `make run` uses.
func provision(ctx context.Context, st devstack.Stack, database, bucket string) error {
	conn, err := pgx.Connect(ctx, st.AdminURL())
	if err != nil {
		return fmt.Errorf("connect to %s: %w", st.AdminURL(), err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", database).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{database}.Sanitize()); err != nil {
			return err
		}
	}
	c := blob.New(blob.Config{Endpoint: st.S3Endpoint(), AccessKeyID: st.AccessKey, SecretAccessKey: st.SecretKey, ForcePathStyle: true})
	return c.CreateBucket(ctx, bucket)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
