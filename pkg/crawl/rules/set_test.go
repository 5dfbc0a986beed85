package rules

import (
	"reflect"
	"testing"
)

func mustSet(t testing.TB, rules []Rule, seeds ...string) *Set {
	t.Helper()
	us := make([]URL, len(seeds))
	for i, s := range seeds {
		us[i] = mustURL(t, s)
	}
	s, err := NewSet(rules, us)
	if err != nil {
		t.Fatalf("NewSet: %v", err)
	}
	return s
}

func specs(t testing.TB, ss ...string) []Rule {
	t.Helper()
	out := make([]Rule, len(ss))
	for i, s := range ss {
		r, err := ParseSpec(s)
		if err != nil {
			t.Fatalf("ParseSpec(%q): %v", s, err)
		}
		out[i] = r
	}
	return out
}

// matchCase asks whether a one-rule list "follow:<pattern>" matches a URL.
type matchCase struct {
	name    string
	pattern string
	seeds   []string
	url     string
	match   bool
}

func TestMatch(t *testing.T) {
	www := []string{"https://www.example.com/"}
	tests := []matchCase{
		// any
		{"any matches anything", "any", www, "http://elsewhere.test:81/x", true},
		{"any matches with no seeds", "any", nil, "https://www.example.com/", true},

		// same-origin: scheme, host, port
		{"same-origin same page", SameOrigin, www, "https://www.example.com/a?b", true},
		{"same-origin other scheme", SameOrigin, www, "http://www.example.com/", false},
		{"same-origin other port", SameOrigin, www, "https://www.example.com:8443/", false},
		{"same-origin explicit default port", SameOrigin, www, "https://www.example.com:443/x", true},
		{"same-origin subdomain", SameOrigin, www, "https://a.www.example.com/", false},
		{"same-origin port seed", SameOrigin, []string{"http://localhost:7070/"}, "http://localhost:7070/x", true},
		{"same-origin port seed, other port", SameOrigin, []string{"http://localhost:7070/"}, "http://localhost:7071/x", false},
		{"same-origin ignores userinfo", SameOrigin, www, "https://u:p@www.example.com/", true},

		// same-host: host including port, scheme ignored
		// WHATWG url.host: default ports are not part of the host, so http and
		// https on their default ports share it, and :443 on http does not.
		{"same-host other scheme, default ports", SameHost, www, "http://www.example.com/", true},
		{"same-host explicit non-default port", SameHost, www, "http://www.example.com:443/", false},
		{"same-host other port", SameHost, []string{"http://example.com:8080/"}, "http://example.com:8081/", false},
		{"same-host same port other scheme", SameHost, []string{"http://example.com:8080/"}, "https://example.com:8080/", true},
		{"same-host subdomain", SameHost, www, "https://img.www.example.com/", false},
		{"same-host parent", SameHost, www, "https://example.com/", false},

		// same-site: registrable domain, scheme and port ignored
		{"same-site sibling", SameSite, www, "https://blog.example.com/", true},
		{"same-site apex", SameSite, www, "https://example.com/", true},
		{"same-site other scheme and port", SameSite, www, "http://shop.example.com:8080/", true},
		{"same-site other site", SameSite, www, "https://example.org/", false},
		{"same-site lookalike", SameSite, www, "https://badexample.com/", false},
		{"same-site co.uk", SameSite, []string{"https://www.example.co.uk/"}, "https://shop.example.co.uk/", true},
		{"same-site other co.uk", SameSite, []string{"https://www.example.co.uk/"}, "https://other.co.uk/", false},
		{"same-site github.io private section", SameSite, []string{"https://foo.github.io/"}, "https://bar.github.io/", false},
		{"same-site github.io same user", SameSite, []string{"https://foo.github.io/"}, "https://foo.github.io/project/", true},
		{"same-site github.io subdomain of user", SameSite, []string{"https://foo.github.io/"}, "https://x.foo.github.io/", true},
		{"same-site public suffix host is its own site", SameSite, []string{"https://github.io/"}, "https://foo.github.io/", false},
		{"same-site public suffix host, itself", SameSite, []string{"https://github.io/"}, "http://github.io:81/", true},
		{"same-site IP is its own site", SameSite, []string{"http://192.168.1.10/"}, "http://192.168.1.10:8080/", true},
		{"same-site IP neighbour", SameSite, []string{"http://192.168.1.10/"}, "http://192.168.1.11/", false},
		{"same-site IP not a domain", SameSite, []string{"http://10.0.0.1/"}, "http://0.1/", false},
		{"same-site IPv6", SameSite, []string{"http://[::1]/"}, "http://[::1]:8080/", true},
		{"same-site IPv6 other", SameSite, []string{"http://[::1]/"}, "http://[::2]/", false},
		{"same-site localhost", SameSite, []string{"http://localhost:7070/"}, "http://localhost:9999/", true},
		{"same-site localhost vs subdomain", SameSite, []string{"http://localhost/"}, "http://app.localhost/", false},
		{"same-site no seeds", SameSite, nil, "https://www.example.com/", false},

		// domain: label boundaries, ports ignored
		{"domain exact", "ads.example.com", www, "https://ads.example.com/x", true},
		{"domain subdomain", "ads.example.com", www, "https://a.b.ads.example.com/", true},
		{"domain label boundary", "ads.example.com", www, "https://badads.example.com/", false},
		{"domain not the parent", "ads.example.com", www, "https://example.com/", false},
		{"domain suffix inside a label", "example.com", www, "https://notexample.com/", false},
		{"domain port ignored", "ads.example.com", www, "http://ads.example.com:8080/", true},
		{"domain scheme ignored", "ads.example.com", www, "http://ads.example.com/", true},
		{"domain trailing dot host", "ads.example.com", www, "https://ads.example.com./", true},
		{"domain does not look at the path", "ads.example.com", www, "https://www.example.com/ads.example.com", false},
		{"domain IP exact", "192.168.0.1", www, "http://192.168.0.1:8080/", true},
		{"domain IP other", "192.168.0.1", www, "http://192.168.0.10/", false},
		{"domain localhost", "localhost", www, "http://localhost:7070/", true},
		{"domain needs no seeds", "example.com", nil, "https://www.example.com/", true},

		// URL prefix: plain string prefix of the normalised URL
		{"url prefix", "https://www.example.com/search", www, "https://www.example.com/search?q=x", true},
		{"url prefix no boundary", "https://www.example.com/search", www, "https://www.example.com/searching", true},
		{"url prefix with boundary", "https://www.example.com/search/", www, "https://www.example.com/searching", false},
		{"url prefix other scheme", "https://www.example.com/search", www, "http://www.example.com/search", false},
		{"url prefix pattern normalised", "HTTPS://WWW.EXAMPLE.COM:443/search", www, "https://www.example.com/search", true},
		{"url prefix candidate normalised", "https://www.example.com/search", www, "HTTPS://www.Example.com:443/search#top", true},
		{"url prefix host boundary", "https://example.com", www, "https://example.com.evil.test/", false},
		{"url prefix case-sensitive path", "https://www.example.com/Search", www, "https://www.example.com/search", false},
		{"url prefix port", "http://example.com:8080/", www, "http://example.com:8080/a", true},
		{"url prefix other port", "http://example.com:8080/", www, "http://example.com:8081/a", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustSet(t, []Rule{{Follow, tt.pattern}}, tt.seeds...)
			d := s.Decide(mustURL(t, tt.url))
			want := Decision{Action: Skip, Rule: 0}
			if tt.match {
				want = Decision{Action: Follow, Rule: 1}
			}
			if d != want {
				t.Errorf("follow:%s with seeds %v decides %s as %+v, want %+v", tt.pattern, tt.seeds, tt.url, d, want)
			}
		})
	}
}

