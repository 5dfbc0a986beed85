package capture

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
)

func TestNonPublic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr string
		kind string // "" = public
	}{
		{"8.8.8.8", ""},
		{"93.184.216.34", ""},
		{"2606:4700::1111", ""},
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"10.1.2.3", "private (RFC 1918)"},
		{"172.16.0.1", "private (RFC 1918)"},
		{"172.31.255.255", "private (RFC 1918)"},
		{"172.32.0.1", ""},
		{"192.168.1.1", "private (RFC 1918)"},
		{"::ffff:192.168.1.1", "private (RFC 1918)"},
		{"fd00::1", "unique local (fc00::/7)"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"0.1.2.3", `"this network"`},
		{"100.64.0.1", "shared (CGNAT)"},
		{"100.127.255.255", "shared (CGNAT)"},
		{"100.128.0.1", ""},
		{"192.0.0.8", "IETF protocol assignment"},
		{"192.0.2.1", "documentation (TEST-NET-1)"},
		{"198.18.0.1", "benchmarking"},
		{"198.51.100.7", "documentation (TEST-NET-2)"},
		{"203.0.113.9", "documentation (TEST-NET-3)"},
		{"240.0.0.1", "reserved (incl. broadcast)"},
		{"255.255.255.255", "reserved (incl. broadcast)"},
		{"::127.0.0.1", "IPv4-compatible (deprecated)"},
		{"64:ff9b::7f00:1", "loopback (embedded in 64:ff9b::7f00:1)"},
		{"64:ff9b::808:808", ""},
		{"2002:c0a8:0101::1", "private (RFC 1918) (embedded in 2002:c0a8:101::1)"},
		{"2002:0808:0808::1", ""},
		{"2001:db8::1", "documentation"},
		{"2001:0:4136:e378::1", "Teredo"},
		{"fec0::1", "site-local (deprecated)"},
		{"100::1", "discard-only"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if got := NonPublic(netip.MustParseAddr(tt.addr)); got != tt.kind {
				t.Errorf("NonPublic(%s) = %q, want %q", tt.addr, got, tt.kind)
			}
		})
	}
}

func TestPolicy(t *testing.T) {
	t.Parallel()
	p := policy{allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}
	if err := p.check("x", netip.MustParseAddr("127.0.0.2")); err != nil {
		t.Errorf("allowed prefix refused: %v", err)
	}
	if err := p.check("x", netip.MustParseAddr("::ffff:127.0.0.2")); err != nil {
		t.Errorf("allowed prefix as IPv4-mapped refused: %v", err)
	}
	err := p.check("intranet.example", netip.MustParseAddr("127.0.0.1"))
	var re *RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ErrRefused) {
		t.Fatalf("check = %v, want a *RefusedError", err)
	}
	want := "refused to connect to intranet.example (127.0.0.1): a loopback address; set CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE=1 to capture private addresses"
	if err.Error() != want {
		t.Errorf("error = %q\nwant %q", err, want)
	}
	if err := (policy{allowPrivate: true}).check("", netip.MustParseAddr("10.0.0.1")); err != nil {
		t.Errorf("allowPrivate refused: %v", err)
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	good := []string{"http://example.com", "https://example.com/a?b=c#d", "http://127.0.0.1:8080/", "http://[::1]/", "https://日本語.jp/パス"}
	for _, u := range good {
		if _, err := CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q) = %v", u, err)
		}
	}
	bad := map[string]string{
		"":                          "empty",
		"example.com":               "only http and https",
		"ftp://example.com/":        "only http and https",
		"HTTP//example.com":         "only http and https",
		"http:///path":              "has no host",
		"http://:80/":               "has no host",
		"http://a\x00b/":            "control character",
		"http://a/\tb":              "control character",
		"http://u:p@example.com/":   "user info",
		"http://example.com:99999/": "port out of range",
		"http://example.com:0/":     "port out of range",
		"http://[::1/":              "not a URL",
	}
	for u, want := range bad {
		_, err := CheckURL(u)
		var ue *URLError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckURL(%q) = %v, want a *URLError saying %q", u, err, want)
		}
	}
}

// The dialer's Control hook refuses what the resolver hook's check did not
// see: an address dialed directly.
func TestDialerChecksTheDialedAddress(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	d := newDialer(Defaults())
	_, err = d.net.DialContext(context.Background(), "tcp", ln.Addr().String())
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("net dial through Control = %v, want refused", err)
	}
	_, err = d.DialContext(context.Background(), "tcp", ln.Addr().String())
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("DialContext = %v, want refused", err)
	}
	select {
	case <-accepted:
		t.Fatal("a refused dial reached the listener")
	default:
	}
}

