// Command ledgerctl is the capture-ledger service and operator CLI.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/capture-ledger/ledgerctl/pkg/cli"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cmdutil.StdStreams())
	stop()
	os.Exit(code)
}
