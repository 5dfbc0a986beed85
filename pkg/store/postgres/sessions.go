package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// The console's sign-in sessions and sign-ins under way (migration 000015).
// Only hashes of the browser's secrets are stored (identity.Hash); pkg/app
// adapts these to identity.SessionStore.

// SignIn is a sign-in under way (identity.PendingSignIn).
type SignIn struct {
	StateHash, BrowserHash []byte
	Nonce, Verifier        string
	ReturnTo               string
	Expires                time.Time
}

// SessionRow is a session's identity and end.
type SessionRow struct {
	Subject       string
	Organizations []string
	Expires       time.Time
}

// CreateSession stores a session whose secret hashes to hash.
func (s *Store) CreateSession(ctx context.Context, hash []byte, id SessionRow) error {
	orgs := id.Organizations
	if orgs == nil {
		orgs = []string{}
	}
	_, err := s.Pool.Exec(ctx, `INSERT INTO web_sessions (secret_hash, subject, organizations, expires_at) VALUES ($1, $2, $3, $4)`,
		hash, id.Subject, orgs, id.Expires)
	return err
}

// Session returns the identity of the session whose secret hashes to hash,
// if it has not ended at now; ok is false otherwise.
func (s *Store) Session(ctx context.Context, hash []byte, now time.Time) (SessionRow, bool, error) {
	var id SessionRow
	err := s.Pool.QueryRow(ctx, `SELECT subject, organizations, expires_at FROM web_sessions WHERE secret_hash = $1 AND expires_at > $2`, hash, now).
		Scan(&id.Subject, &id.Organizations, &id.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return SessionRow{}, false, nil
	}
	if err != nil {
		return SessionRow{}, false, err
	}
	return id, true, nil
}

// EndSession deletes the session whose secret hashes to hash (nothing when
// there is none), and every session that has ended by now.
func (s *Store) EndSession(ctx context.Context, hash []byte, now time.Time) error {
	_, err := s.Pool.Exec(ctx, `DELETE FROM web_sessions WHERE secret_hash = $1 OR expires_at <= $2`, hash, now)
	return err
}

// BeginSignIn stores a sign-in under way, and forgets those that ended.
func (s *Store) BeginSignIn(ctx context.Context, p SignIn) error {
	tx, err := s.Pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `DELETE FROM web_sign_ins WHERE expires_at <= now()`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO web_sign_ins (state_hash, browser_hash, nonce, verifier, return_to, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		p.StateHash, p.BrowserHash, p.Nonce, p.Verifier, p.ReturnTo, p.Expires); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// TakeSignIn deletes and returns the sign-in whose state hashes to
// stateHash: each is taken once, whatever the callback then decides.
func (s *Store) TakeSignIn(ctx context.Context, stateHash []byte) (SignIn, bool, error) {
	p := SignIn{StateHash: stateHash}
	err := s.Pool.QueryRow(ctx, `DELETE FROM web_sign_ins WHERE state_hash = $1 RETURNING browser_hash, nonce, verifier, return_to, expires_at`, stateHash).
		Scan(&p.BrowserHash, &p.Nonce, &p.Verifier, &p.ReturnTo, &p.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return SignIn{}, false, nil
	}
	if err != nil {
		return SignIn{}, false, err
	}
	return p, true, nil
}
