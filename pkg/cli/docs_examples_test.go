package cli_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/capture-ledger/ledgerctl/pkg/cli"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/cli/search"
)

// The shell examples of README.md and docs/*.md are checked by the rule
// below, so that a pasted example works:
//
//   - An example is a command line in a fenced block marked sh, bash or
//     shell; a line ending in a backslash continues on the next; a comment
//     ("  # …") ends it. Words before the command of the form NAME=value are
//     its environment.
//   - Every example whose command is ledgerctl (or bin/ledgerctl) names a
//     command that exists, with flags it accepts and as many arguments as it
//     takes ($ID and other placeholders count as one argument).
//   - Those that need no server, stack or configuration — a --help, version,
//     completion, rules check, fga test — are run in-process in an empty
//     directory, and must exit 0, or the status their comment names
//     ("# exit 2: …"). An example documented to exit 2 is not held to the
//     flag and argument check — refusing is what it shows — and is run when
//     that check refuses it (nothing runs before the check) or it is offline.
//   - Anything else (curl, make, a setting) is left alone: it needs a server,
//     a stack or the network.

// docExample is one command line of a shell block.
type docExample struct {
	where string            // file:line
	text  string            // the command line as written, without its comment
	env   map[string]string // NAME=value words before the command
	args  []string          // the words after ledgerctl; nil for another command
	code  int               // the exit status its comment names, else 0
}

var (
	shellFence = regexp.MustCompile("^```(sh|bash|shell)\\s*$")
	exitNoted  = regexp.MustCompile(`\bexit (\d)\b`)
	envWord    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
)

// docExamples reads the examples of one Markdown file.
func docExamples(name, md string) []docExample {
	var out []docExample
	lines := strings.Split(md, "\n")
	in := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.HasPrefix(line, "```") {
			in = !in && shellFence.MatchString(line)
			continue
		}
		if !in {
			continue
		}
		start := i
		for strings.HasSuffix(strings.TrimRight(line, " "), "\\") && i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "```") {
			i++
			line = strings.TrimSuffix(strings.TrimRight(line, " "), "\\") + " " + strings.TrimSpace(lines[i])
		}
		text, comment := cutComment(line)
		if text == "" {
			continue
		}
		ex := docExample{where: fmt.Sprintf("%s:%d", name, start+1), text: text, env: map[string]string{}}
		if m := exitNoted.FindStringSubmatch(comment); m != nil {
			ex.code, _ = strconv.Atoi(m[1])
		}
		words := splitWords(text)
		for len(words) > 0 && envWord.MatchString(words[0]) {
			k, v, _ := strings.Cut(words[0], "=")
			ex.env[k] = v
			words = words[1:]
		}
		if len(words) > 0 && (words[0] == "ledgerctl" || words[0] == "bin/ledgerctl" || words[0] == "./bin/ledgerctl") {
			ex.args = words[1:]
			if ex.args == nil {
				ex.args = []string{}
			}
		}
		out = append(out, ex)
	}
	return out
}

// cutComment splits a shell line at its comment: a # at the start or after
// a space, outside quotes.
func cutComment(line string) (text, comment string) {
	quote := rune(0)
	for i, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return strings.TrimSpace(line[:i]), line[i:]
		}
	}
	return strings.TrimSpace(line), ""
}

// offlineExample reports whether the command args names needs no server,
// stack or configuration.
func offlineExample(path string, args []string) bool {
	for _, a := range args {
		if a == "--help" || a == "-h" {
			return true
		}
	}
	switch path {
	case "ledgerctl version", "ledgerctl rules check", "ledgerctl fga test":
		return true
	}
	return strings.HasPrefix(path, "ledgerctl completion ")
}