func TestMultiSeedAnySeed(t *testing.T) {
	seeds := []string{"https://www.example.com/", "http://docs.example.org:8080/"}
	tests := []struct {
		pattern, url string
		match        bool
	}{
		{SameOrigin, "https://www.example.com/x", true},
		{SameOrigin, "http://docs.example.org:8080/y", true},
		{SameOrigin, "https://docs.example.org:8080/y", false},
		{SameHost, "http://www.example.com:443/", false},
		{SameHost, "https://docs.example.org:8080/", true},
		{SameSite, "https://blog.example.org/", true},
		{SameSite, "https://blog.example.com/", true},
		{SameSite, "https://example.net/", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" "+tt.url, func(t *testing.T) {
			s := mustSet(t, []Rule{{Follow, tt.pattern}}, seeds...)
			got := s.Decide(mustURL(t, tt.url)).Rule == 1
			if got != tt.match {
				t.Errorf("match = %v, want %v", got, tt.match)
			}
		})
	}
}

func TestDecideFirstMatchWins(t *testing.T) {
	s := mustSet(t, specs(t,
		"skip:ads.example.com",
		"skip:https://www.example.com/search",
		"follow:same-site",
		"capture:any",
	), "https://www.example.com/")
	tests := []struct {
		url  string
		want Decision
	}{
		{"https://ads.example.com/banner", Decision{Skip, 1}},
		{"https://www.example.com/search?q=1", Decision{Skip, 2}},
		{"https://www.example.com/about", Decision{Follow, 3}},
		{"https://badads.example.com/", Decision{Follow, 3}},
		{"https://other.test/", Decision{Capture, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			if got := s.Decide(mustURL(t, tt.url)); got != tt.want {
				t.Errorf("Decide = %+v, want %+v", got, tt.want)
			}
		})
	}
	t.Run("no match is rule 0 skip", func(t *testing.T) {
		s := mustSet(t, Default(), "https://www.example.com/")
		if got := s.Decide(mustURL(t, "https://elsewhere.test/")); got != (Decision{Skip, 0}) {
			t.Errorf("Decide = %+v, want rule 0 skip", got)
		}
	})
}

