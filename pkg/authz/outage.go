package authz

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The embedded OpenFGA reports a datastore it cannot use as an internal
// error (gRPC code internal_error), whatever went wrong: its message hides
// the cause. Two things tell an outage apart, neither by message text:
//
//   - the cause itself, which the in-process server keeps in the error's
//     chain: a connection PostgreSQL refused or ended, a network error;
//   - when the chain says nothing (a BatchCheck item's error is a code and
//     a message), the datastore's own readiness probe (a ping), asked only
//     after an internal error.
//
// Either way the error becomes an *UnreachableError, which matches
// ledger.ErrUnreachable: 503 with Retry-After in the API, exit 4 in the
// CLI, and a drain that stops without blaming its rows.

// fail turns an in-process error into an *Error, or an *UnreachableError
// when the datastore is down.
func (e *Embedded) fail(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	out := fromStatus(op, err)
	if e.where == "" || !internalCode(err) {
		return out
	}
	if connectionLost(err) {
		return &UnreachableError{What: "the OpenFGA datastore (PostgreSQL)", Where: e.where, Err: out}
	}
	return e.outage(ctx, out)
}

// outage returns err as an *UnreachableError when the datastore does not
// answer its readiness probe now, else err unchanged.
func (e *Embedded) outage(ctx context.Context, err error) error {
	if e.where == "" || ctx.Err() != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	st, perr := e.ds.IsReady(ctx)
	if perr == nil && st.IsReady {
		return err
	}
	return &UnreachableError{What: "the OpenFGA datastore (PostgreSQL)", Where: e.where, Err: err}
}

// internalCode: the server answered an internal error (OpenFGA's
// internal_error family, or gRPC's Internal, Unavailable, Unknown).
func internalCode(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return true // no status at all: not an answer about the request
	}
	c := st.Code()
	return openfgav1.InternalErrorCode_name[int32(c)] != "" || c == codes.Internal || c == codes.Unavailable || c == codes.Unknown
}

// connectionLost: err's chain holds a connection PostgreSQL refused or
// ended, or a network failure.
func connectionLost(err error) bool {
	var pg *pgconn.PgError
	var connect *pgconn.ConnectError
	if errors.As(err, &pg) {
		// Refused for a bad password, say, is not an outage; 55000 is one
		// only on connecting.
		return outageCode(pg.Code) && (pg.Code != "55000" || errors.As(err, &connect))
	}
	var netErr *net.OpError
	return errors.As(err, &connect) || errors.As(err, &netErr) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF)
}

// outageCode: a SQLSTATE saying the database is not there to be used now —
// 08 connection exception; 57P01-57P03 shutting down or not accepting
// connections yet; 55000 on connecting, a database not accepting
// connections (ALLOW_CONNECTIONS false); 53300 too many connections.
func outageCode(code string) bool {
	switch code {
	case "57P01", "57P02", "57P03", "55000", "53300":
		return true
	}
	return strings.HasPrefix(code, "08")
}
