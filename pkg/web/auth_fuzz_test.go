package web

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzParseCallback: whatever query the browser brings back, parsing
// never panics; what it accepts is a code and a state (or an error) given
// once each, printable ASCII, bounded, and exactly what the query held.
func FuzzParseCallback(f *testing.F) {
	for _, s := range []string{"code=abc&state=def", "error=access_denied&state=x", "", "code=a&code=b&state=c", "code=%00&state=x",
		"code=x&state=%zz", "state=x", "code=" + strings.Repeat("a", 3000) + "&state=x", "code=é&state=x", "code=a;b&state=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		cb, err := ParseCallback(raw)
		if err != nil {
			if cb != (Callback{}) {
				t.Fatalf("refused %q but returned %+v", raw, cb)
			}
			return
		}
		q, qerr := url.ParseQuery(raw)
		if qerr != nil {
			t.Fatalf("accepted %q, which does not parse: %v", raw, qerr)
		}
		if cb.Error == "" && (cb.Code == "" || cb.State == "") {
			t.Fatalf("accepted %q without code and state: %+v", raw, cb)
		}
		for name, v := range map[string]string{"code": cb.Code, "state": cb.State, "error": cb.Error} {
			if v == "" {
				continue
			}
			if len(q[name]) != 1 || q[name][0] != v || len(v) > maxCallbackValue {
				t.Fatalf("%s of %q came out as %q", name, raw, v)
			}
			for i := 0; i < len(v); i++ {
				if v[i] < 0x20 || v[i] > 0x7e {
					t.Fatalf("%s of %q holds byte %#x", name, raw, v[i])
				}
			}
		}
	})
}

// TestReturnPath: only a path of this origin comes back from the sign-in.
func TestReturnPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/":                            "/",
		"/crawls/1?x=2":                "/crawls/1?x=2",
		"//evil.example/":              "/",
		"/\\evil.example":              "/",
		"https://evil/":                "/",
		"":                             "/",
		"/auth/sign-in":                "/",
		"/a b":                         "/",
		"/ok\x00":                      "/",
		"/" + strings.Repeat("a", 600): "/",
	} {
		if got := returnPath(in); got != want {
			t.Errorf("returnPath(%q) = %q, want %q", in, got, want)
		}
	}
}
