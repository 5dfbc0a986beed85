package api

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestHeldPlacesGiveBackOnce: a place held for a link is given back once:
// by whoever takes it before the link expires, else when it expires; a
// label no link holds gives nothing.
func TestHeldPlacesGiveBackOnce(t *testing.T) {
	t.Parallel()
	var h heldPlaces
	var expired, taken atomic.Int32
	h.hold("expires", func() { expired.Add(1) }, 10*time.Millisecond)
	h.hold("taken", func() { taken.Add(1) }, 10*time.Millisecond)
	leave := h.take("taken")
	if leave == nil {
		t.Fatal("the place held for a link was not there to take")
	}
	if h.take("taken") != nil || h.take("never held") != nil {
		t.Error("a place was taken twice, or one no link held was given")
	}
	deadline := time.Now().Add(10 * time.Second)
	for expired.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if expired.Load() != 1 {
		t.Fatalf("an unfollowed link's place was given back %d times, want once at its expiry", expired.Load())
	}
	if h.take("expires") != nil {
		t.Error("an expired link's place could still be taken")
	}
	time.Sleep(30 * time.Millisecond) // past the taken link's expiry
	if taken.Load() != 0 {
		t.Error("a taken place was given back at its link's expiry, not by its taker")
	}
	leave()
	if taken.Load() != 1 || expired.Load() != 1 {
		t.Errorf("given back: taken %d, expired %d; want 1 and 1", taken.Load(), expired.Load())
	}
}
