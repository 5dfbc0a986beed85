package capture

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// proxy is the HTTP proxy Chromium is told to send every request through
// (--proxy-server, with loopback not bypassed). It makes each connection with
// the capture's checked dialer, so the browser reaches exactly the addresses
// the http engine may reach: Chromium never dials a site itself. Plain HTTP
// requests are forwarded; HTTPS and WebSockets arrive as CONNECT and are
// tunnelled byte for byte (TLS stays end to end between Chromium and the
// site).
//
// It listens on 127.0.0.1 on a random port. It adds no capability for
// other local processes: it reaches only what the address policy allows,
// which they can reach directly.
type proxy struct {
	dialer    *dialer
	transport *http.Transport
	ln        net.Listener
	srv       *http.Server
	// token marks the responses the proxy itself makes (a refusal, a
	// failed connection), so the recorder can tell them from a site's.
	token string

	mu      sync.Mutex
	tunnels map[net.Conn]struct{}
	errs    map[string]dialFailure // host:port → last dial failure
}

type dialFailure struct {
	err error
	at  time.Time
}

// proxyMarker is the header on responses the proxy makes itself; its value
// is "<token> <kind>", kind being "refused" or "failed".
const proxyMarker = "X-Ledgerctl-Proxy"

func startProxy(d *dialer) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		ln.Close()
		return nil, err
	}
	p := &proxy{
		dialer: d,
		ln:     ln,
		token:  hex.EncodeToString(tok),
		transport: &http.Transport{
			Proxy:       nil,
			DialContext: d.DialContext,
			// The browser asked for its encodings; pass the bytes through.
			DisableCompression:    true,
			MaxIdleConnsPerHost:   6,
			IdleConnTimeout:       30 * time.Second,
			ResponseHeaderTimeout: 0,
		},
		tunnels: map[net.Conn]struct{}{},
		errs:    map[string]dialFailure{},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 90 * time.Second}
	go p.srv.Serve(ln)
	return p, nil
}

// addr is host:port of the listener.
func (p *proxy) addr() string { return p.ln.Addr().String() }

// close stops the listener, open connections and tunnels.
func (p *proxy) close() error {
	err := p.srv.Close()
	p.mu.Lock()
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	p.transport.CloseIdleConnections()
	return err
}

// lastFailure returns why the proxy last failed to connect to hostport
// within the past minute, or nil.
func (p *proxy) lastFailure(hostport string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, ok := p.errs[hostport]
	if !ok || time.Since(f.at) > time.Minute {
		return nil
	}
	return f.err
}

func (p *proxy) noteFailure(hostport string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.errs) > 1000 {
		for k, f := range p.errs {
			if time.Since(f.at) > time.Minute {
				delete(p.errs, k)
			}
		}
	}
	p.errs[hostport] = dialFailure{err: err, at: time.Now()}
}

// forget drops hostport's failure once a connection to it succeeded.
func (p *proxy) forget(hostport string) {
	p.mu.Lock()
	delete(p.errs, hostport)
	p.mu.Unlock()
}

// isOwn reports whether h marks a response the proxy made, and its kind.
func (p *proxy) isOwn(h http.Header) (kind string, ok bool) {
	v := h.Get(proxyMarker)
	tok, kind, found := strings.Cut(v, " ")
	if !found || tok != p.token {
		return "", false
	}
	return kind, true
}

// hopHeaders are the connection-level headers a proxy does not forward.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

func dropHopHeaders(h http.Header) {
	for _, f := range h.Values("Connection") {
		for _, name := range strings.Split(f, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "this proxy only forwards absolute http:// URLs and CONNECT", http.StatusBadRequest)
		return
	}
	p.forward(w, r)
}

func hostPort(host, defaultPort string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), defaultPort)
}

func (p *proxy) fail(w http.ResponseWriter, hostport string, err error) {
	p.noteFailure(hostport, err)
	kind, status := "failed", http.StatusBadGateway
	if errors.Is(err, ErrRefused) {
		kind, status = "refused", http.StatusForbidden
	}
	w.Header().Set(proxyMarker, p.token+" "+kind)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, err.Error())
}

func (p *proxy) forward(w http.ResponseWriter, r *http.Request) {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header = r.Header.Clone()
	dropHopHeaders(out.Header)
	if r.ContentLength == 0 {
		out.Body = nil
	}
	target := hostPort(r.URL.Host, "80")
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		p.fail(w, target, err)
		return
	}
	p.forget(target)
	defer resp.Body.Close()
	dropHopHeaders(resp.Header)
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			rc.Flush()
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) connect(w http.ResponseWriter, r *http.Request) {
	target := hostPort(r.Host, "443")
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	upstream, err := p.dialer.DialContext(ctx, "tcp", target)
	cancel()
	if err != nil {
		p.fail(w, target, err)
		return
	}
	p.forget(target)
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, rw, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	p.mu.Lock()
	p.tunnels[client], p.tunnels[upstream] = struct{}{}, struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.tunnels, client)
		delete(p.tunnels, upstream)
		p.mu.Unlock()
		client.Close()
		upstream.Close()
	}()
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		// Bytes the client sent right after CONNECT may sit in rw's buffer.
		io.Copy(upstream, rw.Reader)
		if tc, ok := upstream.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		io.Copy(client, upstream)
		if tc, ok := client.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	// One side is finished; give the other a moment to drain, not for ever.
	deadline := time.Now().Add(10 * time.Second)
	client.SetDeadline(deadline)
	upstream.SetDeadline(deadline)
	<-done
}
