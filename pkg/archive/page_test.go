package archive_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

func TestParseListStart(t *testing.T) {
	t.Parallel()
	seal := newSeal(t)
	token, err := seal.Seal("bob", []string{"acme"}, &archive.Cursor{CapturedAt: time.Now(), ID: "0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q         string
		wantField string // the field a *ledger.FieldError names; "" for success
		wantErr   string // a substring of its reason
		wantID    string
		wantToken bool
	}{
		{"", "", "", "", false},
		{"before=2026-12-01T10:00:00Z", "", "", "ffffffff-ffff-ffff-ffff-ffffffffffff", false},
		{"before=2026-12-01T10:00:00.123456Z&beforeId=0B6B2C4E-3F5A-4C1E-9D7A-2F1E0C9B8A71", "", "", "0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71", false},
		{"beforeId=0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71", "beforeId", "needs before", "", false},
		{"before=yesterday", "before", "date-time", "", false},
		{"before=2026-12-01T10:00:00Z&beforeId=nope", "beforeId", "uuid", "", false},
		{"before=2026-12-01T10:00:00Z&before=2026-12-02T10:00:00Z", "before", "single", "", false},
		{"before=2026-12-01T10:00:00Z&beforeId=0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71&beforeId=0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71", "beforeId", "single", "", false},
		// A token, as the console sends it back (beforeId empty) or alone.
		{"before=" + token + "&beforeId=", "", "", "", true},
		{"before=" + token, "", "", "", true},
		{"before=" + token + "&beforeId=0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71", "beforeId", "must be empty", "", false},
		{"before=" + token + "&before=" + token, "before", "single", "", false},
		// Malformed tokens are refused before anyone is identified.
		{"before=" + token[:len(token)-1], "before", "not a cursor", "", false},
		{"before=" + token + "A", "before", "not a cursor", "", false},
		{"before=" + token[:10] + "!" + token[11:], "before", "not a cursor", "", false}, // a character outside the alphabet, past the prefix
		{"before=c1.", "before", "not a cursor", "", false},
	} {
		q, _ := url.ParseQuery(tc.q)
		s, err := archive.ParseListStart(q["before"], q["beforeId"])
		if tc.wantField != "" {
			var fe *ledger.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.wantField || !strings.Contains(fe.Reason, tc.wantErr) {
				t.Errorf("%q: err %#v, want a field error on %s saying %q", tc.q, err, tc.wantField, tc.wantErr)
			}
			if tc.wantErr == "not a cursor" && !errors.Is(err, archive.ErrBadCursor) {
				t.Errorf("%q: %v does not match ErrBadCursor", tc.q, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: err %v", tc.q, err)
			continue
		}
		if tc.wantID != "" && (s.At == nil || s.At.ID != tc.wantID) {
			t.Errorf("%q: start %+v", tc.q, s)
		}
		if tc.wantToken != (s.Token != "") || (s.Token != "" && s.At != nil) {
			t.Errorf("%q: token %q, position %+v", tc.q, s.Token, s.At)
		}
	}
}

// TestPageBody: the next page's cursor carries only the token, and an
// empty page is an empty list, not null.
func TestPageBody(t *testing.T) {
	t.Parallel()
	at := &archive.Cursor{CapturedAt: time.Now(), ID: "0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71"}
	for _, tc := range []struct {
		page archive.Page
		want string
	}{
		{archive.Page{}, `{"archives":[],"next":null,"truncated":false}`},
		{archive.Page{Next: at, Token: "c1.x", Truncated: true, Scanned: 100}, `{"archives":[],"next":{"before":"c1.x","beforeId":""},"truncated":true}`},
	} {
		b, err := json.Marshal(tc.page.Body())
		if err != nil || string(b) != tc.want {
			t.Errorf("%+v: %s %v, want %s", tc.page, b, err, tc.want)
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

// TestListFromRefusesAMalformedTokenWithoutTheDatabase: a token whose
// shape is wrong is refused as a field error on before before any key is
// read (the Access here has no catalog at all).
func TestListFromRefusesAMalformedTokenWithoutTheDatabase(t *testing.T) {
	t.Parallel()
	_, err := (&archive.Access{}).ListFrom(context.Background(), "bob", []string{"acme"}, archive.ListStart{Token: "c1.short"})
	var fe *ledger.FieldError
	if !errors.As(err, &fe) || fe.Field != archive.FieldBefore || !errors.Is(err, archive.ErrBadCursor) {
		t.Errorf("ListFrom with a malformed token: %#v", err)
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

// FuzzParseListStart: any before/beforeId is a position, a token to open,
// or a field error naming one of the two — never another error or a panic;
// a position sealed for a caller parses back, from the page's next, to a
// token that opens to the same position for that caller and for no one
// else.
func FuzzParseListStart(f *testing.F) {
	f.Add("2026-12-01T10:00:00Z", "0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71")
	f.Add("", "")
	f.Add("not a date", "{}")
	f.Add("c1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "")
	f.Add("c1.////", "")
	f.Add("2026-12-01T10:00:00\x00Z", "\xff\xfe")
	seal := newSeal(f)
	f.Fuzz(func(t *testing.T, before, id string) {
		var bs, ids []string
		if before != "" {
			bs = []string{before}
		}
		if id != "" {
			ids = []string{id}
		}
		s, err := archive.ParseListStart(bs, ids)
		if err != nil {
			fe, ok := err.(*ledger.FieldError)
			if !ok || (fe.Field != archive.FieldBefore && fe.Field != archive.FieldBeforeID) {
				t.Fatalf("not a field error on before or beforeId: %T %v", err, err)
			}
			return
		}
		if s.Token != "" {
			// Not one of ours: it opens for no one.
			if got, err := seal.Open("bob", []string{"acme"}, s.Token); !errors.Is(err, archive.ErrBadCursor) {
				t.Fatalf("a made-up token opened: %+v %v", got, err)
			}
			return
		}
		if s.At == nil {
			if before != "" {
				t.Fatal("a before value was ignored")
			}
			return
		}
		token, err := seal.Seal("bob", []string{"acme"}, s.At)
		if err != nil {
			t.Fatal(err)
		}
		back := archive.Page{Next: s.At, Token: token}.Body()
		s2, err := archive.ParseListStart([]string{back.Next.Before}, []string{back.Next.BeforeID})
		if err != nil || s2.Token != token {
			t.Fatalf("the page's next did not parse back to its token: %+v %v", s2, err)
		}
		got, err := seal.Open("bob", []string{"acme"}, s2.Token)
		if err != nil || !got.CapturedAt.Equal(s.At.CapturedAt) || got.ID != s.At.ID {
			t.Fatalf("round trip %+v -> %+v (%v)", s.At, got, err)
		}
		if _, err := seal.Open("carol", []string{"acme"}, s2.Token); !errors.Is(err, archive.ErrBadCursor) {
			t.Fatalf("another caller opened the token: %v", err)
		}
	})
}
