package visible

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A resume token is the position where a scan stopped — which may be a
// candidate the caller may not see — sealed with AES-GCM under a key kept in
// the database (docs/security.md). It reveals nothing of the position,
// cannot be edited or forged, and opens only for the caller it was handed
// to: the caller's subject and organizations (and the scan's scope, such as
// a search's query) are the GCM additional data, so anyone else's token, or
// the same person's under other organizations, fails like a tampered one.
//
//	token = Prefix + base64url( nonce[12] || AES-GCM(position[Size]) )
//
// Each Kind of token has its own purpose, from which its own key is derived
// from the stored key, so a token of one kind never opens as another's.

// Kind is one kind of resume token: its purpose (the key derivation and the
// additional data start with it), its prefix and the size of the position
// it carries.
type Kind struct {
	Purpose string
	Prefix  string
	Size    int
}

const (
	nonceLen = 12
	tagLen   = 16
)

// ErrBadToken is a token this caller cannot use: malformed, tampered with,
// handed to someone else, for another scope, or sealed under another key.
var ErrBadToken = errors.New("is not a token this server handed to you")

// TokenLen is the length of every token of the kind (base64, no padding).
func (k Kind) TokenLen() int {
	return len(k.Prefix) + base64.RawURLEncoding.EncodedLen(nonceLen+k.Size+tagLen)
}

// Is says whether raw is meant as a token of this kind (it carries the
// prefix).
func (k Kind) Is(raw string) bool { return strings.HasPrefix(raw, k.Prefix) }

// Check checks a token's shape without any key (prefix, length and
// alphabet), so a malformed one is refused before the caller is identified.
func (k Kind) Check(raw string) error {
	_, err := k.decode(raw)
	return err
}

func (k Kind) decode(raw string) ([]byte, error) {
	if !k.Is(raw) || len(raw) != k.TokenLen() {
		return nil, ErrBadToken
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(raw[len(k.Prefix):])
	if err != nil || len(b) != nonceLen+k.Size+tagLen {
		return nil, ErrBadToken
	}
	return b, nil
}

// Seal seals positions of one Kind into tokens and opens them, under one
// key.
type Seal struct {
	kind Kind
	aead cipher.AEAD
}

// NewSeal derives the kind's own key from key (at least 32 bytes) and
// readies AES-GCM with it.
func NewSeal(key []byte, k Kind) (*Seal, error) {
	if len(key) < 32 {
		return nil, fmt.Errorf("cursor key: %d bytes, want at least 32", len(key))
	}
	if k.Size <= 0 || k.Prefix == "" || k.Purpose == "" {
		return nil, fmt.Errorf("cursor kind %+v: purpose, prefix and size are required", k)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(k.Purpose))
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Seal{kind: k, aead: aead}, nil
}

// Seal returns the token of position (exactly Kind.Size bytes) for this
// caller and scope. Every call draws a fresh nonce, so two tokens of one
// position differ.
func (s *Seal) Seal(subject string, orgs []string, scope string, position []byte) (string, error) {
	if len(position) != s.kind.Size {
		return "", fmt.Errorf("seal cursor: %d bytes, want %d", len(position), s.kind.Size)
	}
	out := make([]byte, nonceLen, nonceLen+s.kind.Size+tagLen)
	if _, err := rand.Read(out); err != nil {
		return "", err
	}
	out = s.aead.Seal(out, out[:nonceLen], position, s.aad(subject, orgs, scope))
	return s.kind.Prefix + base64.RawURLEncoding.EncodeToString(out), nil
}

// Open reads back the position of a token Seal made for this caller and
// scope; anything else is ErrBadToken.
func (s *Seal) Open(subject string, orgs []string, scope string, token string) ([]byte, error) {
	b, err := s.kind.decode(token)
	if err != nil {
		return nil, err
	}
	plain, err := s.aead.Open(nil, b[:nonceLen], b[nonceLen:], s.aad(subject, orgs, scope))
	if err != nil || len(plain) != s.kind.Size {
		return nil, ErrBadToken
	}
	return plain, nil
}

// aad binds a token to its caller and scope: the purpose, the subject, the
// set of organizations (order and repeats do not matter) and the scope when
// there is one, each length-prefixed so no two callers share an encoding.
func (s *Seal) aad(subject string, orgs []string, scope string) []byte {
	set := slices.Clone(orgs)
	slices.Sort(set)
	set = slices.Compact(set)
	out := []byte(s.kind.Purpose)
	out = binary.AppendUvarint(out, uint64(len(subject)))
	out = append(out, subject...)
	out = binary.AppendUvarint(out, uint64(len(set)))
	for _, o := range set {
		out = binary.AppendUvarint(out, uint64(len(o)))
		out = append(out, o...)
	}
	if scope != "" {
		out = binary.AppendUvarint(out, uint64(len(scope)))
		out = append(out, scope...)
	}
	return out
}
