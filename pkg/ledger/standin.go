package ledger

import "sync/atomic"

// StandIn makes "absent" cost what "not allowed" costs. A route that
// answers 404 to both reads the ledger and asks OpenFGA in either case, but
// OpenFGA answers faster for an archive it holds no tuples of (nothing to
// follow) than for another organization's (the archive's job, its owner, its
// organization): the difference would tell an outsider which ids exist.
// So, for an id the ledger does not have, the question is asked about a
// stand-in instead — the last archive this process found in the ledger,
// which OpenFGA walks like any other — and its answer is ignored. The
// zero value is ready; it is safe for concurrent use.
type StandIn struct{ last atomic.Value } // of string

// Found records id as an archive the ledger has.
func (s *StandIn) Found(id string) { s.last.Store(id) }

// For is the id to ask OpenFGA about: id itself when the ledger has it (it
// is recorded as the next stand-in), else the stand-in (id when there is
// none yet).
func (s *StandIn) For(id string, found bool) string {
	if found {
		s.Found(id)
		return id
	}
	if last, ok := s.last.Load().(string); ok {
		return last
	}
	return id
}
