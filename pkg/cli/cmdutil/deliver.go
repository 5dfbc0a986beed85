package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
)

// deliverTimeout bounds how long a command waits for OpenFGA to take what
// it queued before it says what remains.
const deliverTimeout = 30 * time.Second

// Deliver drains the outbox before a command that registered archives
// exits, so that those allowed can list and open them at once — with no
// serve running, nothing else would. What cannot be delivered now is
// named with the command that finishes it; the archives are registered
// either way, so this never fails the command.
func Deliver(ctx context.Context, a *app.App, errw io.Writer) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deliverTimeout)
	defer cancel()
	res, err := a.Drain(dctx, outbox.Options{})
	switch {
	case errors.Is(err, ledger.ErrUnreachable):
		fmt.Fprintf(errw, "their permissions are queued, but OpenFGA did not answer (%v): `ledgerctl drain` (or serve) delivers them\n", ledger.UnreachableCause(err))
	case err != nil:
		fmt.Fprintf(errw, "their permissions are queued, but delivering them failed (%v): `ledgerctl drain` (or serve) delivers them\n", err)
	case res.Failed > 0 || res.Dead > 0:
		fmt.Fprintf(errw, "%d permission row(s) could not be delivered yet: see `ledgerctl drain --status`\n", res.Failed+res.Dead)
	default:
		fmt.Fprintf(errw, "their permissions are in OpenFGA (%d row(s) delivered): those allowed can list and open them now\n", res.Delivered)
	}
}
