package archive

// slots counts places held per key against one limit: the mechanism behind
// the archive list's gate (lists at once, in total and per caller) and the
// capture quota (captures at once per caller and per organization). It is
// not safe on its own: its owner guards it with its mutex, so that several
// slots can be checked and taken together or not at all.
type slots struct {
	limit int
	held  map[string]int
}

func newSlots(limit int) slots { return slots{limit: limit, held: map[string]int{}} }

// full says key holds its limit (or more: a limit lowered under load).
func (s *slots) full(key string) bool { return s.held[key] >= s.limit }

func (s *slots) take(key string) { s.held[key]++ }

func (s *slots) give(key string) {
	if s.held[key]--; s.held[key] <= 0 {
		delete(s.held, key)
	}
}

// count is how many places key holds.
func (s *slots) count(key string) int { return s.held[key] }
