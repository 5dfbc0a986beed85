package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/cli/search"
)

// exampleLines returns every `ledgerctl …` command in the Example texts of
// cmd and its subcommands, cut where the shell takes over (a pipe, a
// redirection, the end of a $(…)).
func exampleLines(cmd *cobra.Command) []string {
	var out []string
	for _, line := range strings.Split(cmd.Example, "\n") {
		i := strings.Index(line, "ledgerctl ")
		if i < 0 {
			continue
		}
		line = line[i:]
		for _, stop := range []string{")", " <", " |", " \\", " >"} {
			if j := strings.Index(line, stop); j >= 0 {
				line = line[:j]
			}
		}
		out = append(out, strings.TrimSpace(line))
	}
	for _, c := range cmd.Commands() {
		out = append(out, exampleLines(c)...)
	}
	return out
}

// splitWords splits a command line as a shell would for the simple quoting
// the examples use.
func splitWords(s string) []string {
	var words []string
	var cur strings.Builder
	quote, in := rune(0), false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ':
			if in || cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
		}
	}
	if in || cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words
}

// TestHelpExamplesAreAccepted: every example in --help names a command that
// exists with flags and arguments it accepts, and the examples that need no
// server or configuration run and succeed. A pasted example must work.
func TestHelpExamplesAreAccepted(t *testing.T) {
	t.Chdir("../..") // examples name files from the top of the checkout
	var buf bytes.Buffer
	lines := exampleLines(cli.NewRootCmd(cmdutil.NewFactory(cmdutil.Streams{In: strings.NewReader(""), Out: &buf, Err: &buf})))
	if len(lines) < 20 {
		t.Fatalf("found only %d examples: %q", len(lines), lines)
	}
	offline := map[string]bool{"ledgerctl rules check": true, "ledgerctl fga test": true, "ledgerctl version": true, "ledgerctl completion bash": true}
	for _, line := range lines {
		args := splitWords(line)[1:]
		// Examples shared by grant and revoke are written with %s.
		for _, verb := range []string{"grant", "revoke"} {
			a := strings.Split(strings.ReplaceAll(strings.Join(args, "\x00"), "%s", verb), "\x00")
			root := cli.NewRootCmd(cmdutil.NewFactory(cmdutil.Streams{In: strings.NewReader(""), Out: &buf, Err: &buf}))
			cmd, rest, err := root.Find(a)
			if err != nil || cmd == root {
				t.Errorf("%q: no such command (%v)", line, err)
				break
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%q: flags refused: %v", line, err)
				break
			}
			pos := cmd.Flags().Args()
			// A group takes no arguments of its own, unless it says it does
			// (`ledgerctl search QUERY` next to `search reindex`).
			if cmd.HasSubCommands() && len(pos) > 0 && cmd.Annotations[search.ArgsOfItsOwn] == "" {
				t.Errorf("%q: %q is not a subcommand of %s", line, pos[0], cmd.CommandPath())
				break
			}
			if err := cmd.ValidateArgs(pos); err != nil {
				t.Errorf("%q: arguments refused: %v", line, err)
				break
			}
			if offline[cmd.CommandPath()] {
				if _, errs, code := clitest.Run(t, t.TempDir(), nil, a...); code != cmdutil.ExitOK {
					t.Errorf("%q: exit %d: %s", line, code, errs)
				}
			}
			if !strings.Contains(line, "%s") {
				break
			}
		}
	}
}

// TestEveryCommandHasExamples: every command a person runs shows at least
// one example in its --help.
func TestEveryCommandHasExamples(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if !sub.IsAvailableCommand() || sub.Name() == "help" {
				continue
			}
			// cobra's own completion subcommands explain themselves at length.
			if sub.Example == "" && sub.Parent().Name() != "completion" {
				t.Errorf("%s has no example", sub.CommandPath())
			}
			walk(sub)
		}
	}
	walk(cli.NewRootCmd(cmdutil.NewFactory(cmdutil.Streams{In: strings.NewReader(""), Out: &buf, Err: &buf})))
}
