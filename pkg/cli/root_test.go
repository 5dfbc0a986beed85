package cli

import (
	"strings"
	"testing"
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
		out, errs, code := run(t, t.TempDir(), nil, tc.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, code, out, errs)
		}
	}
	out, _, code := run(t, t.TempDir(), nil, "archives")
	if code != ExitOK || !strings.Contains(out, "Available Commands") {
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
		if _, errs, code := run(t, t.TempDir(), nil, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, ExitUsage, errs)
		}
	}
}
