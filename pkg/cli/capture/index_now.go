package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/search"
)

// indexTimeout bounds how long a command indexes what it registered before
// it says what remains.
const indexTimeout = 2 * time.Minute

// indexNow indexes the archives a command registered, so that a search
// finds their pages when it exits — with no serve running, nothing else
// would. What cannot be indexed now is named with the command that
// finishes it; the archives are registered either way, so this never
// fails the command. It says so in lang.
func indexNow(ctx context.Context, a *app.App, ids []string, errw io.Writer, lang i18n.Lang) {
	if len(ids) == 0 {
		return
	}
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), indexTimeout)
	defer cancel()
	ix, err := a.Indexer(ictx)
	var res search.Result
	if err == nil {
		res, err = ix.IndexArchives(ictx, ids)
	}
	switch {
	case errors.Is(err, search.ErrIndexBusy):
		fmt.Fprintln(errw, words.Say(lang, "indexBusy"))
	case errors.Is(err, ledger.ErrUnreachable):
		fmt.Fprintln(errw, words.Say(lang, "indexUnreachable", ledger.UnreachableCause(err)))
	case err != nil:
		fmt.Fprintln(errw, words.Say(lang, "indexFailed", err))
	case res.Failed > 0:
		fmt.Fprintln(errw, words.Say(lang, "indexSome", res.Indexed, res.Failed))
	default:
		fmt.Fprintln(errw, words.Say(lang, "indexDone", res.Indexed, res.Pages))
	}
}

// archiveIDs are the archives a capture registered.
func archiveIDs(res archive.CaptureResult) []string {
	var ids []string
	for _, pg := range res.Pages {
		if pg.ArchiveID != "" {
			ids = append(ids, pg.ArchiveID)
		}
	}
	return ids
}
