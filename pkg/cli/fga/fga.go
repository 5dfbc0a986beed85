package fga

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

func NewCmdFGA(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fga",
		Short: "Test and deploy the OpenFGA model; grant who may start crawls",
		Long: `fga/model.fga is the authorization model and fga/model.fga.yaml its
assertions; both are built into ledgerctl.

OpenFGA runs embedded in-process on its own PostgreSQL database
(CAPTURE_LEDGER_FGA_DATASTORE_URI, default <ledger db>_fga) unless
CAPTURE_LEDGER_FGA_API_URL points at an OpenFGA cluster.`,
		Example: "  ledgerctl fga test\n  ledgerctl fga deploy\n  ledgerctl fga grant submitter alice acme",
	}
	cmd.AddCommand(newCmdFGATest(f), newCmdFGADeploy(f), newCmdFGARole(f, "grant"), newCmdFGARole(f, "revoke"))
	return cmd
}

// FGATestOptions are the inputs of `ledgerctl fga test`.
type FGATestOptions struct {
	f    *cmdutil.Factory
	File string
	JSON bool
}

func newCmdFGATest(f *cmdutil.Factory) *cobra.Command {
	opts := &FGATestOptions{f: f}
	cmd := &cobra.Command{
		Use:   "test",
		Short: "Run the model's assertions in-process (no server, no database)",
		Long: `Runs every assertion of the store-test file (the OpenFGA CLI's format) against
an OpenFGA started in-process on a memory datastore. Each test gets a fresh
store with the model, the file's tuples and its own. Needs no configuration.

Without --file it runs the built-in fga/model.fga.yaml against the built-in
fga/model.fga. With --file, model_file is read relative to that file.`,
		Example: "  ledgerctl fga test\n  ledgerctl fga test --file fga/model.fga.yaml --json",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return fgaTestRun(cmd.Context(), opts) },
	}
	cmd.Flags().StringVar(&opts.File, "file", "", "store-test YAML to run instead of the built-in one")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the results as JSON")
	return cmd
}

func loadSuite(file string) (*authz.TestSuite, error) {
	if file == "" {
		return authz.ParseTestSuite([]byte(fga.Tests), "fga/"+fga.TestsFile+" (built in)", func(name string) (string, string, error) {
			if filepath.Clean(name) != fga.ModelFile {
				return "", "", fmt.Errorf("the built-in tests can only name %s", fga.ModelFile)
			}
			return fga.Model, "fga/" + fga.ModelFile + " (built in)", nil
		})
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, cmdutil.Usagef("--file: %v", err)
	}
	return authz.ParseTestSuite(data, file, func(name string) (string, string, error) {
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(file), name)
		}
		b, err := os.ReadFile(path)
		return string(b), path, err
	})
}

func fgaTestRun(ctx context.Context, opts *FGATestOptions) error {
	suite, err := loadSuite(opts.File)
	if err != nil {
		var u cmdutil.UsageError
		if errors.As(err, &u) {
			return err
		}
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: err}
	}
	results, err := authz.RunTestSuite(ctx, suite)
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: err}
	}
	tests, checks, failed := authz.Summary(results)
	out := opts.f.Streams.Out
	if opts.JSON {
		err := json.NewEncoder(out).Encode(map[string]any{
			"file": suite.File, "model": suite.ModelPath, "name": suite.Name,
			"tests": tests, "checks": checks, "failed": failed, "passed": failed == 0,
			"results": results,
		})
		if err != nil {
			return err
		}
	} else {
		p := ui.New(out)
		rows := make([][]string, 0, len(results))
		for _, r := range results {
			got := fmt.Sprint(r.Got)
			if r.Error != "" {
				got = "error"
			}
			rows = append(rows, []string{p.Mark(r.Pass), r.Test, r.User, r.Relation, r.Object, fmt.Sprint(r.Expected), got})
		}
		p.Table([]string{"", "TEST", "USER", "RELATION", "OBJECT", "EXPECTED", "GOT"}, rows)
		for _, r := range results {
			if r.Error != "" {
				p.Printf("%s %s: %s %s %s: %s\n", p.Mark(false), r.Test, r.User, r.Relation, r.Object, r.Error)
			}
		}
		if failed == 0 {
			p.Printf("%s: %d tests, %d checks, all passed\n", suite.ModelPath, tests, checks)
		} else {
			p.Printf("%s: %d of %d checks FAILED (%d tests)\n", suite.ModelPath, failed, checks, tests)
		}
	}
	if failed > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure}
	}
	return nil
}

