package app

import (
	"context"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
)

// sessionStore keeps the console's sessions and sign-ins under way in the
// ledger database (migration 000015).
type sessionStore struct{ db *postgres.Store }

func (s sessionStore) CreateSession(ctx context.Context, hash []byte, id identity.Identity, expires time.Time) error {
	return s.db.CreateSession(ctx, hash, postgres.SessionRow{Subject: id.Subject, Organizations: id.Organizations, Expires: expires})
}

func (s sessionStore) Session(ctx context.Context, hash []byte, now time.Time) (identity.Identity, bool, error) {
	row, ok, err := s.db.Session(ctx, hash, now)
	if err != nil || !ok {
		return identity.Identity{}, false, err
	}
	orgs := row.Organizations
	if orgs == nil {
		orgs = []string{}
	}
	return identity.Identity{Subject: row.Subject, Organizations: orgs, Expires: row.Expires}, true, nil
}

func (s sessionStore) EndSession(ctx context.Context, hash []byte, now time.Time) error {
	return s.db.EndSession(ctx, hash, now)
}

func (s sessionStore) BeginSignIn(ctx context.Context, p identity.PendingSignIn) error {
	return s.db.BeginSignIn(ctx, postgres.SignIn(p))
}

func (s sessionStore) TakeSignIn(ctx context.Context, stateHash []byte) (identity.PendingSignIn, bool, error) {
	p, ok, err := s.db.TakeSignIn(ctx, stateHash)
	return identity.PendingSignIn(p), ok, err
}

// SessionStore is the console's session store on the ledger database.
func (a *App) SessionStore(ctx context.Context) (identity.SessionStore, error) {
	db, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	return sessionStore{db: db}, nil
}
