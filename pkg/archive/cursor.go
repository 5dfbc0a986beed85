package archive

import (
	"context"
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
	"time"

	"github.com/google/uuid"
)

// A list's resume token is the position where its scan stopped — the
// (captured_at, id) of the last row examined, which may be a row the caller
// may not see — sealed with AES-GCM under a key kept in the database
// (docs/security.md). It reveals nothing of the position (not the id, not the
// timestamp), cannot be edited or forged, and opens only for the caller it
// was handed to: the caller's subject and organizations are the GCM
// additional data, so anyone else's token (or the same person's under other
// organizations) fails like a tampered one.
//
//	token = "c1." + base64url( nonce[12] || AES-GCM(seconds[8] || nanos[4] || id[16]) )

// CursorTokenPrefix starts every resume token; it is how a `before` value is
// told apart from a date-time.
const CursorTokenPrefix = "c1."

const (
	cursorPlainLen = 8 + 4 + 16
	cursorNonceLen = 12
	cursorTagLen   = 16
	cursorTokenLen = len(CursorTokenPrefix) + ((cursorNonceLen+cursorPlainLen+cursorTagLen)*8+5)/6 // 75 base64 characters, no padding
	cursorPurpose  = "capture-ledger archive list cursor v1"
)

// ErrBadCursor is a resume token this caller cannot use: malformed,
// tampered with, handed to someone else, or sealed under another key.
var ErrBadCursor = errors.New("is not a cursor this server handed to you (changed, cut short, or another caller's): start again without it")

// IsCursorToken says whether raw is meant as a resume token (rather than a
// date-time): it carries the token prefix.
func IsCursorToken(raw string) bool { return strings.HasPrefix(raw, CursorTokenPrefix) }

// CheckCursorToken checks a token's shape without any key (length and
// alphabet), so a malformed one is refused before the caller is identified.
func CheckCursorToken(raw string) error {
	_, err := decodeCursorToken(raw)
	return err
}

func decodeCursorToken(raw string) ([]byte, error) {
	if !IsCursorToken(raw) || len(raw) != cursorTokenLen {
		return nil, ErrBadCursor
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(raw[len(CursorTokenPrefix):])
	if err != nil || len(b) != cursorNonceLen+cursorPlainLen+cursorTagLen {
		return nil, ErrBadCursor
	}
	return b, nil
}

// SealCursor turns a position into the caller's resume token, under the
// key the Catalog keeps.
func (a *Access) SealCursor(ctx context.Context, subject string, orgs []string, c *Cursor) (string, error) {
	s, err := a.cursorSeal(ctx)
	if err != nil {
		return "", err
	}
	return s.Seal(subject, orgs, c)
}

// OpenCursor reads back a token SealCursor handed to this caller. Any token
// that is not one is ErrBadCursor, whatever is wrong with it.
func (a *Access) OpenCursor(ctx context.Context, subject string, orgs []string, token string) (*Cursor, error) {
	if _, err := decodeCursorToken(token); err != nil {
		return nil, err // no key needed to refuse a malformed token
	}
	s, err := a.cursorSeal(ctx)
	if err != nil {
		return nil, err
	}
	return s.Open(subject, orgs, token)
}

func (a *Access) cursorSeal(ctx context.Context) (*CursorSeal, error) {
	key, err := a.Catalog.ListCursorKey(ctx)
	if err != nil {
		return nil, err
	}
	return NewCursorSeal(key)
}

// CursorSeal seals positions into resume tokens and opens them, under one
// key.
type CursorSeal struct{ aead cipher.AEAD }

// NewCursorSeal derives this purpose's own key from key (so the stored key
// can seal other lists' cursors later without one token opening as
// another's) and readies AES-GCM with it.
func NewCursorSeal(key []byte) (*CursorSeal, error) {
	if len(key) < 32 {
		return nil, fmt.Errorf("list cursor key: %d bytes, want at least 32", len(key))
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(cursorPurpose))
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &CursorSeal{aead: aead}, nil
}

// Seal returns the token of position c for this caller. Every call draws a
// fresh nonce, so two tokens of one position differ.
func (s *CursorSeal) Seal(subject string, orgs []string, c *Cursor) (string, error) {
	id, err := uuid.Parse(c.ID)
	if err != nil {
		return "", fmt.Errorf("seal cursor: id %q: %w", c.ID, err)
	}
	plain := make([]byte, 0, cursorPlainLen)
	plain = binary.BigEndian.AppendUint64(plain, uint64(c.CapturedAt.Unix()))
	plain = binary.BigEndian.AppendUint32(plain, uint32(c.CapturedAt.Nanosecond()))
	plain = append(plain, id[:]...)
	out := make([]byte, cursorNonceLen, cursorNonceLen+cursorPlainLen+cursorTagLen)
	if _, err := rand.Read(out); err != nil {
		return "", err
	}
	out = s.aead.Seal(out, out[:cursorNonceLen], plain, callerAAD(subject, orgs))
	return CursorTokenPrefix + base64.RawURLEncoding.EncodeToString(out), nil
}

// Open reads back a token Seal made for this caller; anything else is
// ErrBadCursor.
func (s *CursorSeal) Open(subject string, orgs []string, token string) (*Cursor, error) {
	b, err := decodeCursorToken(token)
	if err != nil {
		return nil, err
	}
	plain, err := s.aead.Open(nil, b[:cursorNonceLen], b[cursorNonceLen:], callerAAD(subject, orgs))
	if err != nil || len(plain) != cursorPlainLen {
		return nil, ErrBadCursor
	}
	sec := int64(binary.BigEndian.Uint64(plain[:8]))
	nsec := int64(binary.BigEndian.Uint32(plain[8:12]))
	id, _ := uuid.FromBytes(plain[12:])
	return &Cursor{CapturedAt: time.Unix(sec, nsec).UTC(), ID: id.String()}, nil
}

// callerAAD binds a token to its caller: the subject and the set of
// organizations (order and repeats do not matter), each length-prefixed so
// no two callers share an encoding.
func callerAAD(subject string, orgs []string) []byte {
	set := slices.Clone(orgs)
	slices.Sort(set)
	set = slices.Compact(set)
	out := []byte(cursorPurpose)
	out = binary.AppendUvarint(out, uint64(len(subject)))
	out = append(out, subject...)
	out = binary.AppendUvarint(out, uint64(len(set)))
	for _, o := range set {
		out = binary.AppendUvarint(out, uint64(len(o)))
		out = append(out, o...)
	}
	return out
}
