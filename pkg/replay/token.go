// Package replay lets a web archive viewer read archives on behalf of one
// person for a while, on an origin of its own. Each replay session (one
// archive, a crawl's archives or a chosen set, for one person) gets a
// random label, and so its own origin <label>.<replay domain>: archived
// pages, which may carry hostile script, run there and nowhere else. The
// package mints tokens bound to the label, what they open, a subject, the
// subject's organizations and an expiry (HMAC-SHA256 under a server key),
// and, for every read made with one, checks the token and asks OpenFGA
// again whether that person may still view that archive. The viewer never
// holds a presigned S3 URL, so revoking access stops the next read.
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

// MaxSet is the most archives a chosen-set collection holds (its ids are
// in its token).
const MaxSet = 50

// ErrInvalid is every way a token can fail: malformed, signed with another
// key, altered, expired, or for another archive, session or origin.
// Callers answer all of them alike (404), so the reason is not part of the
// error's identity; it is in its text for tests and debug logs, never the
// token itself.
var ErrInvalid = errors.New("invalid replay token")

// Claims is what a token asserts: who (a subject and the organizations it
// had when the token was minted), until when, on which replay origin (the
// session's label), and what it opens — exactly one of an archive (a read
// token: the viewer's range reads), a crawl's archives or a chosen set of
// archives (a collection token: the collection's listing, which hands out
// a read token per archive of the same session).
type Claims struct {
	// Label is the replay session's origin label: the token works only on
	// <label>.<replay domain>.
	Label string
	// ArchiveID is the archive a read token reads.
	ArchiveID string
	// CrawlID is the crawl a collection token replays.
	CrawlID string
	// ArchiveIDs are the archives a collection token of a chosen set
	// replays (at most MaxSet).
	ArchiveIDs    []string
	Subject       string
	Organizations []string
	Expires       time.Time // second precision
	// Download marks a token for the API's download routes (a download
	// link): it reads its archive, or exports its crawl, there and nowhere
	// else, as a replay session's tokens read only on their session's
	// origin.
	Download bool
}

// Collection says whether c opens a collection (a crawl or a set) in a
// replay session rather than reads one archive. A crawl's download token
// opens none: it is read on the API's download route only.
func (c Claims) Collection() bool { return c.ArchiveID == "" && !c.Download }

// body is the token's signed JSON. Short keys keep URLs short.
type body struct {
	Label   string   `json:"l"`
	Archive string   `json:"a,omitempty"`
	Crawl   string   `json:"c,omitempty"`
	Set     []string `json:"x,omitempty"`
	Subject string   `json:"s"`
	Orgs    []string `json:"o"`
	Expires int64    `json:"e"` // Unix seconds
	// Download is true for a download link's token (with Archive or
	// Crawl, never Set).
	Download bool `json:"d,omitempty"`
}

// macDomain separates replay tokens from anything else the same key might
// ever sign. Version 2 binds each token to a session's origin; a version 1
// token (read on the API's own origin) verifies no more.
const macDomain = "capture-ledger replay token v2\n"

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

// scopes counts what c opens: a valid token opens exactly one thing.
func scopes(archive, crawl string, set []string) int {
	n := 0
	if archive != "" {
		n++
	}
	if crawl != "" {
		n++
	}
	if len(set) > 0 {
		n++
	}
	return n
}

// Sign returns the token for c: base64url(JSON) "." base64url(HMAC).
func (s *Signer) Sign(c Claims) (string, error) {
	if !ValidLabel(c.Label) {
		return "", fmt.Errorf("replay token: label %q is not a session label", c.Label)
	}
	if scopes(c.ArchiveID, c.CrawlID, c.ArchiveIDs) != 1 {
		return "", errors.New("replay token: it must open exactly one archive, crawl or set")
	}
	if len(c.ArchiveIDs) > MaxSet {
		return "", fmt.Errorf("replay token: %d archives, at most %d", len(c.ArchiveIDs), MaxSet)
	}
	if c.Download && len(c.ArchiveIDs) > 0 {
		return "", errors.New("replay token: a download token reads one archive or one crawl, not a set")
	}
	orgs := c.Organizations
	if orgs == nil {
		orgs = []string{}
	}
	raw, err := json.Marshal(body{Label: c.Label, Archive: c.ArchiveID, Crawl: c.CrawlID, Set: c.ArchiveIDs, Subject: c.Subject, Orgs: orgs, Expires: c.Expires.Unix(), Download: c.Download})
	if err != nil {
		return "", err
	}
	payload := b64.EncodeToString(raw)
	tok := payload + "." + b64.EncodeToString(s.mac(payload))
	if len(tok) > MaxTokenBytes {
		return "", fmt.Errorf("replay token would be %d bytes (at most %d): too many organizations or archives", len(tok), MaxTokenBytes)
	}
	return tok, nil
}

// Verify checks that token was signed with this key (in constant time,
// before its content is read at all) and has not expired at now, and
// returns its claims. What it may open, and where, the caller checks
// (Claims.Label, ArchiveID…). Every failure is ErrInvalid.
func (s *Signer) Verify(token string, now time.Time) (Claims, error) {
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
	case b.Label == "" || b.Subject == "" || b.Orgs == nil || b.Expires == 0:
		return invalid("payload lacks a field")
	case !ValidLabel(b.Label):
		return invalid("label is not a session label")
	case scopes(b.Archive, b.Crawl, b.Set) != 1 || len(b.Set) > MaxSet:
		return invalid("opens no archive, or more than one kind")
	case b.Download && len(b.Set) > 0:
		return invalid("a download token of a set")
	case now.Unix() >= b.Expires:
		return invalid("expired")
	case b.Expires > now.Add(MaxTTL+time.Minute).Unix():
		return invalid("lives longer than the maximum")
	}
	return Claims{Label: b.Label, ArchiveID: b.Archive, CrawlID: b.Crawl, ArchiveIDs: b.Set, Subject: b.Subject, Organizations: b.Orgs, Expires: time.Unix(b.Expires, 0), Download: b.Download}, nil
}
