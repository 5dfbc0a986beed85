// Package replay lets a web archive viewer read one archive on behalf of one
// person for a while: it mints tokens bound to an archive, a subject, the
// subject's organizations and an expiry (HMAC-SHA256 under a server key),
// and, for every read made with one, checks the token and asks OpenFGA
// again whether that person may still view that archive. The viewer never
// holds a presigned S3 URL: reads go through the API, on its origin, so
// revoking access stops the next read.
package replay

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// DefaultTTL is how long a replay token lives when the caller asks for no
// other lifetime. The organizations in it come from the caller's identity
// when it was minted and are not stored anywhere else, so a person who
// leaves an organization keeps what it gave them until the token expires:
// it is short for that reason (revoking a share or an archive's ownership
// takes effect at the next read whatever the lifetime).
const DefaultTTL = time.Hour

// MaxTTL is the longest lifetime a caller may ask for.
const MaxTTL = 12 * time.Hour

// MinTTL is the shortest lifetime a caller may ask for.
const MinTTL = time.Minute

// MinKeyBytes is the shortest key tokens are signed with (the HMAC-SHA256
// output size: a shorter key would be the weakest part).
const MinKeyBytes = 32

// MaxTokenBytes bounds the token a read may present; longer is refused
// before any work.
const MaxTokenBytes = 4096

// ErrInvalid is every way a token can fail: malformed, signed with another
// key, altered, expired, or for another archive. Callers answer all of
// them alike (404), so the reason is not part of the error's identity; it
// is in its text for tests and debug logs, never the token itself.
var ErrInvalid = errors.New("invalid replay token")

// Claims is what a token asserts.
type Claims struct {
	ArchiveID     string
	Subject       string
	Organizations []string
	Expires       time.Time // second precision
}

// body is the token's signed JSON. Short keys keep URLs short.
type body struct {
	Archive string   `json:"a"`
	Subject string   `json:"s"`
	Orgs    []string `json:"o"`
	Expires int64    `json:"e"` // Unix seconds
}

// macDomain separates replay tokens from anything else the same key might
// ever sign.
const macDomain = "capture-ledger replay token v1\n"

var b64 = base64.RawURLEncoding.Strict()

// Signer signs and verifies tokens with one key.
type Signer struct{ key []byte }

// NewSigner returns a Signer for key, which must be at least MinKeyBytes.
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("replay key: %d bytes, need at least %d", len(key), MinKeyBytes)
	}
	return &Signer{key: bytes.Clone(key)}, nil
}

func (s *Signer) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(macDomain))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// Sign returns the token for c: base64url(JSON) "." base64url(HMAC).
func (s *Signer) Sign(c Claims) (string, error) {
	orgs := c.Organizations
	if orgs == nil {
		orgs = []string{}
	}
	raw, err := json.Marshal(body{Archive: c.ArchiveID, Subject: c.Subject, Orgs: orgs, Expires: c.Expires.Unix()})
	if err != nil {
		return "", err
	}
	payload := b64.EncodeToString(raw)
	tok := payload + "." + b64.EncodeToString(s.mac(payload))
	if len(tok) > MaxTokenBytes {
		return "", fmt.Errorf("replay token would be %d bytes (at most %d): too many organizations", len(tok), MaxTokenBytes)
	}
	return tok, nil
}

// Verify checks that token was signed with this key (in constant time,
// before its content is read at all), is for archiveID and has not
// expired at now, and returns its claims. Every failure is ErrInvalid.
func (s *Signer) Verify(token, archiveID string, now time.Time) (Claims, error) {
	invalid := func(why string) (Claims, error) { return Claims{}, fmt.Errorf("%w: %s", ErrInvalid, why) }
	if len(token) == 0 || len(token) > MaxTokenBytes {
		return invalid("empty or too long")
	}
	payload, sig, ok := strings.Cut(token, ".")
	if !ok || strings.Contains(sig, ".") {
		return invalid("not two parts")
	}
	got, err := b64.DecodeString(sig)
	if err != nil || len(got) != sha256.Size {
		return invalid("signature is not base64url of 32 bytes")
	}
	if !hmac.Equal(got, s.mac(payload)) {
		return invalid("signature does not match")
	}
	raw, err := b64.DecodeString(payload)
	if err != nil {
		return invalid("payload is not base64url")
	}
	// The key signed this payload, so it is ours; it is still read strictly,
	// in case a future version signs another shape with the same key.
	var b body
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil || dec.More() {
		return invalid("payload is not the token's JSON")
	}
	switch {
	case b.Archive == "" || b.Subject == "" || b.Orgs == nil || b.Expires == 0:
		return invalid("payload lacks a field")
	case b.Archive != archiveID:
		return invalid("for another archive")
	case now.Unix() >= b.Expires:
		return invalid("expired")
	case b.Expires > now.Add(MaxTTL+time.Minute).Unix():
		return invalid("lives longer than the maximum")
	}
	return Claims{ArchiveID: b.Archive, Subject: b.Subject, Organizations: b.Orgs, Expires: time.Unix(b.Expires, 0)}, nil
}
