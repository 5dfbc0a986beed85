package capture

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseRetryAfter: a Retry-After header comes from the site being
// captured. Whatever it says, the wait is between 0 and a day; a plain
// number of seconds within a day is that many seconds.
func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, 9, 24, 0, 0, 0, 0, time.UTC)
	for _, s := range []string{"", "7", " 120 ", "-5", "0", "86401", "9223372036854775807", "99999999999999999999",
		"Thu, 24 Sep 2026 00:01:00 GMT", "Wed, 23 Sep 2026 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT",
		"Monday, 01-Jan-01 00:00:00 GMT", "Mon Jan  1 00:00:00 0001", "1e3", "0x10", "\x00", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d := ParseRetryAfter(v, now)
		if d < 0 || d > 24*time.Hour {
			t.Fatalf("ParseRetryAfter(%q) = %v, outside [0, 24h]", v, d)
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n > 0 && n <= 86400 && d != time.Duration(n)*time.Second {
			t.Fatalf("ParseRetryAfter(%q) = %v, want %ds", v, d, n)
		}
	})
}