// FGADeployOptions are the inputs of `ledgerctl fga deploy`.
type FGADeployOptions struct {
	f    *cmdutil.Factory
	JSON bool
}

func newCmdFGADeploy(f *cmdutil.Factory) *cobra.Command {
	opts := &FGADeployOptions{f: f}
	cmd := &cobra.Command{
		Use:   "deploy",
		Short: "Write the model to OpenFGA and pin its ids in .env.local",
		Long: `Finds the store named CAPTURE_LEDGER_FGA_STORE_NAME (creating it when missing),
writes the built-in model there, prints CAPTURE_LEDGER_FGA_STORE_ID and
CAPTURE_LEDGER_FGA_MODEL_ID, and writes both to .env.local (never .env).

Embedded OpenFGA (CAPTURE_LEDGER_FGA_API_URL unset) keeps its data in the
PostgreSQL database CAPTURE_LEDGER_FGA_DATASTORE_URI; deploy creates that
database when missing and runs OpenFGA's own migrations.

Models are immutable: every deploy makes a new model id. The id is pinned on
purpose, so switching models is a deliberate act: a serve already running
keeps its model until it is restarted.`,
		Example: "  ledgerctl fga deploy\n  ledgerctl fga deploy --json",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return fgaDeployRun(cmd.Context(), opts) },
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the ids as JSON")
	return cmd
}

// Error maps authz errors to exit codes.
func Error(err error) error {
	switch {
	case err == nil:
		return nil
	case authz.IsUnreachable(err):
		return &cmdutil.ExitError{Code: cmdutil.ExitUnreachable, Err: err}
	case errors.Is(err, authz.ErrNoDatastore), errors.Is(err, authz.ErrNoStore):
		return cmdutil.UsageError{Err: err}
	case errors.Is(err, authz.ErrDatastoreMissing):
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: err}
	}
	return err
}

