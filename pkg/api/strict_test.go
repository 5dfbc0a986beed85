package api_test

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/api"
)

// TestStrictDecoderRefusesWhatJSONWouldRewrite: what encoding/json would
// silently rewrite (a lone surrogate or bytes that are not UTF-8 become
// U+FFFD) or the ledger will not keep (U+0000) is a 400 naming its place,
// through DecodeBody — the decoder of the replay link's {"page": …}, the
// empty bodies of the mint, revoke, delete and index routes — as through the
// share and capture bodies (tested with their routes).
func TestStrictDecoderRefusesWhatJSONWouldRewrite(t *testing.T) {
	type replayBody struct {
		ExpiresIn *int64 `json:"expiresIn"`
		Page      string `json:"page"`
	}
	for _, tc := range []struct{ name, body, want string }{
		{"lone high surrogate", `{"page":"https://e.com/\ud800"}`, "body/page must be valid UTF-8"},
		{"lone low surrogate", `{"page":"https://e.com/\uDC00"}`, "body/page must be valid UTF-8"},
		{"high then not low", `{"page":"\ud800\u0041"}`, "body/page must be valid UTF-8"},
		{"escaped NUL", `{"page":"a\u0000"}`, "body/page must NOT contain U+0000 (NUL)"},
		{"raw invalid UTF-8", "{\"page\":\"\xff\"}", "body/page must be valid UTF-8"},
		{"bad property name", "{\"\xff\":1}", "body property name must be valid UTF-8"},
		{"surrogate in an unknown key's value", `{"other":"\ud800"}`, "body/other must be valid UTF-8"},
		{"not JSON", `{"page":`, "body is not valid JSON"},
		{"two values", `{}{}`, "body must be one JSON object"},
		{"unknown key", `{"other":1}`, "must NOT have additional properties"},
		{"a pair is fine", `{"page":"https://e.com/\ud83d\ude00"}`, ""},
		{"U+FFFD itself is fine", `{"page":"https://e.com/\ufffd�"}`, ""},
		{"empty is {}", ``, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b replayBody
			r := httptest.NewRequest("POST", "/x", strings.NewReader(tc.body))
			err := api.DecodeBody(r, &b, 1<<16)
			var bad *api.BadRequest
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (!errors.As(err, &bad) || !strings.Contains(bad.Message, tc.want)):
				t.Fatalf("got %v, want a 400 saying %q", err, tc.want)
			}
		})
	}
}

// FuzzDecodeBody: whatever the body, the strict decoder refuses it or
// hands over strings that are valid UTF-8, without U+0000, and with a
// U+FFFD only where the body had one (raw or as \ufffd): it never rewrites
// a string silently, and it never panics.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range []string{
		`{"page":"https://e.com/"}`, `{"page":"\ud800"}`, `{"page":"\ud83d\ude00"}`, `{"page":"\u0000"}`,
		"{\"page\":\"\xff\"}", `{"list":["a","\udc00"]}`, `{"page":"\ufffd"}`, `{"page":"\\ud800"}`, ``, `{}{}`, `[`,
		`{"page":"a\ud800\ud800\udc00"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b struct {
			Page string   `json:"page"`
			List []string `json:"list"`
		}
		r := httptest.NewRequest("POST", "/x", bytes.NewReader(data))
		if err := api.DecodeBody(r, &b, 1<<20); err != nil {
			var bad *api.BadRequest
			if !errors.As(err, &bad) {
				t.Fatalf("a refusal that is not a 400: %v", err)
			}
			return
		}
		hadFFFD := bytes.Contains(data, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(data), []byte(`ufffd`))
		for _, s := range append([]string{b.Page}, b.List...) {
			if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
				t.Fatalf("accepted a string the ledger will not keep: %q", s)
			}
			if strings.ContainsRune(s, utf8.RuneError) && !hadFFFD {
				t.Fatalf("a string was rewritten to U+FFFD: %q from %q", s, data)
			}
		}
	})
}