// checkDocExample checks one ledgerctl example by the rule above and says
// what is wrong with it ("" when nothing is); ran reports whether it was run.
func checkDocExample(t *testing.T, ex docExample) (problem string, ran bool) {
	t.Helper()
	var buf bytes.Buffer
	root := cli.NewRootCmd(cmdutil.NewFactory(cmdutil.Streams{In: strings.NewReader(""), Out: &buf, Err: &buf}))
	cmd, rest, err := root.Find(ex.args)
	if err != nil || cmd == root {
		return fmt.Sprintf("no such command (%v)", err), false
	}
	refused := ""
	if err := cmd.ParseFlags(rest); errors.Is(err, pflag.ErrHelp) {
		// --help: what is left is not checked, cobra prints the help.
	} else if err != nil {
		refused = fmt.Sprintf("flags refused: %v", err)
	} else if pos := cmd.Flags().Args(); cmd.HasSubCommands() && len(pos) > 0 && cmd.Annotations[search.ArgsOfItsOwn] == "" {
		refused = fmt.Sprintf("%q is not a subcommand of %s", pos[0], cmd.CommandPath())
	} else if err := cmd.ValidateArgs(pos); err != nil {
		refused = fmt.Sprintf("arguments refused: %v", err)
	}
	switch {
	case refused != "" && ex.code != cmdutil.ExitUsage:
		return refused, false
	case refused != "":
		// Documented to exit 2 and refused before it runs: running it
		// touches nothing, so it is run to see the status.
	case !offlineExample(cmd.CommandPath(), ex.args):
		if ex.code == cmdutil.ExitUsage {
			return "documented to exit 2, but its flags and arguments are accepted, and it needs a server to run", false
		}
		return "", false
	}
	_, errs, code := clitest.Run(t, t.TempDir(), ex.env, ex.args...)
	if code != ex.code {
		return fmt.Sprintf("exit %d, want %d: %s", code, ex.code, errs), true
	}
	return "", true
}

// TestDocShellExamplesWork: every ledgerctl example in README.md and
// docs/*.md is a command that exists with flags and arguments it accepts,
// and those that need no server run and exit as documented.
func TestDocShellExamplesWork(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../../README.md"}, files...)
	checked, ran := 0, 0
	for _, file := range files {
		md, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range docExamples(strings.TrimPrefix(file, "../../"), string(md)) {
			if ex.args == nil {
				continue
			}
			checked++
			problem, didRun := checkDocExample(t, ex)
			if didRun {
				ran++
			}
			if problem != "" {
				t.Errorf("%s: %s\n  %s", ex.where, ex.text, problem)
			}
		}
	}
	// The extraction itself must not quietly find nothing.
	t.Logf("checked %d ledgerctl examples, ran %d", checked, ran)
	if checked < 20 || ran < 6 {
		t.Errorf("checked %d ledgerctl examples and ran %d: the docs' shell blocks were not read", checked, ran)
	}
}

// TestDocShellExamplesCatchBrokenOnes: the check above fails on an
// example that names no command, a flag that does not exist, a missing
// argument, and an offline example that does not exit as documented.
func TestDocShellExamplesCatchBrokenOnes(t *testing.T) {
	t.Parallel()
	md := "text\n\n```sh\n" +
		"ledgerctl versoin\n" +
		"ledgerctl archives list --as alice --org acme --colour\n" +
		"ledgerctl archives url --as alice --org acme\n" +
		"bin/ledgerctl rules check --seed ftp://www.example.com/\n" +
		"ledgerctl rules check --seed https://www.example.com/   # exit 1\n" +
		"ledgerctl rules check \\\n    --seed https://www.example.com/ --rule jump:same-origin\n" +
		"ledgerctl archives list --as alice --org acme   # exit 2\n" +
		"ledgerctl capture --org acme --as alice   # exit 2: no URL\n" +
		"```\n\n```json\nledgerctl nothing-here\n```\n"
	exs := docExamples("broken.md", md)
	if len(exs) != 8 {
		t.Fatalf("read %d examples, want 8: %+v", len(exs), exs)
	}
	for i, want := range []string{"no such command", "flags refused", "arguments refused", "exit 1, want 0", "exit 0, want 1", "exit 2, want 0", "documented to exit 2, but", ""} {
		if problem, _ := checkDocExample(t, exs[i]); !strings.Contains(problem, want) || (want == "") != (problem == "") {
			t.Errorf("%s %q: problem %q, want %q", exs[i].where, exs[i].text, problem, want)
		}
	}
	if exs[5].where != "broken.md:9" || !strings.Contains(exs[5].text, "--rule jump:same-origin") {
		t.Errorf("a continued line: %+v", exs[5])
	}
	good := docExamples("good.md", "```sh\nCAPTURE_LEDGER_X=1 ledgerctl rules check --seed https://www.example.com/ --rule jump:x   # exit 2: unknown action\nmake run\n```\n")
	if len(good) != 2 || good[0].env["CAPTURE_LEDGER_X"] != "1" || good[1].args != nil {
		t.Fatalf("read %+v", good)
	}
	if problem, ran := checkDocExample(t, good[0]); problem != "" || !ran {
		t.Errorf("a documented exit 2: %q (ran %v)", problem, ran)
	}
}
