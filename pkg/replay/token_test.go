package replay

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	testKey = []byte("0123456789abcdef0123456789abcdef-test")
	t0      = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
)

const testLabel = "abcdefghijklmnopqrstuvwxyz"

const (
	archiveA = "0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71"
	archiveB = "1c7c3d5f-4a6b-4d2f-8e8b-3a2f1d0cab82"
)

func signer(t testing.TB) *Signer {
	t.Helper()
	s, err := NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func claims() Claims {
	return Claims{Label: testLabel, ArchiveID: archiveA, Subject: "alice", Organizations: []string{"acme", "globex"}, Expires: t0.Add(time.Hour)}
}

// resign replaces the token's payload by edit's, keeping its signature:
// what someone without the key can do.
func resign(t *testing.T, tok string, edit func(m map[string]any)) string {
	t.Helper()
	payload, sig, _ := strings.Cut(tok, ".")
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	raw, _ = json.Marshal(m)
	return base64.RawURLEncoding.EncodeToString(raw) + "." + sig
}

func TestSignVerify(t *testing.T) {
	s := signer(t)
	tok, err := s.Sign(claims())
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(tok, "+/=?&% ") {
		t.Errorf("token %q needs escaping in a URL", tok)
	}
	got, err := s.Verify(tok, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := claims()
	if got.ArchiveID != want.ArchiveID || got.Label != testLabel || got.Subject != want.Subject || strings.Join(got.Organizations, ",") != "acme,globex" || !got.Expires.Equal(want.Expires) {
		t.Errorf("claims %+v, want %+v", got, want)
	}
	// No organizations is a claim too: an empty list, never missing.
	c := claims()
	c.Organizations = nil
	tok, _ = s.Sign(c)
	if got, err := s.Verify(tok, t0); err != nil || got.Organizations == nil || len(got.Organizations) != 0 || got.Download {
		t.Errorf("no organizations: %+v %v", got, err)
	}
	// A download link's token says so; a session's never does.
	c = claims()
	c.Download = true
	tok, _ = s.Sign(c)
	if got, err := s.Verify(tok, t0); err != nil || !got.Download || got.ArchiveID != c.ArchiveID {
		t.Errorf("a download token: %+v %v", got, err)
	}
}

// TestVerifyRefuses: every field altered (with the signature kept), the
// signature altered, another key, expiry, another archive, more lifetime
// than the maximum, and malformed tokens all fail alike (ErrInvalid).
func TestVerifyRefuses(t *testing.T) {
	s := signer(t)
	tok, _ := s.Sign(claims())
	other, _ := NewSigner([]byte("another key of at least thirty-two bytes"))
	otherTok, _ := other.Sign(claims())
	long := claims()
	long.Expires = t0.Add(MaxTTL + 2*time.Minute)
	longTok, _ := s.Sign(long)
	payload, sig, _ := strings.Cut(tok, ".")
	// A token of the first version (read on the API's origin, no label),
	// signed with this key.
	v1payload := base64.RawURLEncoding.EncodeToString([]byte(`{"a":"` + archiveA + `","s":"alice","o":["acme"],"e":` + strconv.FormatInt(t0.Add(time.Hour).Unix(), 10) + `}`))
	m1 := hmac.New(sha256.New, testKey)
	m1.Write([]byte("capture-ledger replay token v1\n" + v1payload))
	v1 := v1payload + "." + base64.RawURLEncoding.EncodeToString(m1.Sum(nil))
	flipped := []byte(sig)
	flipped[3] ^= 'A' ^ 'B'
	if flipped[3] == sig[3] {
		flipped[3] = 'C'
	}
	cases := []struct {
		name, tok string
		now       time.Time
	}{
		{"archive altered", resign(t, tok, func(m map[string]any) { m["a"] = archiveB }), t0},
		{"subject altered", resign(t, tok, func(m map[string]any) { m["s"] = "mallory" }), t0},
		{"organization added", resign(t, tok, func(m map[string]any) { m["o"] = []string{"acme", "globex", "initech"} }), t0},
		{"organizations dropped", resign(t, tok, func(m map[string]any) { m["o"] = []string{} }), t0},
		{"expiry extended", resign(t, tok, func(m map[string]any) { m["e"] = t0.Add(2 * time.Hour).Unix() }), t0},
		{"field added", resign(t, tok, func(m map[string]any) { m["z"] = 1 }), t0},
		{"label altered", resign(t, tok, func(m map[string]any) { m["l"] = "zyxwvutsrqponmlkjihgfedcba" }), t0},
		{"made a collection", resign(t, tok, func(m map[string]any) { delete(m, "a"); m["c"] = archiveB }), t0},
		{"a download token of a collection", resign(t, tok, func(m map[string]any) { delete(m, "a"); m["c"] = archiveB; m["d"] = true }), t0},
		{"download not a boolean", resign(t, tok, func(m map[string]any) { m["d"] = "yes" }), t0},
		{"v1 token", v1, t0},
		{"signature altered", payload + "." + string(flipped), t0},
		{"signature cut", payload + "." + sig[:20], t0},
		{"signature missing", payload, t0},
		{"signature empty", payload + ".", t0},
		{"three parts", tok + ".x", t0},
		{"another key", otherTok, t0},
		{"expired", tok, t0.Add(time.Hour)},
		{"long expired", tok, t0.Add(48 * time.Hour)},
		{"longer than the maximum", longTok, t0},
		{"empty", "", t0},
		{"too long", strings.Repeat("a", MaxTokenBytes) + "." + sig, t0},
		{"padding", tok + "=", t0},
		{"NUL", payload + "\x00." + sig, t0},
		{"invalid UTF-8", payload + "\xff." + sig, t0},
	}
	for _, tc := range cases {
		if c, err := s.Verify(tc.tok, tc.now); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %+v %v, want ErrInvalid", tc.name, c, err)
		} else if strings.Contains(err.Error(), sig) || (len(payload) > 0 && strings.Contains(err.Error(), payload)) {
			t.Errorf("%s: the error quotes the token: %v", tc.name, err)
		}
	}
	// The untouched token still verifies, one second before it expires.
	if _, err := s.Verify(tok, t0.Add(time.Hour-time.Second)); err != nil {
		t.Errorf("untouched: %v", err)
	}
}

// TestSignRefusesWhatCannotVerify: a token must carry a session label and
// open exactly one archive, crawl or set of at most MaxSet.
func TestSignRefusesWhatCannotVerify(t *testing.T) {
	s := signer(t)
	base := claims()
	for name, edit := range map[string]func(c *Claims){
		"no label":      func(c *Claims) { c.Label = "" },
		"a bad label":   func(c *Claims) { c.Label = "Not.A.Label" },
		"nothing":       func(c *Claims) { c.ArchiveID = "" },
		"two things":    func(c *Claims) { c.CrawlID = archiveB },
		"too large set": func(c *Claims) { c.ArchiveID, c.ArchiveIDs = "", make([]string, MaxSet+1) },
		"a download of a set": func(c *Claims) {
			c.ArchiveID, c.ArchiveIDs, c.Download = "", []string{archiveA}, true
		},
	} {
		c := base
		edit(&c)
		if tok, err := s.Sign(c); err == nil {
			t.Errorf("%s: signed %s", name, tok)
		}
	}
	c := base
	c.ArchiveID, c.ArchiveIDs = "", []string{archiveA, archiveB}
	tok, err := s.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Verify(tok, t0); err != nil || !got.Collection() || strings.Join(got.ArchiveIDs, ",") != archiveA+","+archiveB {
		t.Errorf("a set: %+v %v", got, err)
	}
}

// TestCrawlDownloadTokenOpensNoCollection: a crawl's download token signs
// and verifies with its crawl, and is no collection's: a replay origin
// lists nothing with it.
func TestCrawlDownloadTokenOpensNoCollection(t *testing.T) {
	s := signer(t)
	c := claims()
	c.ArchiveID, c.CrawlID, c.Download = "", archiveB, true
	tok, err := s.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Verify(tok, t0)
	if err != nil || got.CrawlID != archiveB || !got.Download || got.Collection() {
		t.Errorf("a crawl's download token: %+v %v (Collection %v)", got, err, got.Collection())
	}
	c.Download = false
	if tok, err = s.Sign(c); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Verify(tok, t0); err != nil || !got.Collection() {
		t.Errorf("a crawl's replay token: %+v %v", got, err)
	}
}

func TestNewSignerNeedsALongKey(t *testing.T) {
	if _, err := NewSigner(make([]byte, MinKeyBytes-1)); err == nil {
		t.Error("a 31-byte key was accepted")
	}
	if _, err := NewSigner(make([]byte, MinKeyBytes)); err != nil {
		t.Error(err)
	}
}

func TestServeKey(t *testing.T) {
	long := strings.Repeat("k", MinKeyBytes)
	for _, tc := range []struct {
		name, configured string
		dev              bool
		wantErr          string
		ephemeral        bool
	}{
		{"configured", long, false, "", false},
		{"configured in dev mode", long, true, "", false},
		{"missing", "", false, KeyVar + " is not set", false},
		{"short", "short", false, KeyVar + ": 5 bytes, need at least 32", false},
		{"short in dev mode", "short", true, KeyVar + ": 5 bytes", false},
		{"missing in dev mode", "", true, "", true},
	} {
		key, eph, err := ServeKey(tc.configured, tc.dev)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || (tc.configured != "" && strings.Contains(err.Error(), tc.configured+" ")) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.wantErr)
			}
		case err != nil || eph != tc.ephemeral || len(key) < MinKeyBytes:
			t.Errorf("%s: %d bytes, ephemeral %v, %v", tc.name, len(key), eph, err)
		case !tc.ephemeral && string(key) != tc.configured:
			t.Errorf("%s: not the configured key", tc.name)
		}
	}
	a, _, _ := ServeKey("", true)
	b, _, _ := ServeKey("", true)
	if string(a) == string(b) {
		t.Error("two ephemeral keys are equal")
	}
}

// FuzzVerify: no input panics, and nothing but a token this key signed
// verifies.
func FuzzVerify(f *testing.F) {
	s := signer(f)
	tok, _ := s.Sign(claims())
	for _, seed := range []string{tok, "", ".", "a.b", tok + "x", strings.ToUpper(tok), "e30.AAAA", "\x00", "\xff\xfe.\xff"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c, err := s.Verify(in, t0)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: %v is not ErrInvalid", in, err)
			}
			return
		}
		if in != tok || c.Subject != "alice" {
			t.Fatalf("%q verified as %+v", in, c)
		}
	})
}