// Names under .localhost reach loopback without DNS (RFC 6761), as in
// Chromium, and only when private addresses are allowed; a name that
// merely contains "localhost" is resolved as usual.
func TestLocalhostNamesResolveToLoopback(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	allow := Defaults()
	allow.AllowPrivate = true
	for _, name := range []string{"www.demo.localhost", "WWW.Demo.LOCALHOST.", "localhost"} {
		if _, err := newDialer(Defaults()).DialContext(context.Background(), "tcp", net.JoinHostPort(name, p)); !errors.Is(err, ErrRefused) {
			t.Errorf("%s without AllowPrivate: %v, want refused", name, err)
		}
		c, err := newDialer(allow).DialContext(context.Background(), "tcp", net.JoinHostPort(name, p))
		if err != nil {
			t.Errorf("%s with AllowPrivate: %v", name, err)
			continue
		}
		c.Close()
	}
	for _, name := range []string{"localhost.example", "notlocalhost", "localhost.evil.test"} {
		if LoopbackName(name) != nil {
			t.Errorf("%s taken for a loopback name", name)
		}
	}
}

// ssrfSetup is a private server on 127.0.0.1 that counts its requests and a
// "public" site on 127.0.0.2 (allowed by AllowPrefixes, as a public address
// would be), with names for both through the resolver hook: offline, no
// real name resolves to a chosen address (and *.localhost names are always
// loopback, in Chromium and in the dialer).
type ssrfSetup struct {
	private, public *site
}

func newSSRFSetup(t *testing.T) *ssrfSetup {
	return &ssrfSetup{private: newSite(t), public: newSiteOn(t, "127.0.0.2")}
}

// ssrfConfig refuses private addresses but 127.0.0.2, and resolves the
// test names.
func ssrfConfig() Config {
	c := Defaults()
	c.AllowPrefixes = []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}
	c.Resolve = resolverFor(map[string]string{
		"public.test": "127.0.0.2",
		"rebind.test": "127.0.0.1", // a public-looking name that resolves to loopback
	})
	return c
}

// ssrfAllowConfig is ssrfConfig with private addresses allowed.
func ssrfAllowConfig() Config {
	c := ssrfConfig()
	c.AllowPrivate = true
	return c
}

