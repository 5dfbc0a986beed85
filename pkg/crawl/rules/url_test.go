package rules

import (
	"errors"
	"strings"
	"testing"
)

func mustURL(t testing.TB, raw string) URL {
	t.Helper()
	u, err := ParseURL(raw)
	if err != nil {
		t.Fatalf("ParseURL(%q): %v", raw, err)
	}
	return u
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		name, in                           string
		normalized, host, hostname, origin string
	}{
		{"plain", "https://www.example.com/a", "https://www.example.com/a", "www.example.com", "www.example.com", "https://www.example.com"},
		{"fragment dropped", "https://example.com/a#section", "https://example.com/a", "example.com", "example.com", "https://example.com"},
		{"empty fragment dropped", "https://example.com/a#", "https://example.com/a", "example.com", "example.com", "https://example.com"},
		{"question mark inside fragment", "https://example.com/a#x?y", "https://example.com/a", "example.com", "example.com", "https://example.com"},
		{"scheme and host lowercased", "HTTPS://WWW.Example.COM/Path/A", "https://www.example.com/Path/A", "www.example.com", "www.example.com", "https://www.example.com"},
		{"empty path becomes slash", "https://example.com", "https://example.com/", "example.com", "example.com", "https://example.com"},
		{"empty path with query", "https://example.com?b=2&a=1", "https://example.com/?b=2&a=1", "example.com", "example.com", "https://example.com"},
		{"query order kept", "https://example.com/s?z=1&a=2&z=0", "https://example.com/s?z=1&a=2&z=0", "example.com", "example.com", "https://example.com"},
		{"empty query kept", "https://example.com/s?", "https://example.com/s?", "example.com", "example.com", "https://example.com"},
		{"http default port dropped", "http://example.com:80/", "http://example.com/", "example.com", "example.com", "http://example.com"},
		{"https default port dropped", "https://example.com:443/", "https://example.com/", "example.com", "example.com", "https://example.com"},
		{"443 on http kept", "http://example.com:443/", "http://example.com:443/", "example.com:443", "example.com", "http://example.com:443"},
		{"80 on https kept", "https://example.com:80/", "https://example.com:80/", "example.com:80", "example.com", "https://example.com:80"},
		{"non-default port kept", "http://example.com:8080/x", "http://example.com:8080/x", "example.com:8080", "example.com", "http://example.com:8080"},
		{"port leading zeros", "https://example.com:0443/", "https://example.com/", "example.com", "example.com", "https://example.com"},
		{"empty port", "https://example.com:/", "https://example.com/", "example.com", "example.com", "https://example.com"},
		{"trailing slash kept", "https://example.com/dir/", "https://example.com/dir/", "example.com", "example.com", "https://example.com"},
		{"no trailing slash added", "https://example.com/dir", "https://example.com/dir", "example.com", "example.com", "https://example.com"},
		{"index.html kept", "https://example.com/index.html", "https://example.com/index.html", "example.com", "example.com", "https://example.com"},
		{"percent escapes kept as written", "https://example.com/%7euser/%7E?q=%41", "https://example.com/%7euser/%7E?q=%41", "example.com", "example.com", "https://example.com"},
		{"path case kept", "https://example.com/A/B", "https://example.com/A/B", "example.com", "example.com", "https://example.com"},
		{"space encoded", "https://example.com/a b?c d", "https://example.com/a%20b?c%20d", "example.com", "example.com", "https://example.com"},
		{"non-ASCII path encoded", "https://example.com/日本", "https://example.com/%E6%97%A5%E6%9C%AC", "example.com", "example.com", "https://example.com"},
		{"apostrophe in query encoded", "https://example.com/it's?q='x'", "https://example.com/it's?q=%27x%27", "example.com", "example.com", "https://example.com"},
		{"dot segments resolved", "https://example.com/a/./b/../c", "https://example.com/a/c", "example.com", "example.com", "https://example.com"},
		{"encoded dot segments resolved", "https://example.com/a/%2E%2e/b/%2e", "https://example.com/b/", "example.com", "example.com", "https://example.com"},
		{"dot-dot above root", "https://example.com/../../x", "https://example.com/x", "example.com", "example.com", "https://example.com"},
		{"double slash kept", "https://example.com//a//b", "https://example.com//a//b", "example.com", "example.com", "https://example.com"},
		{"backslash in path", `https://example.com\a\b?x\y`, `https://example.com/a/b?x\y`, "example.com", "example.com", "https://example.com"},
		{"surrounding whitespace", "  https://example.com/a \n", "https://example.com/a", "example.com", "example.com", "https://example.com"},
		{"tab and newline removed", "https://exa\tmple.com/a\nb", "https://example.com/ab", "example.com", "example.com", "https://example.com"},
		{"extra slashes tolerated (WHATWG)", "https:///example.com/a", "https://example.com/a", "example.com", "example.com", "https://example.com"},
		{"missing slashes tolerated", "https:example.com/a", "https://example.com/a", "example.com", "example.com", "https://example.com"},
		{"userinfo kept, not in origin", "https://user:pw@example.com/", "https://user:pw@example.com/", "example.com", "example.com", "https://example.com"},
		{"empty userinfo dropped", "https://:@example.com/", "https://example.com/", "example.com", "example.com", "https://example.com"},
		{"IDN to punycode", "https://Bücher.example/", "https://xn--bcher-kva.example/", "xn--bcher-kva.example", "xn--bcher-kva.example", "https://xn--bcher-kva.example"},
		{"fullwidth host mapped", "https://ＥＸＡＭＰＬＥ.com/", "https://example.com/", "example.com", "example.com", "https://example.com"},
		{"fullwidth IPv4 mapped", "http://１２７.０.０.１/", "http://127.0.0.1/", "127.0.0.1", "127.0.0.1", "http://127.0.0.1"},
		{"percent-encoded host decoded", "https://ex%41mple.com/", "https://example.com/", "example.com", "example.com", "https://example.com"},
		{"IPv4", "http://192.168.0.1:8080/", "http://192.168.0.1:8080/", "192.168.0.1:8080", "192.168.0.1", "http://192.168.0.1:8080"},
		{"IPv4 shorthand", "http://127.1/", "http://127.0.0.1/", "127.0.0.1", "127.0.0.1", "http://127.0.0.1"},
		{"IPv4 hex", "http://0x7f.0.0.1/", "http://127.0.0.1/", "127.0.0.1", "127.0.0.1", "http://127.0.0.1"},
		{"IPv4 single number", "http://2130706433/", "http://127.0.0.1/", "127.0.0.1", "127.0.0.1", "http://127.0.0.1"},
		{"IPv6 compressed", "http://[0:0:0:0:0:0:0:1]:8080/", "http://[::1]:8080/", "[::1]:8080", "[::1]", "http://[::1]:8080"},
		{"IPv6 uppercase", "http://[2001:DB8::A]/", "http://[2001:db8::a]/", "[2001:db8::a]", "[2001:db8::a]", "http://[2001:db8::a]"},
		{"localhost", "http://localhost:7070/api", "http://localhost:7070/api", "localhost:7070", "localhost", "http://localhost:7070"},
		{"trailing dot host kept", "https://example.com./", "https://example.com./", "example.com.", "example.com.", "https://example.com."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := ParseURL(tt.in)
			if err != nil {
				t.Fatalf("ParseURL(%q): %v", tt.in, err)
			}
			if u.Normalized != tt.normalized || u.Host != tt.host || u.Hostname != tt.hostname || u.Origin != tt.origin {
				t.Errorf("ParseURL(%q) = {%q host %q hostname %q origin %q}, want {%q host %q hostname %q origin %q}",
					tt.in, u.Normalized, u.Host, u.Hostname, u.Origin, tt.normalized, tt.host, tt.hostname, tt.origin)
			}
			if u.String() != u.Normalized {
				t.Errorf("String() = %q, want %q", u.String(), u.Normalized)
			}
			again, err := ParseURL(u.Normalized)
			if err != nil || again != u {
				t.Errorf("re-parsing %q gave %+v, %v; want %+v", u.Normalized, again, err, u)
			}
		})
	}
}

