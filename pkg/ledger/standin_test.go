package ledger

import "testing"

func TestStandIn(t *testing.T) {
	var s StandIn
	if got := s.For("absent-1", false); got != "absent-1" {
		t.Fatalf("with no archive found yet: %q", got)
	}
	if got := s.For("a", true); got != "a" {
		t.Fatalf("a found archive is asked about itself: %q", got)
	}
	if got := s.For("absent-2", false); got != "a" {
		t.Fatalf("an absent id is asked about as the last found: %q", got)
	}
	s.For("b", true)
	if got := s.For("absent-3", false); got != "b" {
		t.Fatalf("the stand-in follows the last found: %q", got)
	}
}
