package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
)

const (
	// maxJWKSBytes bounds the JWKS document we are willing to read.
	maxJWKSBytes = 1 << 20
	// maxJWKSKeys bounds how many keys of one JWKS are kept.
	maxJWKSKeys = 100
	// minRSABits is the smallest RSA modulus accepted for RS256.
	minRSABits = 2048
)

var errJWKSUnavailable = errors.New("identity: JWKS unavailable")

// verifyKey is one usable public key of the issuer's JWKS.
type verifyKey struct {
	kid string
	alg string // "RS256" or "ES256"
	key any    // *rsa.PublicKey or *ecdsa.PublicKey
}

// jwksCache holds the issuer's keys. Keys are trusted for maxAge after a
// successful fetch; a token whose kid is unknown triggers a refetch, but never
// within cooldown of the previous attempt (successful or not). When the keys
// are older than maxAge and cannot be refreshed, nothing verifies: the cache
// fails closed. Concurrent callers needing a fetch share one request.
type jwksCache struct {
	url      string
	client   *http.Client
	now      func() time.Time
	maxAge   time.Duration
	cooldown time.Duration
	log      *slog.Logger

	mu        sync.Mutex
	keys      []verifyKey
	loaded    bool      // a fetch has succeeded at least once
	fetchedAt time.Time // time of the last successful fetch
	attempted bool
	attemptAt time.Time     // time of the last fetch attempt
	inflight  chan struct{} // closed when the running fetch ends
}

// lookup returns the keys that may verify a token with this kid and alg. An
// empty kid matches every key of the algorithm. An error means no key set is
// usable at all (never fetched successfully, or stale and not refreshable).
func (c *jwksCache) lookup(ctx context.Context, kid, alg string) ([]verifyKey, error) {
	c.mu.Lock()
	if keys, err := c.matchLocked(kid, alg); err == nil && len(keys) > 0 {
		c.mu.Unlock()
		return keys, nil
	}
	// Stale, never loaded, or the kid is unknown: refetch if allowed.
	if c.inflight == nil && c.attempted && c.now().Sub(c.attemptAt) < c.cooldown {
		keys, err := c.matchLocked(kid, alg)
		c.mu.Unlock()
		return keys, err
	}
	ch := c.inflight
	if ch == nil {
		ch = make(chan struct{})
		c.inflight = ch
		c.attempted = true
		c.attemptAt = c.now()
		c.mu.Unlock()
		c.refresh(ctx, ch)
	} else {
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.matchLocked(kid, alg)
}

// refresh fetches the JWKS and publishes the result, then closes ch.
func (c *jwksCache) refresh(ctx context.Context, ch chan struct{}) {
	// The fetch is shared with other waiters: do not let this caller's
	// cancellation abort it (the client's timeout still bounds it).
	keys, err := c.fetch(context.WithoutCancel(ctx))
	c.mu.Lock()
	if err != nil {
		c.log.WarnContext(ctx, "JWKS fetch failed", slog.String("url", redactURL(c.url)), slog.String("error", err.Error()))
	} else {
		c.keys = keys
		c.loaded = true
		c.fetchedAt = c.now()
	}
	c.inflight = nil
	close(ch)
	c.mu.Unlock()
}

// redactURL hides a password in u, should the issuer URL carry one.
func redactURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return parsed.Redacted()
}

func (c *jwksCache) matchLocked(kid, alg string) ([]verifyKey, error) {
	if !c.loaded || c.now().Sub(c.fetchedAt) >= c.maxAge {
		return nil, errJWKSUnavailable
	}
	var out []verifyKey
	for _, k := range c.keys {
		if k.alg != alg {
			continue
		}
		if kid != "" && k.kid != kid {
			continue
		}
		out = append(out, k)
	}
	return out, nil
}

func (c *jwksCache) fetch(ctx context.Context) ([]verifyKey, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxJWKSBytes))
		return nil, fmt.Errorf("unexpected status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxJWKSBytes {
		return nil, errors.New("JWKS document too large")
	}
	return parseJWKS(body)
}

// parseJWKS keeps the keys that can verify RS256 or ES256 signatures. Keys
// of other types, for encryption, for another algorithm, or that do not
// parse are skipped rather than failing the whole set.
func parseJWKS(body []byte) ([]verifyKey, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("JWKS is not a JSON key set: %w", err)
	}
	if doc.Keys == nil {
		return nil, errors.New(`JWKS has no "keys" array`)
	}
	var out []verifyKey
	for _, raw := range doc.Keys {
		if len(out) == maxJWKSKeys {
			break
		}
		if k, ok := usableKey(raw); ok {
			out = append(out, k)
		}
	}
	return out, nil
}

func usableKey(raw []byte) (verifyKey, bool) {
	key, err := jwk.ParseKey(raw)
	if err != nil {
		return verifyKey{}, false
	}
	if use, ok := key.KeyUsage(); ok && use != "sig" {
		return verifyKey{}, false
	}
	if ops, ok := key.KeyOps(); ok {
		verify := false
		for _, op := range ops {
			if op == jwk.KeyOpVerify {
				verify = true
			}
		}
		if !verify {
			return verifyKey{}, false
		}
	}
	if pub, err := key.PublicKey(); err == nil {
		key = pub
	} else {
		return verifyKey{}, false
	}
	kid, _ := key.KeyID()
	declared := ""
	if a, ok := key.Algorithm(); ok {
		declared = a.String()
	}
	var rawKey any
	if err := jwk.Export(key, &rawKey); err != nil {
		return verifyKey{}, false
	}
	switch pk := rawKey.(type) {
	case *rsa.PublicKey:
		if pk.N == nil || pk.N.BitLen() < minRSABits || (declared != "" && declared != "RS256") {
			return verifyKey{}, false
		}
		return verifyKey{kid: kid, alg: "RS256", key: pk}, true
	case *ecdsa.PublicKey:
		if pk.Curve != elliptic.P256() || (declared != "" && declared != "ES256") {
			return verifyKey{}, false
		}
		return verifyKey{kid: kid, alg: "ES256", key: pk}, true
	}
	return verifyKey{}, false
}