func TestParseURLRejects(t *testing.T) {
	tests := []struct{ name, in, reason string }{
		{"empty", "", "empty"},
		{"only spaces", "   ", "empty"},
		{"relative path", "/about", "no scheme"},
		{"relative file", "about.html", "no scheme"},
		{"scheme-relative", "//example.com/", "no scheme"},
		{"mailto", "mailto:someone@example.com", `scheme "mailto"`},
		{"javascript", "javascript:alert(1)", `scheme "javascript"`},
		{"tel", "tel:+81312345678", `scheme "tel"`},
		{"data", "data:text/plain,hi", `scheme "data"`},
		{"ftp", "ftp://example.com/", `scheme "ftp"`},
		{"missing host before query", "https://?q=1", "no host"},
		{"only slashes", "https:///", "no host"},
		{"scheme only", "https://", "no host"},
		{"credentials without host", "https://user@/", "no host"},
		{"bad port", "https://example.com:http/", "port"},
		{"port too large", "https://example.com:65536/", "out of range"},
		{"two colons", "https://example.com:1:2/", "port"},
		{"space in host", "https://exa mple.com/", "character"},
		{"bad IPv4", "http://1.2.3.256/", "IPv4"},
		{"too many IPv4 parts", "http://1.2.3.4.5/", "IPv4"},
		{"numeric last label", "http://example.123/", "IPv4"},
		{"unclosed IPv6", "http://[::1/", "closing"},
		{"IPv4 in brackets", "http://[1.2.3.4]/", "IPv6"},
		{"IPv6 zone", "http://[fe80::1%25eth0]/", "zone"},
		{"garbage after IPv6", "http://[::1]x/", "after the IPv6"},
		{"percent in host", "http://exa%zzmple.com/", "character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := ParseURL(tt.in)
			if err == nil {
				t.Fatalf("ParseURL(%q) = %q, want an error", tt.in, u.Normalized)
			}
			var ue *URLError
			if !errors.As(err, &ue) {
				t.Fatalf("error %T is not a *URLError", err)
			}
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q does not say %q", err, tt.reason)
			}
		})
	}
}

func TestSite(t *testing.T) {
	tests := []struct{ in, site string }{
		{"https://www.example.com/", "example.com"},
		{"https://example.com/", "example.com"},
		{"https://a.b.example.co.uk/", "example.co.uk"},
		{"https://foo.github.io/", "foo.github.io"},
		{"https://bar.github.io/", "bar.github.io"},
		{"https://x.foo.github.io/", "foo.github.io"},
		{"https://github.io/", "github.io"},
		{"https://co.uk/", "co.uk"},
		{"http://192.168.1.10:8080/", "192.168.1.10"},
		{"http://[::1]/", "[::1]"},
		{"http://localhost:7070/", "localhost"},
		{"http://intranet/", "intranet"},
		{"https://www.example.com./", "example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := mustURL(t, tt.in).Site(); got != tt.site {
				t.Errorf("Site(%q) = %q, want %q", tt.in, got, tt.site)
			}
		})
	}
}
