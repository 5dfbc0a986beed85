package archive_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
)

// FuzzParsePrefix: `archives add --prefix` is typed by an operator and
// listed from S3. An accepted prefix is in the ledger's bucket, not empty,
// UTF-8 without U+0000, and has no empty, "." or ".." segment.
func FuzzParsePrefix(f *testing.F) {
	for _, s := range []string{"captures/", "s3://browserhive/captures/2026-11/", "s3://other/x/", "s3://browserhive",
		"s3://browserhive/", "", "/", "a//b/", "a/./b", "../x", "a\x00b/", "a\xffb/", strings.Repeat("a/", 600)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := archive.ParsePrefix(in, "browserhive")
		if err != nil {
			return
		}
		if p == "" || !utf8.ValidString(p) || strings.ContainsRune(p, 0) {
			t.Fatalf("ParsePrefix(%q) = %q: empty, not UTF-8 or holding U+0000", in, p)
		}
		if strings.HasPrefix(in, "s3://") && !strings.HasPrefix(in, "s3://browserhive/") {
			t.Fatalf("ParsePrefix(%q) = %q: outside the bucket", in, p)
		}
		for _, seg := range strings.Split(strings.TrimSuffix(p, "/"), "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("ParsePrefix(%q) = %q: segment %q", in, p, seg)
			}
		}
	})
}