func TestNewSetRejectsInvalidPatterns(t *testing.T) {
	_, err := NewSet(specs(t, "follow:same-origin", "skip:Ads.Example.com", "capture:ftp://x/"), nil)
	ip, ok := err.(*InvalidPatternsError)
	if !ok {
		t.Fatalf("NewSet error = %v, want *InvalidPatternsError", err)
	}
	want := []InvalidPattern{{Rule: 2, Pattern: "Ads.Example.com"}, {Rule: 3, Pattern: "ftp://x/"}}
	for i := range ip.Rules {
		ip.Rules[i].Reason = ""
	}
	if !reflect.DeepEqual(ip.Rules, want) {
		t.Errorf("rules = %+v, want %+v", ip.Rules, want)
	}
}

func TestPageAction(t *testing.T) {
	s := mustSet(t, specs(t,
		"skip:https://www.example.com/private/",
		"capture:https://www.example.com/pdf/",
		"follow:same-origin",
		"capture:any",
	), "https://www.example.com/")
	tests := []struct {
		name, requested, final string
		want                   Decision
	}{
		{"no redirect", "https://www.example.com/a", "https://www.example.com/a", Decision{Follow, 3}},
		{"redirect within scope", "https://www.example.com/a", "https://www.example.com/b", Decision{Follow, 3}},
		{"redirect off-site cannot widen", "https://www.example.com/go", "https://elsewhere.test/", Decision{Capture, 4}},
		{"redirect into skip", "https://www.example.com/go", "https://www.example.com/private/x", Decision{Skip, 1}},
		{"redirect into scope from off-site", "https://elsewhere.test/", "https://www.example.com/", Decision{Capture, 4}},
		{"redirect to capture", "https://www.example.com/doc", "https://www.example.com/pdf/doc.pdf", Decision{Capture, 2}},
		{"tie keeps the requested decision", "https://elsewhere.test/", "https://www.example.com/pdf/x", Decision{Capture, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.PageAction(mustURL(t, tt.requested), mustURL(t, tt.final)); got != tt.want {
				t.Errorf("PageAction = %+v, want %+v", got, tt.want)
			}
		})
	}
	t.Run("no rule for the final URL", func(t *testing.T) {
		s := mustSet(t, Default(), "https://www.example.com/")
		got := s.PageAction(mustURL(t, "https://www.example.com/go"), mustURL(t, "https://elsewhere.test/"))
		if got != (Decision{Skip, 0}) {
			t.Errorf("PageAction = %+v, want rule 0 skip", got)
		}
	})
}

