package replay

import (
	"math"
	"strconv"
	"strings"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// ParseRange reads an HTTP Range header asking for one byte range:
// "bytes=FIRST-LAST", "bytes=FIRST-" or "bytes=-SUFFIX". ok is false for
// anything else — no header, another unit, several ranges, bad syntax, a
// last byte before the first — and RFC 9110 §14.2 then has the server
// ignore the header and send the whole object. Positions too large for an
// int64 are kept as the largest one (a first byte past any object, a last
// byte or suffix covering all of it).
func ParseRange(h string) (r ledger.Range, ok bool) {
	unit, spec, found := strings.Cut(strings.TrimSpace(h), "=")
	if !found || !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		return ledger.Range{}, false
	}
	spec = strings.TrimSpace(spec)
	a, b, found := strings.Cut(spec, "-")
	if !found || strings.ContainsAny(spec, ",") {
		return ledger.Range{}, false
	}
	if a == "" {
		n, ok := position(b)
		if !ok {
			return ledger.Range{}, false
		}
		return ledger.Range{First: -1, Last: -1, Suffix: n}, true
	}
	first, ok := position(a)
	if !ok {
		return ledger.Range{}, false
	}
	if b == "" {
		return ledger.Range{First: first, Last: -1}, true
	}
	last, ok := position(b)
	if !ok || last < first {
		return ledger.Range{}, false
	}
	return ledger.Range{First: first, Last: last}, true
}

// position reads a run of ASCII digits (nothing else: no sign, no space).
func position(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return math.MaxInt64, true // only digits: too large
	}
	return n, true
}
