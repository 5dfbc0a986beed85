package blob

import (
	"fmt"
	"testing"
)

// FuzzParseContentRange: S3's Content-Range decides which bytes a read
// says it returned. An accepted header is a span inside the object, and
// reads back as what was given.
func FuzzParseContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-0/1", "bytes 0-99/100", "bytes 5-4/10", "bytes 0-10/10", "bytes -1-2/3",
		"bytes 0-1/*", "bytes */100", "items 0-1/2", "bytes 0-9223372036854775806/9223372036854775807",
		"bytes 00-01/02", "bytes +1-2/3", "bytes 1-2/3/4", "", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		first, last, size, err := parseContentRange(s)
		if err != nil {
			return
		}
		if first < 0 || first > last || last >= size {
			t.Fatalf("parseContentRange(%q) = %d-%d/%d: not a span inside the object", s, first, last, size)
		}
		a, b, c, err := parseContentRange(fmt.Sprintf("bytes %d-%d/%d", first, last, size))
		if err != nil || a != first || b != last || c != size {
			t.Fatalf("parseContentRange(%q) = %d-%d/%d, which reads back as %d-%d/%d %v", s, first, last, size, a, b, c, err)
		}
	})
}
