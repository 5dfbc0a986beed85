package blob

import (
	"errors"
	"fmt"
	"testing"
)

type statusErr int

func (e statusErr) Error() string       { return fmt.Sprintf("status %d", int(e)) }
func (e statusErr) HTTPStatusCode() int { return int(e) }

// TestRejected: a refusal of one request is ErrRejected; no answer, a
// gateway failure, a timeout or throttling is the service's state.
func TestRejected(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("get: %w", statusErr(400)), true},
		{statusErr(403), true},
		{statusErr(500), true},
		{statusErr(501), true},
		{statusErr(502), false},
		{statusErr(503), false},
		{statusErr(504), false},
		{statusErr(408), false},
		{statusErr(429), false},
		{errors.New("connection refused"), false},
	} {
		if got := rejected(tc.err); got != tc.want {
			t.Errorf("rejected(%v) = %v, want %v", tc.err, got, tc.want)
		}
		if got := errors.Is(wrap(tc.err, "get", "b", "k"), ErrRejected); got != tc.want {
			t.Errorf("wrap(%v) is ErrRejected = %v, want %v", tc.err, got, tc.want)
		}
	}
}
