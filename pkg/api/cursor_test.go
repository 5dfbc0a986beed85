package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
)

// The list's cursor is parsed by archive.ParseListStart (tested, with its
// fuzz test, in pkg/archive); these tests hold the API's rendering of its
// field errors: querystring/<field> <reason>, a 400 before identity.

func listArchivesStatus(t testing.TB, q url.Values) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	(&Server{}).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/archives?"+q.Encode(), nil))
	var body struct{ Message string }
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	return rec.Code, body.Message
}

func TestListArchivesQueryErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q    string
		want string
	}{
		{"beforeId=0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71", "querystring/beforeId needs before"},
		{"before=yesterday", `querystring/before must match format "date-time"`},
		{"before=2026-12-01T10:00:00Z&beforeId=nope", `querystring/beforeId must match format "uuid"`},
		{"before=2026-12-01T10:00:00Z&before=2026-12-02T10:00:00Z", "querystring/before must be a single value"},
		{"before=c1.&beforeId=0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71", "querystring/beforeId must be empty when before is a cursor from next.before"},
		{"before=c1.", "querystring/before is not a cursor this server handed to you (changed, cut short, or another caller's): start again without it"},
	} {
		q, _ := url.ParseQuery(tc.q)
		if code, msg := listArchivesStatus(t, q); code != http.StatusBadRequest || msg != tc.want {
			t.Errorf("%s: %d %q, want 400 %q", tc.q, code, msg, tc.want)
		}
	}
	// A well-formed start goes on to identity: none here, so 401.
	if code, _ := listArchivesStatus(t, url.Values{"before": {"2026-12-01T10:00:00Z"}}); code != http.StatusUnauthorized {
		t.Errorf("a good before without identity: %d, want 401", code)
	}
}

// FuzzListArchivesQuery: whatever before, beforeId and why hold (NUL,
// invalid UTF-8, repeats), GET /api/archives answers 400 or, when they
// read, goes on to identity (401 here) — never a 500; a why that is not
// one of the five spellings is a 400.
func FuzzListArchivesQuery(f *testing.F) {
	f.Add("2026-12-01T10:00:00Z", "0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71", "", false)
	f.Add("c1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "", "1", false)
	f.Add("\x00", "\xff", "tru\x00e", true)
	f.Add("", "", "yes", false)
	f.Fuzz(func(t *testing.T, before, id, why string, twice bool) {
		q := url.Values{"before": {before}, "beforeId": {id}, "why": {why}}
		if twice {
			q["before"] = append(q["before"], before)
		}
		code, _ := listArchivesStatus(t, q)
		if code != http.StatusBadRequest && code != http.StatusUnauthorized {
			t.Fatalf("before %q beforeId %q why %q: %d", before, id, why, code)
		}
		if !slices.Contains([]string{"", "0", "1", "true", "false"}, why) && code != http.StatusBadRequest {
			t.Fatalf("why %q: %d, want 400", why, code)
		}
	})
}
