package capture

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// The browser's proxy, driven by Go's client instead of Chromium: plain
// HTTP is forwarded, HTTPS is tunnelled with CONNECT, and both are held to
// the address policy.
func TestProxy(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "over TLS")
	}))
	t.Cleanup(tlsSrv.Close)

	client := func(p *proxy) *http.Client {
		tr := tlsSrv.Client().Transport.(*http.Transport).Clone()
		tr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: p.addr()})
		return &http.Client{Transport: tr}
	}

	t.Run("allowed", func(t *testing.T) {
		t.Parallel()
		p, err := startProxy(newDialer(localConfig().withDefaults()))
		if err != nil {
			t.Fatal(err)
		}
		defer p.close()
		c := client(p)
		resp, err := c.Get(s.URL + "/style.css")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != styleCSS {
			t.Errorf("plain HTTP through the proxy: %d %q", resp.StatusCode, body)
		}
		if _, own := p.isOwn(resp.Header); own {
			t.Errorf("a site's response is marked as the proxy's")
		}
		resp, err = c.Get(tlsSrv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "over TLS" {
			t.Errorf("HTTPS through the tunnel: %q", body)
		}
	})

	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		p, err := startProxy(newDialer(Defaults().withDefaults()))
		if err != nil {
			t.Fatal(err)
		}
		defer p.close()
		before := s.total()
		resp, err := client(p).Get(s.URL + "/style.css")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		kind, own := p.isOwn(resp.Header)
		if resp.StatusCode != http.StatusForbidden || !own || kind != "refused" || !strings.Contains(string(body), "loopback") {
			t.Errorf("refused plain HTTP: %d own=%v kind=%q %q", resp.StatusCode, own, kind, body)
		}
		if s.total() != before {
			t.Errorf("the site was reached")
		}
		u, _ := url.Parse(s.URL)
		if err := p.lastFailure(u.Host); !errors.Is(err, ErrRefused) {
			t.Errorf("lastFailure(%s) = %v", u.Host, err)
		}
		if _, err := client(p).Get(tlsSrv.URL + "/"); err == nil {
			t.Errorf("the tunnel to a loopback address was opened")
		}
		// A forged marker (wrong token) is not the proxy's.
		if _, own := p.isOwn(http.Header{proxyMarker: {"0123 refused"}}); own {
			t.Errorf("a forged marker was taken for the proxy's")
		}
	})
}
