// Package cli is ledgerctl's cobra command tree. Main runs it in-process, so
// tests drive the real commands without a subprocess; each command is an
// options struct, a constructor and a run function.
package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
)

// Main runs ledgerctl with args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, s cmdutil.Streams) int {
	f := cmdutil.NewFactory(s)
	root := NewRootCmd(f)
	root.SetArgs(args)
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	err := root.ExecuteContext(ctx)
	f.Close()
	if err == nil {
		return cmdutil.ExitOK
	}
	code, msg := cmdutil.Classify(err)
	if msg != "" {
		if f.JSONErrors {
			_ = json.NewEncoder(s.Err).Encode(map[string]any{"error": msg, "exitCode": code})
		} else {
			fmt.Fprintln(s.Err, "ledgerctl: "+msg)
		}
	}
	return code
}
