package rules

import (
	"net/netip"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Site returns the URL's site: its registrable domain under the Public
// Suffix List including the private section ("www.example.com" →
// "example.com", "foo.github.io" → "foo.github.io"). An IP address,
// "localhost" and a host that is itself a public suffix are each a site of
// their own. A trailing dot on the host is ignored.
func (u URL) Site() string { return siteOf(u.Hostname) }

func siteOf(hostname string) string {
	if isIPHost(hostname) {
		return hostname
	}
	h := strings.TrimSuffix(hostname, ".")
	site, err := publicsuffix.EffectiveTLDPlusOne(h)
	if err != nil {
		// The host is a public suffix itself (including a single label
		// such as "localhost", under the list's default rule "*"), or has
		// an empty label.
		return h
	}
	return site
}

// isIPHost reports whether a serialised hostname is an IP address. A
// serialised domain never ends in a numeric label (ParseURL turns such hosts
// into IPv4 addresses), so parsing is enough.
func isIPHost(hostname string) bool {
	if strings.HasPrefix(hostname, "[") {
		return true
	}
	_, err := netip.ParseAddr(hostname)
	return err == nil
}

// isPublicSuffix reports whether the domain is itself a public suffix
// (e.g. "com", "co.uk", "github.io"), or a single unlisted label.
func isPublicSuffix(domain string) bool {
	ps, _ := publicsuffix.PublicSuffix(domain)
	return ps == domain
}
