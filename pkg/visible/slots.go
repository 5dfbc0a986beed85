package visible

// Slots counts places held per key against one limit: the mechanism behind
// the gate (scans at once, in total and per caller) and the capture quota
// (captures at once per caller and per organization). It is not safe on its
// own: its owner guards it with its mutex, so that several Slots can be
// checked and taken together or not at all.
type Slots struct {
	limit int
	held  map[string]int
}

// NewSlots returns Slots of limit places per key.
func NewSlots(limit int) Slots { return Slots{limit: limit, held: map[string]int{}} }

// Full says key holds its limit (or more: a limit lowered under load).
func (s *Slots) Full(key string) bool { return s.held[key] >= s.limit }

// Take takes one place for key.
func (s *Slots) Take(key string) { s.held[key]++ }

// Give gives back one of key's places.
func (s *Slots) Give(key string) {
	if s.held[key]--; s.held[key] <= 0 {
		delete(s.held, key)
	}
}

// Count is how many places key holds.
func (s *Slots) Count(key string) int { return s.held[key] }
