package wacz

import (
	"net/url"
	"strings"
	"testing"
)

func TestSURT(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"https://www.Example.com/Path?b=2&a=1#frag", "com,example)/path?a=1&b=2"},
		{"http://example.com", "com,example)/"},
		{"http://example.com:80/", "com,example)/"},
		{"https://example.com:443/", "com,example)/"},
		{"https://example.com:8443/x", "com,example:8443)/x"},
		{"http://example.com:443/", "com,example:443)/"},
		{"http://www2.example.com/", "com,example)/"},
		{"http://www.www.example.com/", "com,example,www)/"},
		{"http://wwwx.example.com/", "com,example,wwwx)/"},
		// warcio.js strips "www." before lower-casing, so only the
		// lower-case spelling is stripped.
		{"http://WWW.example.com/", "com,example,www)/"},
		{"http://127.0.0.1:8080/a", "1,0,0,127:8080)/a"},
		{"http://[::1]:8080/", "[::1]:8080)/"},
		{"http://a.test/?", "test,a)/"},
		{"http://a.test/?x=1&x=0&b", "test,a)/?b&x=0&x=1"},
		{"http://a.test/a%2Fb", "test,a)/a%2fb"},
		{"http://a.test/a b?q=x y", "test,a)/a%20b?q=x%20y"},
		// Lower-cased first, percent-encoded after, as warcio.js does.
		{"http://a.test/日本", "test,a)/%E6%97%A5%E6%9C%AC"},
		{"urn:view:http://a.test/", "urn:view:http://a.test/"},
		{"urn:view:http://a.test/x y", "urn:view:http://a.test/x%20y"},
		{"http:opaque", "http:opaque"},
		{"http://%zz/", "http://%zz/"},
		{"", ""},
	} {
		if got := SURT(tc.in); got != tc.want {
			t.Errorf("SURT(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzSURT(f *testing.F) {
	for _, s := range []string{
		"https://www.Example.com/Path?b=2&a=1#frag", "http://a.test/?x=1&x=0&b", "http://[::1]:8080/",
		"urn:view:http://a/", "http://a.test/a b?q=x y", "https://www3.x.y.z:99/p/q?z&y&x", "http://\x00/", "https://a.test/\xff?\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		key := SURT(raw)
		if strings.ContainsAny(key, " \t\r\n") {
			t.Fatalf("SURT(%q) = %q holds a CDXJ separator", raw, key)
		}
		if SURT(raw) != key {
			t.Fatal("not deterministic")
		}
		if !strings.HasPrefix(raw, "http:") && !strings.HasPrefix(raw, "https:") {
			if key != keySafe(raw) {
				t.Errorf("non-http %q keyed %q", raw, key)
			}
			return
		}
		if u, err := url.Parse(raw); err != nil || u.Host == "" || u.Opaque != "" || strings.Contains(raw, "#") {
			return
		}
		// The fragment never matters.
		if got := SURT(raw + "#frag"); got != key {
			t.Errorf("SURT(%q#frag) = %q, without fragment %q", raw, got, key)
		}
		// Nor the order of query arguments.
		if base, query, ok := strings.Cut(raw, "?"); ok {
			args := strings.Split(query, "&")
			for i, j := 0, len(args)-1; i < j; i, j = i+1, j-1 {
				args[i], args[j] = args[j], args[i]
			}
			if got := SURT(base + "?" + strings.Join(args, "&")); got != key {
				t.Errorf("reordered query of %q gives %q, want %q", raw, got, key)
			}
		}
	})
}
