package strictjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/strictjson"
)

// TestDecodeRefusesWhatJSONWouldRewrite: what encoding/json would silently
// rewrite (a lone surrogate or bytes that are not UTF-8 become U+FFFD) or
// the ledger will not keep (U+0000) is refused naming its place inside the
// body — the decoder of the replay link's {"page": …}, the empty bodies of
// the mint, revoke, delete and index routes and the share body (tested with
// their routes in package api).
func TestDecodeRefusesWhatJSONWouldRewrite(t *testing.T) {
	t.Parallel()
	type replayBody struct {
		ExpiresIn *int64 `json:"expiresIn"`
		Page      string `json:"page"`
	}
	for _, tc := range []struct{ name, body, field, reason string }{
		{"lone high surrogate", `{"page":"https://e.com/\ud800"}`, "page", "must be valid UTF-8"},
		{"lone low surrogate", `{"page":"https://e.com/\uDC00"}`, "page", "must be valid UTF-8"},
		{"high then not low", `{"page":"\ud800\u0041"}`, "page", "must be valid UTF-8"},
		{"escaped NUL", `{"page":"a\u0000"}`, "page", "must NOT contain U+0000 (NUL)"},
		{"raw NUL is not JSON", "{\"page\":\"a\x00\"}", "", "is not valid JSON"},
		{"raw invalid UTF-8", "{\"page\":\"\xff\"}", "page", "must be valid UTF-8"},
		{"bad property name", "{\"\xff\":1}", "", "property name must be valid UTF-8"},
		{"nested place", `{"a":{"b/c":["x","\ud800"]}}`, "a/b~1c/1", "must be valid UTF-8"},
		{"surrogate in an unknown key's value", `{"other":"\ud800"}`, "other", "must be valid UTF-8"},
		{"not JSON", `{"page":`, "", "is not valid JSON"},
		{"two values", `{}{}`, "", "must be one JSON object"},
		{"unknown key", `{"other":1}`, "", "must NOT have additional properties"},
		{"wrong type", `{"expiresIn":60.5}`, "expiresIn", "must be int64"},
		{"not an object", `[1]`, "", "must be object"},
		{"a key twice, the last one valid", `{"page":null,"page":"https://e.com/"}`, "page", "must NOT appear more than once"},
		{"a key twice, once escaped", `{"page":"https://e.com/a","p\u0061ge":"https://e.com/b"}`, "page", "must NOT appear more than once"},
		{"a nested key twice", `{"a":[{"b":1},{"b":1,"b":2}]}`, "a/1/b", "must NOT appear more than once"},
		{"the same key in two objects is fine", `{"expiresIn":1,"page":"{\"page\":1}"}`, "", ""},
		{"a pair is fine", `{"page":"https://e.com/\ud83d\ude00"}`, "", ""},
		{"U+FFFD itself is fine", `{"page":"https://e.com/\ufffd�"}`, "", ""},
		{"empty is {}", ``, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b replayBody
			err := strictjson.Decode([]byte(tc.body), &b)
			var fe *ledger.FieldError
			switch {
			case tc.reason == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.reason != "" && (!errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Reason, tc.reason)):
				t.Fatalf("got %#v, want a refusal at %q saying %q", err, tc.field, tc.reason)
			}
		})
	}
}

// TestRead: a body over the limit is a *TooLarge whether its
// Content-Length says so or its bytes do; a body at the limit is read
// whole; one that cannot be read is refused at the body.
func TestRead(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("POST", "/x", strings.NewReader("12345"))
	if data, err := strictjson.Read(r, 5); err != nil || string(data) != "12345" {
		t.Fatalf("at the limit: %q, %v", data, err)
	}
	var large *strictjson.TooLarge
	r = httptest.NewRequest("POST", "/x", strings.NewReader("123456"))
	if _, err := strictjson.Read(r, 5); !errors.As(err, &large) || large.Limit != 5 || err.Error() != "body must be at most 5 bytes" {
		t.Fatalf("over the limit by its bytes: %v", err)
	}
	r = httptest.NewRequest("POST", "/x", strings.NewReader("1"))
	r.ContentLength = 6
	if _, err := strictjson.Read(r, 5); !errors.As(err, &large) {
		t.Fatalf("over the limit by its Content-Length: %v", err)
	}
	r = httptest.NewRequest("POST", "/x", io.MultiReader(strings.NewReader("{"), failing{}))
	var fe *ledger.FieldError
	if _, err := strictjson.Read(r, 5); !errors.As(err, &fe) || fe.Field != "" || fe.Reason != "could not be read" {
		t.Fatalf("unreadable: %v", err)
	}
}

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// FuzzDecode: whatever the body, the strict decoder refuses it with a
// *ledger.FieldError or hands over strings that are valid UTF-8, without
// U+0000, and with a U+FFFD only where the body had one (raw or as
// \ufffd): it never rewrites a string silently, and it never panics.
func FuzzDecode(f *testing.F) {
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
		if err := strictjson.Decode(data, &b); err != nil {
			var fe *ledger.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("a refusal that names no place: %v", err)
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

// FuzzCheck: Check accepts a body only when encoding/json reads it as one
// value whose every string, property names included, is kept as sent
// (valid UTF-8, no U+0000, no U+FFFD the body did not hold); a refusal is
// a *ledger.FieldError; it never panics.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"a":["b",{"c":"\ud800"}]}`, `{"\u0000":1}`, `[1,2,"\udc00"]`, `"x"`, `{"a/b~":"\ufffd"}`, "[\"\xc3\"]", `1 2`, `{`,
		`{"k":"\ud83d\ude00"}`, `  {"a" : [ true , null , -1.5e3 ] }  `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := strictjson.Check(data)
		if err != nil {
			var fe *ledger.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("a refusal that names no place: %v", err)
			}
			return
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber() // a number too large for a float64 is still JSON
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("accepted what encoding/json cannot read: %v", err)
		}
		hadFFFD := bytes.Contains(data, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(data), []byte(`ufffd`))
		var walk func(v any)
		keep := func(s string) {
			if !utf8.ValidString(s) || strings.ContainsRune(s, 0) || (strings.ContainsRune(s, utf8.RuneError) && !hadFFFD) {
				t.Fatalf("accepted a string the ledger would not keep as sent: %q from %q", s, data)
			}
		}
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				keep(x)
			case []any:
				for _, e := range x {
					walk(e)
				}
			case map[string]any:
				for k, e := range x {
					keep(k)
					walk(e)
				}
			}
		}
		walk(v)
	})
}