func strp(s string) *string { return &s }

func TestNofollow(t *testing.T) {
	tests := []struct {
		rel  *string
		drop bool
	}{
		{nil, false},
		{strp(""), false},
		{strp("nofollow"), true},
		{strp("NoFollow"), true},
		{strp("noopener nofollow noreferrer"), true},
		{strp("\tnoopener\nNOFOLLOW\f"), true},
		{strp("nofollowme"), false},
		{strp("no-follow"), false},
		{strp("external,nofollow"), false},
		{strp("noopener noreferrer"), false},
	}
	s := mustSet(t, []Rule{{Follow, Any}}, "https://www.example.com/")
	page := mustURL(t, "https://www.example.com/")
	for _, tt := range tests {
		name := "nil"
		if tt.rel != nil {
			name = *tt.rel
		}
		t.Run(name, func(t *testing.T) {
			got, ignored := s.FilterLinks(page, []Link{{Href: "https://www.example.com/x", Rel: tt.rel}})
			if dropped := len(got) == 0; dropped != tt.drop || ignored != len(got)^1 {
				t.Errorf("rel %q: dropped = %v (ignored %d), want %v", name, dropped, ignored, tt.drop)
			}
		})
	}
}

func TestFilterLinks(t *testing.T) {
	s := mustSet(t, specs(t, "skip:ads.example.com", "follow:same-origin"), "https://www.example.com/")
	page := mustURL(t, "https://www.example.com/dir/page.html")
	links := []Link{
		{Href: "https://www.example.com/b#one"},
		{Href: "https://ads.example.com/x"},
		{Href: "mailto:someone@example.com"},
		{Href: "javascript:void(0)"},
		{Href: "tel:+81312345678"},
		{Href: "https://www.example.com/a"},
		{Href: "https://www.example.com/b#two"},
		{Href: "HTTPS://WWW.EXAMPLE.COM:443/a"},
		{Href: "https://www.example.com/n", Rel: strp("nofollow")},
		{Href: "https://www.example.com/n"},
		{Href: "https://other.test/"},
		{Href: "next.html?p=2#x"},
		{Href: "/root"},
		{Href: "//cdn.example.com/lib.js"},
		{Href: "http://"},
		{Href: "https://www.example.com/?b=1&a=2"},
		{Href: "https://www.example.com/?a=2&b=1"},
	}
	got, ignored := s.FilterLinks(page, links)
	want := []struct {
		url string
		d   Decision
	}{
		{"https://www.example.com/b", Decision{Follow, 2}},
		{"https://ads.example.com/x", Decision{Skip, 1}},
		{"https://www.example.com/a", Decision{Follow, 2}},
		{"https://www.example.com/n", Decision{Follow, 2}},
		{"https://other.test/", Decision{Skip, 0}},
		{"https://www.example.com/dir/next.html?p=2", Decision{Follow, 2}},
		{"https://www.example.com/root", Decision{Follow, 2}},
		{"https://cdn.example.com/lib.js", Decision{Skip, 0}},
		{"https://www.example.com/?b=1&a=2", Decision{Follow, 2}},
		{"https://www.example.com/?a=2&b=1", Decision{Follow, 2}},
	}
	if len(got) != len(want) {
		for _, g := range got {
			t.Logf("got %s %+v", g.URL, g.Decision)
		}
		t.Fatalf("got %d links, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].URL.Normalized != w.url || got[i].Decision != w.d {
			t.Errorf("link %d = %s %+v, want %s %+v", i, got[i].URL, got[i].Decision, w.url, w.d)
		}
	}
	if ignored != 5 { // mailto, javascript, tel, nofollow, "http://"
		t.Errorf("ignored = %d, want 5", ignored)
	}
}
