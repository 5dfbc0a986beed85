package replay

import (
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// DefaultDomain is where replay origins live on one machine: browsers (and
// this project's capturer) resolve every *.localhost name to loopback
// (RFC 6761), so a session's origin needs no DNS.
const DefaultDomain = "replay.localhost"

// DomainVar is the setting naming the replay domain.
const DomainVar = "CAPTURE_LEDGER_REPLAY_DOMAIN"

// labelLen is a label's length: 26 base32 characters, 130 bits, of which
// 128 are random.
const labelLen = 26

var labelEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewLabel is a fresh session label: 128 random bits in lower-case base32,
// a valid DNS label nobody can guess.
func NewLabel() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return labelEncoding.EncodeToString(b[:]), nil
}

// ValidLabel says whether s has the shape NewLabel makes.
func ValidLabel(s string) bool {
	if len(s) != labelLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// Origins is where replay sessions are served: <label>.Domain, over Scheme,
// on Port ("" is the scheme's default).
type Origins struct {
	Scheme, Domain, Port string
}

// ParseDomain reads CAPTURE_LEDGER_REPLAY_DOMAIN: a domain (replay.localhost,
// replay.example.org), optionally with a scheme and a port
// (https://replay.example.org, http://replay.localhost:7070). Without a
// scheme it is http for localhost names and https otherwise; without a
// port it is apiPort for localhost names (serve answers replay origins on
// its own port) and the scheme's default otherwise. "" is DefaultDomain.
func ParseDomain(raw string, apiPort int) (Origins, error) {
	if raw == "" {
		raw = DefaultDomain
	}
	in := raw
	if !strings.Contains(raw, "://") {
		raw = "//" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return Origins{}, fmt.Errorf("%s=%q: want a domain such as replay.example.org, optionally with http(s):// and :port", DomainVar, in)
	}
	host := strings.ToLower(u.Hostname())
	if net.ParseIP(host) != nil || !strings.Contains(host, ".") && host != "localhost" {
		return Origins{}, fmt.Errorf("%s=%q: replay origins are names under a domain (a wildcard *.%s); an IP address or a bare name cannot have them", DomainVar, in, host)
	}
	for _, part := range strings.Split(host, ".") {
		if part == "" || len(part) > 63 || strings.Trim(part, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" || strings.HasPrefix(part, "-") || strings.HasSuffix(part, "-") {
			return Origins{}, fmt.Errorf("%s=%q: %q is not a DNS label", DomainVar, in, part)
		}
	}
	o := Origins{Scheme: u.Scheme, Domain: host, Port: u.Port()}
	local := IsLocalhost(host)
	switch {
	case o.Scheme == "" && local:
		o.Scheme = "http"
	case o.Scheme == "":
		o.Scheme = "https"
	case o.Scheme != "http" && o.Scheme != "https":
		return Origins{}, fmt.Errorf("%s=%q: the scheme must be http or https", DomainVar, in)
	}
	if o.Port == "" && local && apiPort > 0 {
		o.Port = strconv.Itoa(apiPort)
	}
	return o, nil
}

// IsLocalhost says whether host is localhost or a name under it.
func IsLocalhost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// Origin is the origin of the session labelled label.
func (o Origins) Origin(label string) string {
	host := label + "." + o.Domain
	if o.Port != "" && !(o.Scheme == "http" && o.Port == "80") && !(o.Scheme == "https" && o.Port == "443") {
		host += ":" + o.Port
	}
	return o.Scheme + "://" + host
}

// Match reads a request's Host: label is the session label when host is
// <label>.Domain (any port; ok), and under is true for any name at or
// under Domain, label or not — a host serve answers only as a replay
// origin.
func (o Origins) Match(host string) (label string, under, ok bool) {
	if o.Domain == "" {
		return "", false, false
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == o.Domain {
		return "", true, false
	}
	first, rest, found := strings.Cut(host, ".")
	if !strings.HasSuffix(host, "."+o.Domain) {
		return "", false, false
	}
	if found && rest == o.Domain && ValidLabel(first) {
		return first, true, true
	}
	return "", true, false
}

// SharesCookiesWith says whether host (a name or an address, with or
// without a port) is at or under the site of the replay origins: the
// registrable domain of a name under Domain (Public Suffix List, private
// section included; replay.localhost for the default). Cookies are kept per
// site, not per origin: a page on any session's origin may set a cookie for
// that whole site, which every other session's origin — and such a host —
// then receives; and Clear-Site-Data "cookies" from a session's origin
// clears that site's cookies, such a host's included.
func (o Origins) SharesCookiesWith(host string) bool {
	if o.Domain == "" {
		return false
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" || net.ParseIP(host) != nil {
		return false
	}
	// A label stands for any session's: only a domain that is itself a
	// public suffix (each session a site of its own) depends on it.
	site, err := publicsuffix.EffectiveTLDPlusOne(strings.Repeat("a", labelLen) + "." + o.Domain)
	if err != nil {
		return false
	}
	return host == site || strings.HasSuffix(host, "."+site)
}
