package api

import (
	"crypto/rand"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
)

func TestParseArchiveCursor(t *testing.T) {
	t.Parallel()
	seal := newSeal(t)
	token, err := seal.Seal("bob", []string{"acme"}, &archive.Cursor{CapturedAt: time.Now(), ID: "0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q         string
		wantErr   string // a substring of the 400's message; "" for success
		wantID    string
		wantToken bool
	}{
		{"", "", "", false},
		{"before=2026-12-01T10:00:00Z", "", "ffffffff-ffff-ffff-ffff-ffffffffffff", false},
		{"before=2026-12-01T10:00:00.123456Z&beforeId=0B6B2C4E-3F5A-4C1E-9D7A-2F1E0C9B8A71", "", "0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71", false},
		{"beforeId=0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71", "needs before", "", false},
		{"before=yesterday", "date-time", "", false},
		{"before=2026-12-01T10:00:00Z&beforeId=nope", "uuid", "", false},
		{"before=2026-12-01T10:00:00Z&before=2026-12-02T10:00:00Z", "single", "", false},
		// A token, as the picker sends it back (beforeId empty) or alone.
		{"before=" + token + "&beforeId=", "", "", true},
		{"before=" + token, "", "", true},
		{"before=" + token + "&beforeId=0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71", "beforeId must be empty", "", false},
		{"before=" + token + "&before=" + token, "single", "", false},
		// Malformed tokens are refused before anyone is identified.
		{"before=" + token[:len(token)-1], "not a cursor", "", false},
		{"before=" + token + "A", "not a cursor", "", false},
		{"before=" + token[:10] + "!" + token[11:], "not a cursor", "", false}, // a character outside the alphabet, past the prefix
		{"before=c1.", "not a cursor", "", false},
	} {
		q, _ := url.ParseQuery(tc.q)
		c, err := ParseArchiveCursor(q)
		if tc.wantErr != "" {
			var bad *BadRequest
			if !errors.As(err, &bad) || !strings.Contains(bad.Message, tc.wantErr) {
				t.Errorf("%q: err %v, want a 400 saying %q", tc.q, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: err %v", tc.q, err)
			continue
		}
		if tc.wantID != "" && (c.At == nil || c.At.ID != tc.wantID) {
			t.Errorf("%q: cursor %+v", tc.q, c)
		}
		if tc.wantToken != (c.Token != "") || (c.Token != "" && c.At != nil) {
			t.Errorf("%q: token %q, position %+v", tc.q, c.Token, c.At)
		}
	}
}

// TestCursorSeal: a token opens to its position for its caller only (the
// same set of organizations in any order), and any change to it, another
// caller, or another key is ErrBadCursor.
func TestCursorSeal(t *testing.T) {
	t.Parallel()
	seal := newSeal(t)
	at := time.Date(2026, 11, 30, 23, 59, 59, 123456000, time.UTC)
	pos := &archive.Cursor{CapturedAt: at, ID: "0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71"}
	token, err := seal.Seal("bob", []string{"acme", "globex"}, pos)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := seal.Seal("bob", []string{"acme", "globex"}, pos)
	if again == token {
		t.Error("two tokens of one position are equal: the nonce is not fresh")
	}
	got, err := seal.Open("bob", []string{"globex", "acme", "acme"}, token)
	if err != nil || !got.CapturedAt.Equal(at) || got.ID != pos.ID {
		t.Fatalf("open: %+v %v", got, err)
	}
	other := newSeal(t)
	for name, open := range map[string]func() (*archive.Cursor, error){
		"another subject":      func() (*archive.Cursor, error) { return seal.Open("carol", []string{"acme", "globex"}, token) },
		"fewer organizations":  func() (*archive.Cursor, error) { return seal.Open("bob", []string{"acme"}, token) },
		"another organization": func() (*archive.Cursor, error) { return seal.Open("bob", []string{"acme", "globex", "initech"}, token) },
		"subject/org boundary": func() (*archive.Cursor, error) { return seal.Open("bo", []string{"bacme", "globex"}, token) },
		"another key":          func() (*archive.Cursor, error) { return other.Open("bob", []string{"acme", "globex"}, token) },
		"last character edited": func() (*archive.Cursor, error) {
			return seal.Open("bob", []string{"acme", "globex"}, flip(token, len(token)-1))
		},
		"a middle byte edited": func() (*archive.Cursor, error) { return seal.Open("bob", []string{"acme", "globex"}, flip(token, 40)) },
	} {
		if c, err := open(); !errors.Is(err, archive.ErrBadCursor) {
			t.Errorf("%s: %+v %v, want ErrBadCursor", name, c, err)
		}
	}
}

// flip changes the base64 character at i to another valid one.
func flip(token string, i int) string {
	c := byte('A')
	if token[i] == 'A' {
		c = 'B'
	}
	return token[:i] + string(c) + token[i+1:]
}

func newSeal(t testing.TB) *archive.CursorSeal {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	s, err := archive.NewCursorSeal(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// FuzzParseArchiveCursor: any before/beforeId is a position, a token to
// open, or a 400 — never another error or a panic; a position sealed for a
// caller parses back to a token that opens to the same position for that
// caller and for no one else.
func FuzzParseArchiveCursor(f *testing.F) {
	f.Add("2026-12-01T10:00:00Z", "0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71")
	f.Add("", "")
	f.Add("not a date", "{}")
	f.Add("c1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "")
	f.Add("c1.////", "")
	seal := newSeal(f)
	f.Fuzz(func(t *testing.T, before, id string) {
		q := url.Values{}
		if before != "" {
			q.Set("before", before)
		}
		if id != "" {
			q.Set("beforeId", id)
		}
		c, err := ParseArchiveCursor(q)
		if err != nil {
			if _, ok := err.(*BadRequest); !ok {
				t.Fatalf("not a 400: %T %v", err, err)
			}
			return
		}
		if c.Token != "" {
			// Not one of ours: it opens for no one.
			if got, err := seal.Open("bob", []string{"acme"}, c.Token); !errors.Is(err, archive.ErrBadCursor) {
				t.Fatalf("a made-up token opened: %+v %v", got, err)
			}
			return
		}
		if c.At == nil {
			if before != "" {
				t.Fatal("a before value was ignored")
			}
			return
		}
		token, err := seal.Seal("bob", []string{"acme"}, c.At)
		if err != nil {
			t.Fatal(err)
		}
		back := NewArchivePage(archive.Page{Next: c.At, Token: token})
		c2, err := ParseArchiveCursor(url.Values{"before": {back.Next.Before}, "beforeId": {back.Next.BeforeID}})
		if err != nil || c2.Token != token {
			t.Fatalf("the page's next did not parse back to its token: %+v %v", c2, err)
		}
		got, err := seal.Open("bob", []string{"acme"}, c2.Token)
		if err != nil || !got.CapturedAt.Equal(c.At.CapturedAt) || got.ID != c.At.ID {
			t.Fatalf("round trip %+v -> %+v (%v)", c.At, got, err)
		}
		if _, err := seal.Open("carol", []string{"acme"}, c2.Token); !errors.Is(err, archive.ErrBadCursor) {
			t.Fatalf("another caller opened the token: %v", err)
		}
	})
}