func port(t *testing.T, s *site) string {
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func TestSSRFRefusesPrivateTargets(t *testing.T) {
	t.Parallel()
	s := newSSRFSetup(t)
	pp := port(t, s.private)
	pub := "http://public.test:" + port(t, s.public)
	forEachEngine(t, "ssrf", ssrfConfig, func(t *testing.T, e Engine) {
		cases := []struct {
			name, url string
			publicHop bool // the first hop is public and answers a redirect
		}{
			{"loopback address", "http://127.0.0.1:" + pp + "/", false},
			{"localhost", "http://localhost:" + pp + "/", false},
			{"name resolving to loopback", "http://rebind.test:" + pp + "/", false},
			{"IPv4-mapped IPv6 literal", "http://[::ffff:127.0.0.1]:" + pp + "/", false},
			{"redirect to loopback", pub + "/goto?u=" + url.QueryEscape("http://127.0.0.1:"+pp+"/secret"), true},
			{"redirect to a name resolving to loopback", pub + "/goto?u=" + url.QueryEscape("http://rebind.test:"+pp+"/secret"), true},
		}
		for _, tt := range cases {
			t.Run(tt.name, func(t *testing.T) {
				before := s.private.total()
				res := mustCapture(t, e, tt.url)
				if res.Failure == nil || res.Failure.Kind != FailRefused {
					t.Fatalf("Failure = %+v, want refused; exchanges:\n%s", res.Failure, strings.Join(urlsOf(res), "\n"))
				}
				if !strings.Contains(res.Failure.Message, "loopback") || !strings.Contains(res.Failure.Message, EnvAllowPrivate) {
					t.Errorf("Message %q does not say why or how to allow it", res.Failure.Message)
				}
				if got := s.private.total() - before; got != 0 {
					t.Errorf("the private server got %d requests", got)
				}
				if tt.publicHop {
					if len(res.Capture.Exchanges) == 0 || res.Capture.Exchanges[0].Status != 302 {
						t.Errorf("the public redirect hop was not recorded:\n%s", strings.Join(urlsOf(res), "\n"))
					}
				}
				for _, x := range res.Capture.Exchanges {
					if strings.Contains(x.URL, ":"+pp+"/") {
						t.Errorf("recorded an exchange with the private server: %s", x.URL)
					}
				}
			})
		}
	})
	if got := s.private.total(); got != 0 {
		t.Errorf("the private server got %d requests in all", got)
	}
}

func TestSSRFRefusesPrivateSubresources(t *testing.T) {
	t.Parallel()
	s := newSSRFSetup(t)
	pp := port(t, s.private)
	pub := "http://public.test:" + port(t, s.public)
	forEachEngine(t, "ssrf", ssrfConfig, func(t *testing.T, e Engine) {
		for _, img := range []string{"http://127.0.0.1:" + pp + "/img/a.png", "https://127.0.0.1:" + pp + "/img/b.png"} {
			res := mustCapture(t, e, pub+"/embed?img="+url.QueryEscape(img))
			if res.Failure != nil {
				t.Fatalf("the public page failed: %v", res.Failure)
			}
			if !strings.Contains(res.Text, "Page with an image elsewhere") {
				t.Errorf("Text = %q", res.Text)
			}
			found := false
			for _, re := range res.ResourceErrors {
				if re.URL == img && re.Refused && strings.Contains(re.Err, "loopback") {
					found = true
				}
			}
			if !found || res.Stats.Refused != 1 {
				t.Errorf("%s is not a refused resource: %+v, stats %+v", img, res.ResourceErrors, res.Stats)
			}
			if _, ok := exchangeFor(res, img); ok {
				t.Errorf("recorded %s", img)
			}
		}
	})
	if got := s.private.total(); got != 0 {
		t.Errorf("the private server got %d requests", got)
	}
}

// The same captures succeed when private addresses are allowed: the
// refusals above are the policy's doing, not a broken setup.
func TestSSRFAllowPrivate(t *testing.T) {
	t.Parallel()
	s := newSSRFSetup(t)
	pp := port(t, s.private)
	forEachEngine(t, "ssrf-allow", ssrfAllowConfig, func(t *testing.T, e Engine) {
		before := s.private.count("/final")
		res := mustCapture(t, e, "http://rebind.test:"+pp+"/redirect")
		if res.Failure != nil || !strings.Contains(res.Text, finalText) {
			t.Fatalf("Failure %v Text %q", res.Failure, res.Text)
		}
		if s.private.count("/final") == before {
			t.Errorf("the private server was not reached")
		}
	})
}

// HTTPS goes through CONNECT in the browser's proxy: a refused tunnel never
// reaches the listener, an allowed one does (the TLS handshake then fails
// on the test's certificate, which is beside the point).
func TestSSRFHTTPS(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	accepted := 0
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted++
			mu.Unlock()
			c.Close()
		}
	}()
	accepts := func() int {
		mu.Lock()
		defer mu.Unlock()
		return accepted
	}
	target := "https://" + ln.Addr().String() + "/"
	t.Run("refused", func(t *testing.T) {
		forEachEngine(t, "ssrf", ssrfConfig, func(t *testing.T, e Engine) {
			res := mustCapture(t, e, target)
			if res.Failure == nil || res.Failure.Kind != FailRefused {
				t.Fatalf("Failure = %+v, want refused", res.Failure)
			}
		})
	})
	if n := accepts(); n != 0 {
		t.Fatalf("the listener accepted %d connections while refused", n)
	}
	t.Run("allowed", func(t *testing.T) {
		forEachEngine(t, "local", localConfig, func(t *testing.T, e Engine) {
			before := accepts()
			res := mustCapture(t, e, target)
			if res.Failure == nil || res.Failure.Kind == FailRefused {
				t.Fatalf("Failure = %+v, want a TLS failure", res.Failure)
			}
			if accepts() == before {
				t.Errorf("the tunnel did not reach the listener (%v)", res.Failure)
			}
		})
	})
}

// WebSockets from the page go through the proxy's checked dialer too.
func TestSSRFWebSocket(t *testing.T) {
	t.Parallel()
	chromiumOrSkip(t)
	s := newSSRFSetup(t)
	pp := port(t, s.private)
	page := "http://public.test:" + port(t, s.public) + "/ws-page?ws=" + url.QueryEscape("ws://127.0.0.1:"+pp+"/ws")
	t.Run("refused", func(t *testing.T) {
		res := mustCapture(t, sharedBrowser(t, "ssrf", ssrfConfig()), page)
		if res.Failure != nil || !strings.Contains(res.Text, "socket failed") {
			t.Fatalf("Failure %v Text %q", res.Failure, res.Text)
		}
		if n := s.private.count("/ws"); n != 0 {
			t.Errorf("the private WebSocket got %d requests", n)
		}
	})
	t.Run("allowed", func(t *testing.T) {
		res := mustCapture(t, sharedBrowser(t, "ssrf-allow", ssrfAllowConfig()), page)
		if res.Failure != nil || !strings.Contains(res.Text, "hello over a socket") {
			t.Fatalf("Failure %v Text %q", res.Failure, res.Text)
		}
	})
}
