package blob

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

type statusErr int

func (e statusErr) Error() string       { return fmt.Sprintf("status %d", int(e)) }
func (e statusErr) HTTPStatusCode() int { return int(e) }

// TestErrorClasses: a refusal of one request is ErrRejected (that object's
// problem); no answer, a gateway failure, a timeout or throttling is the
// service's state (ledger.ErrUnreachable); anything else is neither.
func TestErrorClasses(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	for _, tc := range []struct {
		err                   error
		rejected, unreachable bool
	}{
		{fmt.Errorf("get: %w", statusErr(400)), true, false},
		{statusErr(403), true, false},
		{statusErr(500), true, false},
		{statusErr(501), true, false},
		{statusErr(502), false, true},
		{statusErr(503), false, true},
		{statusErr(504), false, true},
		{statusErr(408), false, true},
		{statusErr(429), false, true},
		{fmt.Errorf("operation error S3: GetObject: %w", refused), false, true},
		{context.DeadlineExceeded, false, true},
		{zeroStatus{refused}, false, true}, // how the SDK reports a failed dial
		{context.Canceled, false, false},
		{errors.New("something else"), false, false},
	} {
		w := (&Client{}).wrap(tc.err, "get", "b", "k")
		if got := errors.Is(w, ErrRejected); got != tc.rejected {
			t.Errorf("wrap(%v) is ErrRejected = %v, want %v", tc.err, got, tc.rejected)
		}
		if got := errors.Is(w, ledger.ErrUnreachable); got != tc.unreachable {
			t.Errorf("wrap(%v) is ErrUnreachable = %v, want %v", tc.err, got, tc.unreachable)
		}
	}
}

// zeroStatus is a response error of status 0 around a network error.
type zeroStatus struct{ err error }

func (e zeroStatus) Error() string       { return "https response error StatusCode: 0: " + e.err.Error() }
func (e zeroStatus) HTTPStatusCode() int { return 0 }
func (e zeroStatus) Unwrap() error       { return e.err }
