// Package pgaddr says where a PostgreSQL URL points and why a driver error
// happened, for messages (never a password). Both PostgreSQL adapters (the
// ledger's store and OpenFGA's datastore) use it; it does no I/O.
package pgaddr

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Host is host:port of a PostgreSQL URL or key=value DSN; one it cannot
// parse is named by setting, the variable it came from.
func Host(dsn, setting string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		if u, uerr := url.Parse(dsn); uerr == nil && u.Host != "" {
			return u.Host
		}
		return "(unparsable " + setting + ")"
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return fmt.Sprintf("%s (socket, port %d)", cfg.Host, cfg.Port)
	}
	return net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))
}

// Cause is the part of a driver error worth showing: PostgreSQL's own
// message, or the network error under a failed dial; else err.
func Cause(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return errors.New(pgErr.Message)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return opErr.Err
	}
	return err
}
