package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
)

// deliverTimeout bounds how long a command waits for OpenFGA to take what
// it queued before it says what remains.
const deliverTimeout = 30 * time.Second

// Deliver drains the outbox before a command that registered archives
// exits, so that those allowed can list and open them at once — with no
// serve running, nothing else would. With a serve running, it has usually
// taken the rows already (they wake its drainer as they are committed):
// then Deliver waits for the rows a drainer holds to be marked. What cannot
// be delivered now is named with the command that finishes it; the
// archives are registered either way, so this never fails the command.
// It says so in lang.
func Deliver(ctx context.Context, a *app.App, errw io.Writer, lang i18n.Lang) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deliverTimeout)
	defer cancel()
	res, err := a.Drain(dctx, outbox.Options{})
	inFlight, pending := 0, 0
	if err == nil && res.Delivered+res.Failed+res.Dead == 0 {
		// Another drainer holds rows (or a tuple of ours was in flight):
		// once it is done, what it left is this command's to deliver.
		if inFlight, err = othersInFlight(dctx, a); err == nil && inFlight == 0 {
			if res, err = a.Drain(dctx, outbox.Options{}); err == nil && res.Delivered+res.Failed+res.Dead == 0 {
				pending, err = pendingRows(dctx, a)
			}
		}
	}
	say := func(key string, args ...any) { fmt.Fprintln(errw, deliverWords.Say(lang, key, args...)) }
	switch {
	case errors.Is(err, ledger.ErrUnreachable):
		say("unreachable", ledger.UnreachableCause(err))
	case err != nil:
		say("failed", err)
	case res.Failed > 0 || res.Dead > 0:
		say("notYet", res.Failed+res.Dead)
	case inFlight > 0:
		say("inFlight", inFlight)
	case pending > 0:
		say("pending", pending)
	case res.Delivered == 0:
		say("nothingLeft")
	default:
		say("delivered", res.Delivered)
	}
}

// deliverWords are what Deliver says, in English and Japanese.
var deliverWords = Words{
	"unreachable": {"their permissions are queued, but OpenFGA did not answer (%v): `ledgerctl drain` (or serve) delivers them",
		"権限はキューにありますが、OpenFGA が応答しませんでした（%v）。`ledgerctl drain`（または serve）が届けます"},
	"failed": {"their permissions are queued, but delivering them failed (%v): `ledgerctl drain` (or serve) delivers them",
		"権限はキューにありますが、届けられませんでした（%v）。`ledgerctl drain`（または serve）が届けます"},
	"notYet": {"%d permission row(s) could not be delivered yet: see `ledgerctl drain --status`",
		"権限の %d 行をまだ届けられていません。`ledgerctl drain --status` を見てください"},
	"inFlight": {"%d permission row(s) are still being delivered by another drainer (a running serve): see `ledgerctl drain --status`",
		"権限の %d 行は別の配送処理（実行中の serve）が届けている途中です。`ledgerctl drain --status` を見てください"},
	"pending": {"%d permission row(s) are not delivered yet (they are retried): see `ledgerctl drain --status`",
		"権限の %d 行はまだ届いていません（再試行されます）。`ledgerctl drain --status` を見てください"},
	"nothingLeft": {"no permission is left to deliver (a running serve delivers them as they are queued): those allowed can list and open them now",
		"届ける権限は残っていません（実行中の serve がキューに入るたびに届けます）。許された人はもう一覧で見て開けます"},
	"delivered": {"their permissions are in OpenFGA (%d row(s) delivered): those allowed can list and open them now",
		"権限は OpenFGA に入りました（%d 行を配送）。許された人はもう一覧で見て開けます"},
}

// othersInFlight waits, until ctx ends, for the outbox rows another
// drainer holds to be marked, and returns how many it still holds.
func othersInFlight(ctx context.Context, a *app.App) (int, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return 0, err
	}
	last := 0
	for {
		n, err := st.OutboxInFlight(ctx)
		switch {
		case err != nil && last > 0 && ctx.Err() != nil:
			return last, nil
		case err != nil:
			return 0, err
		case n == 0:
			return 0, nil
		}
		last = n
		select {
		case <-ctx.Done():
			return n, nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// pendingRows counts the outbox rows not delivered yet (nor dead).
func pendingRows(ctx context.Context, a *app.App) (int, error) {
	c, err := a.OutboxCounts(ctx)
	return c.Pending, err
}
