package rules

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// URL is an absolute http(s) URL in the crawl's normal form.
//
// Normalisation follows the WHATWG URL serialisation for the http and https
// schemes and does nothing more: the fragment is dropped, scheme and host are
// lowercased, the default port (:80 for http, :443 for https) is removed, an
// empty path becomes "/", "." and ".." path segments are resolved, and
// characters that may not appear in a URL are percent-encoded. The query is
// never reordered; trailing slashes, "index.html", existing percent-escapes
// and the like are left alone, because taking the wrong page is worse than
// taking one twice.
//
// A URL is a comparable value: two URLs are == exactly when their Normalized
// forms are equal.
type URL struct {
	// Normalized is the serialised form, the crawl's identity of the page.
	Normalized string
	// Scheme is "http" or "https".
	Scheme string
	// Host is the host with a non-default port, like WHATWG url.host
	// ("example.com:8080", "[::1]:8080", "example.com").
	Host string
	// Hostname is the host without the port, like WHATWG url.hostname
	// (IPv6 addresses keep their brackets).
	Hostname string
	// Port is the non-default port, or "".
	Port string
	// Origin is scheme://host[:port].
	Origin string
}

// String returns the normalised form.
func (u URL) String() string { return u.Normalized }

// URLError says why a string is not an absolute http(s) URL.
type URLError struct {
	Input  string
	Reason string
}

func (e *URLError) Error() string {
	in := e.Input
	if len(in) > 200 {
		in = in[:200] + "…"
	}
	return fmt.Sprintf("%q is not an absolute http(s) URL: %s", in, e.Reason)
}

func urlErr(raw, format string, args ...any) error {
	return &URLError{Input: raw, Reason: fmt.Sprintf(format, args...)}
}

