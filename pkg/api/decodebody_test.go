package api_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/strictjson"
)

// TestDecodeBodyNamesTheBody: the strict decoder's refusals (package
// strictjson, which tests what is refused) reach a route as a 400 naming
// the place under body/, and a body over the limit as a 413's error.
func TestDecodeBodyNamesTheBody(t *testing.T) {
	t.Parallel()
	var b struct {
		ExpiresIn *int64 `json:"expiresIn"`
		Page      string `json:"page"`
	}
	for _, tc := range []struct{ name, body, want string }{
		{"a string's place", `{"page":"https://e.com/\ud800"}`, "body/page must be valid UTF-8"},
		{"NUL", `{"page":"a\u0000"}`, "body/page must NOT contain U+0000 (NUL)"},
		{"a property name", "{\"\xff\":1}", "body property name must be valid UTF-8"},
		{"not JSON", `{"page":`, "body is not valid JSON"},
		{"two values", `{}{}`, "body must be one JSON object"},
		{"unknown key", `{"other":1}`, `body must NOT have additional properties (json: unknown field "other")`},
		{"wrong type", `{"expiresIn":60.5}`, "body/expiresIn must be int64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := api.DecodeBody(httptest.NewRequest("POST", "/x", strings.NewReader(tc.body)), &b, 1<<16)
			var bad *api.BadRequest
			if !errors.As(err, &bad) || bad.Message != tc.want {
				t.Fatalf("got %v, want a 400 saying %q", err, tc.want)
			}
		})
	}
	err := api.DecodeBody(httptest.NewRequest("POST", "/x", strings.NewReader(`{"page":"abcdef"}`)), &b, 8)
	var large *strictjson.TooLarge
	if !errors.As(err, &large) || large.Limit != 8 {
		t.Fatalf("over the limit: got %v, want a *strictjson.TooLarge of 8", err)
	}
}
