package identity

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

const testAudience = "capture-ledger"

// t0 is the fixed "now" of the tests.
var t0 = time.Unix(1_800_000_000, 0)

// fakeClock is an injectable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: t0} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// startIssuer runs a dev issuer on a loopback httptest server whose clock is
// clock.
func startIssuer(t testing.TB, clock *fakeClock) (*Issuer, *httptest.Server) {
	t.Helper()
	ln, err := ListenLoopback("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	iss, err := NewIssuer("http://"+ln.Addr().String(), testAudience)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	iss.now = clock.Now
	srv := httptest.NewUnstartedServer(iss.Handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return iss, srv
}

// logBuffer captures a resolver's log output as JSON lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Reset()
}

// lines returns the decoded log records.
func (l *logBuffer) lines(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace([]byte(l.String())), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func bearerRequest(token string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/me", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// signWith signs claims as a compact JWS with alg, key and (if non-empty) kid.
func signWith(t testing.TB, alg jwa.SignatureAlgorithm, key any, kid string, claims any) string {
	t.Helper()
	hdr := jws.NewHeaders()
	if kid != "" {
		if err := hdr.Set(jws.KeyIDKey, kid); err != nil {
			t.Fatal(err)
		}
	}
	payload, ok := claims.([]byte)
	if !ok {
		payload = mustJSON(t, claims)
	}
	tok, err := jws.Sign(payload, jws.WithKey(alg, key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(tok)
}

// handBuilt assembles header.payload.signature from raw parts.
func handBuilt(t testing.TB, header any, claims any, sig []byte) string {
	t.Helper()
	return b64(mustJSON(t, header)) + "." + b64(mustJSON(t, claims)) + "." + b64(sig)
}

var (
	keysOnce sync.Once
	rsaKeys  []*rsa.PrivateKey
	ecKey    *ecdsa.PrivateKey
)

// testKeys returns three RSA keys and one P-256 key, generated once.
func testKeys(t testing.TB) ([]*rsa.PrivateKey, *ecdsa.PrivateKey) {
	t.Helper()
	keysOnce.Do(func() {
		for range 3 {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			rsaKeys = append(rsaKeys, k)
		}
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		ecKey = k
	})
	return rsaKeys, ecKey
}

// jwksServer is an issuer whose JWKS can be changed, counted and broken.
type jwksServer struct {
	srv     *httptest.Server
	fetches atomic.Int32
	mu      sync.Mutex
	doc     []byte
	status  int
	delay   time.Duration
}

func newJWKSServer(t testing.TB) *jwksServer {
	t.Helper()
	s := &jwksServer{status: http.StatusOK}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != JWKSPath {
			http.NotFound(w, r)
			return
		}
		s.fetches.Add(1)
		s.mu.Lock()
		doc, status, delay := s.doc, s.status, s.delay
		s.mu.Unlock()
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(doc)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// publish serves the public halves of keys (kid → key).
func (s *jwksServer) publish(t testing.TB, keys map[string]any, extra ...map[string]any) {
	t.Helper()
	var list []any
	for kid, k := range keys {
		j, err := jwk.PublicKeyOf(k)
		if err != nil {
			t.Fatal(err)
		}
		if kid != "" {
			if err := j.Set(jwk.KeyIDKey, kid); err != nil {
				t.Fatal(err)
			}
		}
		list = append(list, j)
	}
	for _, e := range extra {
		list = append(list, e)
	}
	s.set(mustJSON(t, map[string]any{"keys": list}), http.StatusOK)
}

func (s *jwksServer) setDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

func (s *jwksServer) set(doc []byte, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.doc, s.status = doc, status
}

// validClaims are claims the resolver accepts for an issuer at t0.
func validClaims(issuer string) map[string]any {
	return map[string]any{
		"sub":           "alice",
		"organizations": []any{"acme", "contoso"},
		"iss":           issuer,
		"aud":           testAudience,
		"iat":           t0.Unix(),
		"exp":           t0.Add(time.Hour).Unix(),
	}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// jsonNull is a claim value that marshals as null (nil in with removes).
var jsonNull = json.RawMessage("null")

func b64dec(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
