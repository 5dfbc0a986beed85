package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
)

// TestUnknownSubcommandIsUsage: a typo under a command group fails with a
// suggestion and exit 2, like a typo at the top; the group alone still
// prints its help.
func TestUnknownSubcommandIsUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"archives", "lst"}, `unknown command "lst" for "ledgerctl archives"; did you mean list?`},
		{[]string{"crawl", "strat"}, `did you mean start?`},
		{[]string{"completion", "tcsh"}, `unknown command "tcsh" for "ledgerctl completion"`},
		{[]string{"dev", "stack", "upp"}, `did you mean up?`},
		{[]string{"fga", "grnat"}, `did you mean grant?`},
	} {
		out, errs, code := clitest.Run(t, t.TempDir(), nil, tc.args...)
		if code != cmdutil.ExitUsage || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, code, out, errs)
		}
	}
	out, _, code := clitest.Run(t, t.TempDir(), nil, "archives")
	if code != cmdutil.ExitOK || !strings.Contains(out, "Available Commands") {
		t.Errorf("archives alone: exit %d, %q", code, out)
	}
}

// TestUsageErrorsAreMarkedWhereCobraMakesThem: bad flags and arguments
// exit 2 through the flag-error hook and the commands' Args, whatever
// cobra's wording.
func TestUsageErrorsAreMarkedWhereCobraMakesThem(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--nope"},
		{"migrate", "up", "--nope"},
		{"archives", "url"},
		{"archives", "url", "a", "b"},
		{"version", "extra"},
		{"crawl", "start", "--max-depth", "deep"},
	} {
		if _, errs, code := clitest.Run(t, t.TempDir(), nil, args...); code != cmdutil.ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, cmdutil.ExitUsage, errs)
		}
	}
}

// TestMissingArgumentsAreNamed: a command missing a positional argument
// names it, shows its usage line and an example, and exits 2 — never
// cobra's "requires at least 1 arg(s)". Every command that needs an
// argument is tried without one, and every command with a limit one past it.
func TestMissingArgumentsAreNamed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"capture"}, "ledgerctl: capture: missing URL\nusage: ledgerctl capture URL..."},
		{[]string{"search"}, "ledgerctl: search: missing QUERY\n"},
		{[]string{"fga", "grant", "submitter"}, "ledgerctl: fga grant: missing USER, ORG\n"},
		{[]string{"version", "x"}, `ledgerctl: version takes no arguments (got "x")`},
		{[]string{"share", "grant", "a", "b", "c"}, `ledgerctl: share grant takes at most 2 argument(s), got 3: "c" is one too many`},
	} {
		out, errs, code := clitest.Run(t, t.TempDir(), nil, tc.args...)
		if code != cmdutil.ExitUsage || out != "" || !strings.HasPrefix(errs, tc.want) || !strings.Contains(errs, "\nfor example: ledgerctl ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 saying %q and an example", tc.args, code, out, errs, tc.want)
		}
	}
	var buf bytes.Buffer
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() || c.Args == nil || c.Hidden {
			return
		}
		for _, args := range [][]string{nil, {"1", "2", "3", "4", "5", "6"}} {
			err := c.Args(c, args)
			if err == nil {
				continue
			}
			code, msg := cmdutil.Classify(err)
			if code != cmdutil.ExitUsage || strings.Contains(msg, "arg(s)") || !strings.Contains(msg, "usage: "+c.CommandPath()) {
				t.Errorf("%s with %d argument(s): exit %d: %s", c.CommandPath(), len(args), code, msg)
			}
			if len(args) == 0 && !strings.Contains(msg, ": missing ") && c.HasParent() && c.Parent().Name() != "completion" {
				t.Errorf("%s without arguments names nothing missing: %s", c.CommandPath(), msg)
			}
		}
	}
	walk(cli.NewRootCmd(cmdutil.NewFactory(cmdutil.Streams{In: strings.NewReader(""), Out: &buf, Err: &buf})))
}
