package capture

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrRefused is the cause of every connection the capturer would not make
// because of where it leads: an address that is not public (loopback,
// private, link-local, …) while private targets are not allowed.
var ErrRefused = errors.New("refused")

// RefusedError is a connection refused by the address policy: the host as
// named and the address it resolved to, and which kind of address that is.
// It matches ErrRefused.
type RefusedError struct {
	Host string     // as named in the URL ("" when only an address is known)
	Addr netip.Addr // the address that would have been dialed
	Kind string     // e.g. "loopback", "private (RFC 1918)"
}

// Error says what was refused and how to allow it.
func (e *RefusedError) Error() string {
	what := e.Addr.String()
	if e.Host != "" && e.Host != what {
		what = e.Host + " (" + what + ")"
	}
	return fmt.Sprintf("refused to connect to %s: a %s address; set %s=1 to capture private addresses", what, e.Kind, EnvAllowPrivate)
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// special are the ranges that are never a public web server, beyond what
// netip.Addr's predicates name. IPv4-mapped IPv6 addresses are unmapped
// before any check, and the IPv6 ranges that embed an IPv4 address (NAT64,
// 6to4) are judged by the address they embed.
var special = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network"`},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (TEST-NET-1)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (TEST-NET-2)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (TEST-NET-3)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (incl. broadcast)"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible (deprecated)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001::/32"), "Teredo"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (deprecated)"},
}

var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixToF4 = netip.MustParsePrefix("2002::/16")
)

// NonPublic says why addr is not a public unicast address ("" when it is).
// It is the rule every connection of a capture is held to unless private
// targets are allowed.
func NonPublic(addr netip.Addr) string {
	if !addr.IsValid() {
		return "invalid"
	}
	addr = addr.Unmap()
	switch {
	case addr.IsUnspecified():
		return "unspecified"
	case addr.IsLoopback():
		return "loopback"
	case addr.IsPrivate():
		if addr.Is4() {
			return "private (RFC 1918)"
		}
		return "unique local (fc00::/7)"
	case addr.IsLinkLocalUnicast():
		return "link-local"
	case addr.IsMulticast():
		return "multicast"
	}
	for _, s := range special {
		if s.prefix.Contains(addr) {
			return s.kind
		}
	}
	if addr.Is6() {
		b := addr.As16()
		var v4 netip.Addr
		switch {
		case nat64.Contains(addr):
			v4 = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case sixToF4.Contains(addr):
			v4 = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		}
		if v4.IsValid() {
			if kind := NonPublic(v4); kind != "" {
				return kind + " (embedded in " + addr.String() + ")"
			}
		}
	}
	return ""
}

// policy decides which addresses a capture may connect to.
type policy struct {
	allowPrivate bool
	allow        []netip.Prefix
}

// check returns a *RefusedError when addr may not be dialed.
func (p policy) check(host string, addr netip.Addr) error {
	if p.allowPrivate {
		return nil
	}
	addr = addr.Unmap()
	for _, pre := range p.allow {
		if pre.Contains(addr) {
			return nil
		}
	}
	if kind := NonPublic(addr); kind != "" {
		return &RefusedError{Host: host, Addr: addr, Kind: kind}
	}
	return nil
}

// dialer makes the connections of a capture. It resolves the name itself
// (through the configured resolver) and refuses addresses the policy
// forbids; the net.Dialer's Control hook checks the address once more as the
// socket connects, so what is checked is what is dialed, whatever resolved
// it (no window for DNS rebinding between check and connect).
type dialer struct {
	policy  policy
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	net     net.Dialer
}

func newDialer(cfg Config) *dialer {
	d := &dialer{
		policy:  policy{allowPrivate: cfg.AllowPrivate, allow: cfg.AllowPrefixes},
		resolve: cfg.Resolve,
	}
	if d.resolve == nil {
		d.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	d.net = net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("dial %s: cannot check address: %w", address, err)
			}
			return d.policy.check("", ap.Addr())
		},
	}
	return d
}

// LoopbackName returns the loopback addresses for "localhost" and every
// name under ".localhost" (RFC 6761 §6.3: they resolve to loopback without
// asking DNS, as Chromium does), and nil for any other name. They are
// still dialed only when private addresses are allowed.
func LoopbackName(host string) []netip.Addr {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h != "localhost" && !strings.HasSuffix(h, ".localhost") {
		return nil
	}
	return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}
}

// DialContext dials host:port on one of the host's permitted addresses. When
// every address is refused the error is the first *RefusedError.
func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		addrs = []netip.Addr{a}
	} else if lo := LoopbackName(host); lo != nil {
		addrs = lo
	} else {
		addrs, err = d.resolve(ctx, host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	var firstErr error
	for _, a := range addrs {
		if err := d.policy.check(host, a); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		conn, err := d.net.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		if firstErr == nil || errors.Is(firstErr, ErrRefused) {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// URLError is a URL the capturer will not try: not absolute, not http(s),
// or without a host.
type URLError struct {
	URL    string
	Reason string
}

// Error reads "capture: <url>: <reason>".
func (e *URLError) Error() string { return fmt.Sprintf("capture: %q: %s", e.URL, e.Reason) }

// CheckURL parses raw as a URL the capturer accepts: absolute, http or
// https, with a host, no user info, and no NUL or other control character.
// It does not resolve the host; every connection is checked when it is made.
func CheckURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, &URLError{URL: raw, Reason: "empty"}
	}
	for _, r := range raw {
		if r < 0x20 || r == 0x7f {
			return nil, &URLError{URL: raw, Reason: "contains a control character"}
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &URLError{URL: raw, Reason: "not a URL"}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, &URLError{URL: raw, Reason: "only http and https URLs can be captured"}
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, &URLError{URL: raw, Reason: "has no host"}
	}
	if u.User != nil {
		return nil, &URLError{URL: raw, Reason: "user info in URLs is not captured"}
	}
	if p := u.Port(); p != "" {
		if n, err := parsePort(p); err != nil || n == 0 {
			return nil, &URLError{URL: raw, Reason: "port out of range"}
		}
	}
	return u, nil
}

func parsePort(s string) (int, error) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("not a number")
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return 0, errors.New("too large")
		}
	}
	return n, nil
}
