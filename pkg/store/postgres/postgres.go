// Package postgres is the ledger's PostgreSQL adapter: connecting, running
// the embedded migrations, and the queries the use-cases need (pgx/v5).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/pgaddr"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// UnreachableError says the database could not be reached, naming the host
// but never the password.
type UnreachableError struct {
	Host string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach PostgreSQL at %s: %s", e.Host, oneLine(e.Err))
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ledger.ErrUnreachable) true.
func (e *UnreachableError) Is(target error) bool { return target == ledger.ErrUnreachable }

// Cause is the most specific part of a driver error: the server's message,
// or the network error under the dial, else err itself.
func Cause(err error) error { return pgaddr.Cause(err) }

// oneLine keeps the last, most specific part of a nested driver error.
func oneLine(err error) string {
	if c := Cause(err); c != err {
		return c.Error()
	}
	s := strings.ReplaceAll(err.Error(), "\n", " ")
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}

// HostOf returns host:port of a PostgreSQL URL or key=value DSN, for messages.
func HostOf(dsn string) string { return pgaddr.Host(dsn, "DATABASE_URL") }

// Open connects a pool and pings it, so an unreachable database fails here
// with one clear line instead of at the first query.
func Open(ctx context.Context, dsn string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, &ledger.SettingError{Name: "DATABASE_URL", Reason: "is not a PostgreSQL URL: " + oneLine(err)}
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, &UnreachableError{Host: HostOf(dsn), Err: err}
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, &UnreachableError{Host: HostOf(dsn), Err: err}
	}
	return pool, nil
}

// IsUniqueViolation reports whether err is a unique violation of the named
// constraint or index.
func IsUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == constraint
}
