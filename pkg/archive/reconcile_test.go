package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
)

type statusErr int

func (e statusErr) Error() string       { return fmt.Sprintf("status %d", int(e)) }
func (e statusErr) HTTPStatusCode() int { return int(e) }

type sqlErr string

func (e sqlErr) Error() string    { return "SQLSTATE " + string(e) }
func (e sqlErr) SQLState() string { return string(e) }

// TestReconcileErrorClasses: what stops a run is a dependency that does not
// answer; a refusal of one request or one row's data is that row's error.
func TestReconcileErrorClasses(t *testing.T) {
	t.Parallel()
	netErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	s3Down := &blob.UnreachableError{Endpoint: "http://127.0.0.1:1", Err: errors.New("get: dial tcp: connection refused")}
	for _, tc := range []struct {
		name       string
		err        error
		unreachS3  bool // s3Err wraps it as unreachable (what blob classified so)
		rowData    bool // rowDataError
		unreachSQL bool // storeErr wraps it as unreachable
	}{
		{"S3 did not answer (blob's verdict)", fmt.Errorf("read manifest: %w", s3Down), true, false, false},
		{"400 KeyTooLong", fmt.Errorf("get: %w", statusErr(400)), false, false, false},
		{"503 unavailable, unclassified", statusErr(503), false, false, false},
		{"connection refused (PostgreSQL)", fmt.Errorf("connect: %w", netErr), false, false, true},
		{"cut mid-result (PostgreSQL)", io.ErrUnexpectedEOF, false, false, true},
		{"interrupted", context.Canceled, false, false, false},
		{"no HTTP status", errors.New("x"), false, false, false},
		{"22021 NUL in a value", fmt.Errorf("insert: %w", sqlErr("22021")), false, true, false},
		{"23505 unique", sqlErr("23505"), false, true, false},
		{"42P01 no table", sqlErr("42P01"), false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var u *UnreachableError
			if got := errors.As(s3Err(tc.err), &u); got != tc.unreachS3 {
				t.Errorf("s3Err unreachable = %v", got)
			}
			if got := rowDataError(tc.err); got != tc.rowData {
				t.Errorf("rowDataError = %v", got)
			}
			if got := errors.As(storeErr(tc.err), &u); got != tc.unreachSQL {
				t.Errorf("storeErr unreachable = %v", got)
			}
		})
	}
}
