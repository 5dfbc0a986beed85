package archive

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/visible"
)

// A list's resume token is the position where its scan stopped — the
// (captured_at, id) of the last row examined, which may be a row the caller
// may not see — sealed for the caller (visible.Seal: AES-GCM under a key
// kept in the database, docs/security.md).
//
//	token = "c1." + base64url( nonce[12] || AES-GCM(seconds[8] || nanos[4] || id[16]) )

// CursorTokenPrefix starts every resume token; it is how a `before` value is
// told apart from a date-time.
const CursorTokenPrefix = "c1."

// cursorKind is the list cursor's kind of token.
var cursorKind = visible.Kind{Purpose: "capture-ledger archive list cursor v1", Prefix: CursorTokenPrefix, Size: 8 + 4 + 16}

// ErrBadCursor is a resume token this caller cannot use: malformed,
// tampered with, handed to someone else, or sealed under another key.
var ErrBadCursor = errors.New("is not a cursor this server handed to you (changed, cut short, or another caller's): start again without it")

// IsCursorToken says whether raw is meant as a resume token (rather than a
// date-time): it carries the token prefix.
func IsCursorToken(raw string) bool { return cursorKind.Is(raw) }

// CheckCursorToken checks a token's shape without any key (length and
// alphabet), so a malformed one is refused before the caller is identified.
func CheckCursorToken(raw string) error {
	if cursorKind.Check(raw) != nil {
		return ErrBadCursor
	}
	return nil
}

// SealCursor turns a position into the caller's resume token, under the
// key the Catalog keeps.
func (a *Access) SealCursor(ctx context.Context, subject string, orgs []string, c *Cursor) (string, error) {
	return a.sealCursor(ctx, subject, orgs, "", c)
}

// sealCursor seals c for this caller and filter (its Key; "" for none).
func (a *Access) sealCursor(ctx context.Context, subject string, orgs []string, filter string, c *Cursor) (string, error) {
	s, err := a.cursorSeal(ctx)
	if err != nil {
		return "", err
	}
	return s.seal.Seal(subject, orgs, filter, s.encode(c))
}

// OpenCursor reads back a token SealCursor handed to this caller. Any token
// that is not one is ErrBadCursor, whatever is wrong with it.
func (a *Access) OpenCursor(ctx context.Context, subject string, orgs []string, token string) (*Cursor, error) {
	return a.openCursor(ctx, subject, orgs, "", token)
}

// openCursor opens a token sealed for this caller and filter.
func (a *Access) openCursor(ctx context.Context, subject string, orgs []string, filter string, token string) (*Cursor, error) {
	if err := CheckCursorToken(token); err != nil {
		return nil, err // no key needed to refuse a malformed token
	}
	s, err := a.cursorSeal(ctx)
	if err != nil {
		return nil, err
	}
	return s.open(subject, orgs, filter, token)
}

func (a *Access) cursorSeal(ctx context.Context) (*CursorSeal, error) {
	key, err := a.Catalog.ListCursorKey(ctx)
	if err != nil {
		return nil, err
	}
	return NewCursorSeal(key)
}

// CursorSeal seals list positions into resume tokens and opens them, under
// one key.
type CursorSeal struct{ seal *visible.Seal }

// NewCursorSeal derives the list cursor's own key from key (so the stored
// key seals other scans' cursors too without one token opening as
// another's) and readies AES-GCM with it.
func NewCursorSeal(key []byte) (*CursorSeal, error) {
	s, err := visible.NewSeal(key, cursorKind)
	if err != nil {
		return nil, err
	}
	return &CursorSeal{seal: s}, nil
}

// Seal returns the token of position c for this caller. Every call draws a
// fresh nonce, so two tokens of one position differ.
func (s *CursorSeal) Seal(subject string, orgs []string, c *Cursor) (string, error) {
	if _, err := uuid.Parse(c.ID); err != nil {
		return "", fmt.Errorf("seal cursor: id %q: %w", c.ID, err)
	}
	return s.seal.Seal(subject, orgs, "", s.encode(c))
}

// encode is c as seconds[8] || nanos[4] || id[16] (c.ID a UUID).
func (s *CursorSeal) encode(c *Cursor) []byte {
	id, _ := uuid.Parse(c.ID)
	plain := make([]byte, 0, cursorKind.Size)
	plain = binary.BigEndian.AppendUint64(plain, uint64(c.CapturedAt.Unix()))
	plain = binary.BigEndian.AppendUint32(plain, uint32(c.CapturedAt.Nanosecond()))
	return append(plain, id[:]...)
}

// Open reads back a token Seal made for this caller; anything else is
// ErrBadCursor.
func (s *CursorSeal) Open(subject string, orgs []string, token string) (*Cursor, error) {
	return s.open(subject, orgs, "", token)
}

func (s *CursorSeal) open(subject string, orgs []string, filter, token string) (*Cursor, error) {
	plain, err := s.seal.Open(subject, orgs, filter, token)
	if err != nil {
		return nil, ErrBadCursor
	}
	sec := int64(binary.BigEndian.Uint64(plain[:8]))
	nsec := int64(binary.BigEndian.Uint32(plain[8:12]))
	id, _ := uuid.FromBytes(plain[12:])
	return &Cursor{CapturedAt: time.Unix(sec, nsec).UTC(), ID: id.String()}, nil
}
