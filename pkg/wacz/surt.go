package wacz

import (
	"net/url"
	"sort"
	"strings"
)

// SURT returns the index key of a URL the way warcio.js's getSurt builds it,
// because that is the function ReplayWeb.page (wabac.js) uses to look keys
// up: a leading "www." (or "www2." …) is dropped, the URL is lower-cased, the
// host labels are reversed and joined with ",", a non-default port follows
// as ":port", then ")" and the path, then the query arguments sorted as
// strings (as pywb does). The fragment is dropped. A URL that is not http(s)
// or does not parse (e.g. "urn:view:…") is its own key.
//
// Unlike warcio.js, spaces are written as %20 so a key never contains the
// CDXJ field separator.
func SURT(raw string) string {
	if !strings.HasPrefix(raw, "http:") && !strings.HasPrefix(raw, "https:") {
		return keySafe(raw)
	}
	raw, _, _ = strings.Cut(raw, "#")
	s := stripWWW(raw)
	s = strings.ToLower(s)
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return keySafe(raw)
	}
	hostname := u.Hostname()
	if strings.Contains(hostname, ":") {
		hostname = "[" + hostname + "]" // IPv6, bracketed as URL.hostname is
	}
	host := strings.Split(hostname, ".")
	for i, j := 0, len(host)-1; i < j; i, j = i+1, j-1 {
		host[i], host[j] = host[j], host[i]
	}
	var b strings.Builder
	b.WriteString(strings.Join(host, ","))
	if p := u.Port(); p != "" && !(u.Scheme == "http" && p == "80") && !(u.Scheme == "https" && p == "443") {
		b.WriteString(":" + p)
	}
	b.WriteString(")")
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(path)
	if u.RawQuery != "" {
		args := strings.Split(u.RawQuery, "&")
		sort.Strings(args)
		b.WriteString("?" + strings.Join(args, "&"))
	}
	return keySafe(b.String())
}

// stripWWW drops "www" plus any digits and a dot right after the scheme,
// case-sensitively like warcio.js's /^(https?:\/\/)www\d*\./.
func stripWWW(raw string) string {
	for _, scheme := range []string{"http://", "https://"} {
		rest, ok := strings.CutPrefix(raw, scheme)
		if !ok {
			continue
		}
		after, ok := strings.CutPrefix(rest, "www")
		if !ok {
			return raw
		}
		after = strings.TrimLeft(after, "0123456789")
		if after, ok = strings.CutPrefix(after, "."); ok {
			return scheme + after
		}
		return raw
	}
	return raw
}

// keySafe keeps the CDXJ line splittable: no spaces, no line breaks.
func keySafe(s string) string {
	if !strings.ContainsAny(s, " \t\r\n") {
		return s
	}
	return strings.NewReplacer(" ", "%20", "\t", "%09", "\r", "%0D", "\n", "%0A").Replace(s)
}