func fgaDeployRun(ctx context.Context, opts *FGADeployOptions) error {
	f := opts.f
	a, err := f.App()
	if err != nil {
		return err
	}
	s := a.Settings
	c, err := a.AuthzAdmin(ctx)
	if err != nil {
		return Error(err)
	}
	d, err := authz.Deploy(ctx, c, s.FGAStoreName, fga.Model)
	if err != nil {
		return Error(err)
	}
	values := map[string]string{"CAPTURE_LEDGER_FGA_STORE_ID": d.StoreID, "CAPTURE_LEDGER_FGA_MODEL_ID": d.ModelID}
	before := map[string]string{}
	if data, err := os.ReadFile(filepath.Join(f.Dir, ".env.local")); err == nil {
		if ef, err := config.ParseEnvFile(".env.local", data); err == nil {
			before = ef.Values
		}
	}
	path, err := config.UpsertEnvLocal(f.Dir, values)
	if err != nil {
		return fmt.Errorf("write .env.local: %w", err)
	}
	var changed, same []string
	for name, v := range values {
		if before[name] == v {
			same = append(same, name)
		} else {
			changed = append(changed, name)
		}
	}
	sort.Strings(changed)
	sort.Strings(same)
	if opts.JSON {
		out := map[string]any{
			"storeName": d.StoreName, "storeId": d.StoreID, "modelId": d.ModelID, "envFile": path, "changed": changed, "reused": d.Reused,
		}
		if d.MigratedFrom != nil {
			out["migratedFrom"], out["migratedTuples"] = d.MigratedFrom, d.MigratedTuples
		}
		if err := json.NewEncoder(f.Streams.Out).Encode(out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(f.Streams.Out, "CAPTURE_LEDGER_FGA_STORE_ID=%s\nCAPTURE_LEDGER_FGA_MODEL_ID=%s\n", d.StoreID, d.ModelID)
	}
	errw := f.Streams.Err
	if d.MigratedFrom != nil {
		fmt.Fprintf(errw, "moved %d tuples from store %q (%s) to %q (%s); the old store is left as it was\n",
			d.MigratedTuples, d.MigratedFrom.Name, d.MigratedFrom.ID, d.StoreName, d.StoreID)
	}
	switch {
	case d.Reused && len(changed) == 0:
		fmt.Fprintf(errw, "the model in store %q of %s is already this one; %s is up to date\n", d.StoreName, authz.Where(s), path)
	default:
		verb := "deployed the model to"
		if d.Reused {
			verb = "the model is already in"
		}
		note := fmt.Sprintf("%s: wrote %s", path, strings.Join(changed, ", "))
		if len(same) > 0 {
			note += " (" + strings.Join(same, ", ") + " unchanged)"
		}
		// Said so that it is true whether or not a serve is running (make
		// run deploys before it starts one): a serve reads the pinned ids
		// when it starts.
		fmt.Fprintf(errw, "%s store %q of %s\n%s — serve uses it from its next start (a serve already running keeps its model until restarted)\n", verb, d.StoreName, authz.Where(s), note)
	}
	for name, v := range values {
		if shell, ok := f.LookupEnv(name); ok && shell != "" && shell != v {
			fmt.Fprintf(errw, "warning: %s is set in the shell, which beats .env.local: unset it to use the new value\n", name)
		}
	}
	return nil
}

// FGARoleOptions are the inputs of `ledgerctl fga grant|revoke`.
type FGARoleOptions struct {
	f      *cmdutil.Factory
	Action string // grant or revoke
	JSON   bool
}

func newCmdFGARole(f *cmdutil.Factory, action string) *cobra.Command {
	opts := &FGARoleOptions{f: f, Action: action}
	short := "Store that USER may start crawls for ORG (as submitter or admin)"
	verb := "Writes"
	if action == "revoke" {
		short = "Delete USER's submitter or admin relation on ORG"
		verb = "Deletes"
	}
	cmd := &cobra.Command{
		Use:   action + " RELATION USER ORG",
		Short: short,
		Long: verb + ` the tuple user:USER RELATION organization:ORG directly in OpenFGA (not
through the outbox), then asks can_submit exactly as the API does and prints
the answer in one sentence:

  alice may now start crawls for acme (wrote: user:alice submitter organization:acme)

or in Japanese when LC_ALL, else LC_MESSAGES, else LANG starts with ja:

  alice は acme のクロールを始められます (書いた: user:alice submitter organization:acme)

A revoke that leaves USER allowed through the other relation says so.
--json is the same in every locale: stable English keys and values
(done: written, removed or unchanged; doneCode; canSubmit; note:
other-relation or not-effective; sentence in English).

RELATION is submitter or admin. member is refused: membership comes from the
identity token on every request and is never stored.`,
		Example: fmt.Sprintf("  ledgerctl fga %s submitter alice acme\n  ledgerctl fga %s admin alice acme --json", action, action),
		Args:    cobra.ExactArgs(3),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return authz.GrantRelations, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return fgaRoleRun(cmd.Context(), opts, args[0], args[1], args[2])
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the outcome as JSON")
	return cmd
}

func fgaRoleRun(ctx context.Context, opts *FGARoleOptions, relation, user, org string) error {
	if err := authz.ValidateGrant(relation, user, org); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	f := opts.f
	a, err := f.App("CAPTURE_LEDGER_FGA_STORE_ID", "CAPTURE_LEDGER_FGA_MODEL_ID")
	if err != nil {
		return err
	}
	s := a.Settings
	c, err := a.Authz(ctx)
	if err != nil {
		return Error(err)
	}
	change := authz.Grant
	if opts.Action == "revoke" {
		change = authz.Revoke
	}
	r, err := change(ctx, c, relation, user, org)
	if err != nil {
		if authz.KindOf(err) == authz.KindInvalid {
			return cmdutil.UsageError{Err: err}
		}
		if authz.KindOf(err) == authz.KindNotFound {
			return fmt.Errorf("%w (is CAPTURE_LEDGER_FGA_STORE_ID/_MODEL_ID from a `ledgerctl fga deploy` against %s?)", err, authz.Where(s))
		}
		return Error(err)
	}
	if opts.JSON {
		// Machines read the JSON: English whatever the locale.
		if err := json.NewEncoder(f.Streams.Out).Encode(struct {
			authz.RoleChange
			Sentence string `json:"sentence"`
		}{r, r.Sentence(i18n.English)}); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(f.Streams.Out, r.Sentence(f.Lang()))
	}
	if !r.Effective() {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure}
	}
	return nil
}