// ParseURL parses an absolute http or https URL and normalises it (see URL).
// Relative references, other schemes (mailto:, javascript:, tel:, data:,
// ftp:, …), the empty string and URLs without a host are rejected with an
// error saying why. The same parser is used for seeds, links and targets.
func ParseURL(raw string) (URL, error) {
	// WHATWG: strip leading and trailing C0 controls and spaces, remove every
	// tab and newline.
	s := strings.TrimFunc(raw, func(r rune) bool { return r <= 0x20 })
	if s == "" {
		return URL{}, urlErr(raw, "it is empty")
	}
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	}

	colon := schemeEnd(s)
	if colon < 0 {
		return URL{}, urlErr(raw, "it has no scheme (relative URLs are not accepted)")
	}
	scheme := strings.ToLower(s[:colon])
	if scheme != "http" && scheme != "https" {
		return URL{}, urlErr(raw, "the scheme %q is not http or https", scheme)
	}
	rest := strings.TrimLeft(s[colon+1:], `/\`)

	// The authority runs to the first /, \, ? or #.
	end := strings.IndexAny(rest, `/\?#`)
	if end < 0 {
		end = len(rest)
	}
	authority, rest := rest[:end], rest[end:]

	var userinfo string
	hasUserinfo := false
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		userinfo, authority, hasUserinfo = authority[:at], authority[at+1:], true
	}
	hostPart, portPart, err := splitHostPort(authority)
	if err != nil {
		return URL{}, urlErr(raw, "%s", err)
	}
	if hostPart == "" {
		if hasUserinfo {
			return URL{}, urlErr(raw, "it has credentials but no host")
		}
		return URL{}, urlErr(raw, "it has no host")
	}
	hostname, err := parseHost(hostPart)
	if err != nil {
		return URL{}, urlErr(raw, "%s", err)
	}
	port, err := parsePort(portPart, scheme)
	if err != nil {
		return URL{}, urlErr(raw, "%s", err)
	}

	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	pathPart, query, hasQuery := strings.Cut(rest, "?")
	pathPart = strings.ReplaceAll(pathPart, `\`, "/")

	u := URL{Scheme: scheme, Hostname: hostname, Port: port, Host: hostname}
	if port != "" {
		u.Host = hostname + ":" + port
	}
	u.Origin = scheme + "://" + u.Host

	var b strings.Builder
	b.Grow(len(raw) + 8)
	b.WriteString(scheme)
	b.WriteString("://")
	if hasUserinfo {
		user, pass, _ := strings.Cut(userinfo, ":")
		user, pass = percentEncode(user, inUserinfoSet), percentEncode(pass, inUserinfoSet)
		if user != "" || pass != "" {
			b.WriteString(user)
			if pass != "" {
				b.WriteByte(':')
				b.WriteString(pass)
			}
			b.WriteByte('@')
		}
	}
	b.WriteString(u.Host)
	b.WriteString(normalizePath(pathPart))
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(percentEncode(query, inQuerySet))
	}
	u.Normalized = b.String()
	return u, nil
}

// schemeEnd returns the index of the colon ending a URL scheme at the start
// of s, or -1 when s does not start with a scheme.
func schemeEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return i
		default:
			return -1
		}
	}
	return -1
}

func splitHostPort(a string) (host, port string, err error) {
	if strings.HasPrefix(a, "[") {
		j := strings.IndexByte(a, ']')
		if j < 0 {
			return "", "", fmt.Errorf("the IPv6 address has no closing ]")
		}
		host, after := a[:j+1], a[j+1:]
		switch {
		case after == "":
			return host, "", nil
		case after[0] == ':':
			return host, after[1:], nil
		default:
			return "", "", fmt.Errorf("unexpected %q after the IPv6 address", after)
		}
	}
	host, port, _ = strings.Cut(a, ":")
	return host, port, nil
}

func parsePort(p, scheme string) (string, error) {
	if p == "" {
		return "", nil
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return "", fmt.Errorf("the port %q is not a number", p)
		}
	}
	p = strings.TrimLeft(p, "0")
	if p == "" {
		p = "0"
	}
	if len(p) > 5 {
		return "", fmt.Errorf("the port %s is out of range", p)
	}
	n, _ := strconv.Atoi(p)
	if n > 65535 {
		return "", fmt.Errorf("the port %d is out of range", n)
	}
	if (scheme == "http" && n == 80) || (scheme == "https" && n == 443) {
		return "", nil
	}
	return strconv.Itoa(n), nil
}

// hostIDNA is WHATWG's "domain to ASCII" with beStrict=false: UTS #46
// non-transitional processing without the STD3 ASCII rules and without DNS
// length checks.
var hostIDNA = idna.New(
	idna.MapForLookup(),
	idna.StrictDomainName(false),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.CheckJoiners(true),
	idna.CheckHyphens(false),
	idna.VerifyDNSLength(false),
)

// parseHost turns the host of an http(s) URL into its serialised form: a
// lowercase ASCII domain, a dotted-decimal IPv4 address or a bracketed,
// compressed IPv6 address.
func parseHost(h string) (string, error) {
	if h == "" {
		return "", fmt.Errorf("it has no host")
	}
	if h[0] == '[' {
		if h[len(h)-1] != ']' {
			return "", fmt.Errorf("the IPv6 address has no closing ]")
		}
		in := h[1 : len(h)-1]
		if strings.ContainsRune(in, '%') {
			return "", fmt.Errorf("the IPv6 address %q has a zone", in)
		}
		addr, err := netip.ParseAddr(in)
		if err != nil || !addr.Is6() {
			return "", fmt.Errorf("the IPv6 address %q is not valid", in)
		}
		return "[" + formatIPv6(addr) + "]", nil
	}

	d := percentDecode(h)
	if !utf8.ValidString(d) {
		return "", fmt.Errorf("the host %q is not valid UTF-8", h)
	}
	var ascii string
	if isASCII(d) {
		ascii = strings.ToLower(d)
	} else {
		var err error
		ascii, err = hostIDNA.ToASCII(d)
		if err != nil {
			return "", fmt.Errorf("the host %q is not a valid internationalised domain name", h)
		}
	}
	if ascii == "" {
		return "", fmt.Errorf("it has no host")
	}
	for i := 0; i < len(ascii); i++ {
		if isForbiddenDomainByte(ascii[i]) {
			return "", fmt.Errorf("the host %q contains the character %q", h, ascii[i])
		}
	}
	if endsInNumber(ascii) {
		v4, ok := parseIPv4(ascii)
		if !ok {
			return "", fmt.Errorf("the host %q ends in a number but is not an IPv4 address", h)
		}
		return v4, nil
	}
	return ascii, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isForbiddenDomainByte reports WHATWG's forbidden domain code points (for
// ASCII; the host is ASCII by then).
func isForbiddenDomainByte(c byte) bool {
	if c <= 0x20 || c == 0x7f {
		return true
	}
	switch c {
	case '#', '%', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|':
		return true
	}
	return false
}

func percentDecode(s string) string {
	if !strings.ContainsRune(s, '%') {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// endsInNumber is WHATWG's "ends in a number checker".
func endsInNumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		for i := 2; i < len(last); i++ {
			if !isHex(last[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// parseIPv4 is WHATWG's IPv4 parser (decimal, 0x-hex and 0-octal parts, one
// to four of them); it returns the dotted-decimal serialisation.
func parseIPv4(s string) (string, bool) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return "", false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return "", false
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return "", false
		}
	}
	last := nums[len(nums)-1]
	if last >= uint64(1)<<(8*(5-len(nums))) {
		return "", false
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return fmt.Sprintf("%d.%d.%d.%d", byte(v>>24), byte(v>>16), byte(v>>8), byte(v)), true
}

func parseIPv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	radix := uint64(10)
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		radix, p = 16, p[2:]
	case len(p) >= 2 && p[0] == '0':
		radix, p = 8, p[1:]
	}
	var n uint64
	for i := 0; i < len(p); i++ {
		c := p[i]
		var d uint64
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= radix {
			return 0, false
		}
		n = n*radix + d
		if n > 1<<33 { // far beyond any valid part; stop before overflow
			return 0, false
		}
	}
	return n, true
}

// formatIPv6 is WHATWG's IPv6 serialiser: lowercase hex pieces without
// leading zeros, the first longest run of two or more zero pieces written
// as "::", never a dotted quad.
func formatIPv6(a netip.Addr) string {
	b := a.As16()
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	start, length := -1, 1
	for i := 0; i < 8; {
		if pieces[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > length {
			start, length = i, j-i
		}
		i = j
	}
	var sb strings.Builder
	for i := 0; i < 8; i++ {
		if i == start {
			sb.WriteString("::")
			i += length - 1
			continue
		}
		if i > 0 && i != start+length {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(pieces[i]), 16))
	}
	return sb.String()
}

// normalizePath resolves "." and ".." segments (including their %2e forms)
// and percent-encodes what may not appear in a path. p is "" or starts
// with "/".
func normalizePath(p string) string {
	if p == "" {
		return "/"
	}
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for i, seg := range segs {
		last := i == len(segs)-1
		switch {
		case isDoubleDot(seg):
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		case isSingleDot(seg):
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, percentEncode(seg, inPathSet))
		}
	}
	return "/" + strings.Join(out, "/")
}

func isSingleDot(s string) bool { return s == "." || strings.EqualFold(s, "%2e") }

func isDoubleDot(s string) bool {
	switch strings.ToLower(s) {
	case "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}

// The WHATWG percent-encode sets, less the C0 control set (controls, DEL and
// non-ASCII bytes) which percentEncode always encodes. '%' is never encoded.
func inQuerySet(c byte) bool { // special-query percent-encode set
	switch c {
	case ' ', '"', '#', '<', '>', '\'':
		return true
	}
	return false
}

func inPathSet(c byte) bool {
	switch c {
	case ' ', '"', '#', '<', '>', '?', '`', '{', '}':
		return true
	}
	return false
}

func inUserinfoSet(c byte) bool {
	if inPathSet(c) {
		return true
	}
	switch c {
	case '/', ':', ';', '=', '@', '[', '\\', ']', '^', '|':
		return true
	}
	return false
}

func percentEncode(s string, in func(byte) bool) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || in(c) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hexDigits = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || in(c) {
			b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
			continue
		}
		b = append(b, c)
	}
	return string(b)
}
