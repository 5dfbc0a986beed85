package app

import (
	"context"

	"github.com/capture-ledger/ledgerctl/pkg/replay"
)

// Replay is the replay use-case (viewer links and their reads) signing
// with key: OpenFGA for can_view, the ledger for where archives are, S3 for
// their bytes.
func (a *App) Replay(ctx context.Context, key []byte) (*replay.Service, error) {
	signer, err := replay.NewSigner(key)
	if err != nil {
		return nil, err
	}
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	perms, err := a.Permissions(ctx)
	if err != nil {
		return nil, err
	}
	return &replay.Service{Perms: perms, Catalog: st, Objects: a.Blob(), Signer: signer, Log: a.Log,
		Reads:           replay.ReadBounds{PerCaller: a.Settings.ReplayReadsPerCaller, PerOrg: a.Settings.ReplayReadsPerOrg, Total: a.Settings.ReplayReads},
		CollectionLimit: a.Settings.ReplayCollectionLimit}, nil
}
