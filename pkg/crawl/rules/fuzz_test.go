package rules

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"https://www.example.com/a?b=1#c", "HTTP://Example.COM:80", "http://127.1/", "http://0x7f.0.0.1:8080/",
		"http://[::ffff:1.2.3.4]/", "https://Bücher.example/日本?q='x'", `http:\\a.com\b\..\c`, "https://u:p@h/",
		"http://ex%41mple.com/%2e%2e/x", "mailto:x@y", "javascript:alert(1)", "", "/relative", "https:///",
		"http://a/b/../../..", "http://a:0080/?", "http://[::1]:65535/", "http://1.2.3.4.5/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := ParseURL(raw)
		if err != nil {
			if u != (URL{}) {
				t.Fatalf("error with a non-zero URL: %+v", u)
			}
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("scheme %q", u.Scheme)
		}
		if strings.ContainsAny(u.Normalized, "# \t\n\r") {
			t.Fatalf("normalised %q holds a fragment, space or control", u.Normalized)
		}
		for i := 0; i < len(u.Normalized); i++ {
			if c := u.Normalized[i]; c < 0x20 || c >= 0x7f {
				t.Fatalf("normalised %q holds byte %#x", u.Normalized, c)
			}
		}
		if u.Hostname == "" || (u.Host != u.Hostname && u.Host != u.Hostname+":"+u.Port) {
			t.Fatalf("host %q hostname %q port %q", u.Host, u.Hostname, u.Port)
		}
		if u.Origin != u.Scheme+"://"+u.Host {
			t.Fatalf("origin %q", u.Origin)
		}
		if !strings.HasPrefix(u.Normalized, u.Scheme+"://") {
			t.Fatalf("normalised %q", u.Normalized)
		}
		// The host is followed by the path's "/", which makes URL prefixes
		// safe to compare: every URL with this prefix has this origin.
		if !strings.Contains(u.Normalized, u.Host+"/") {
			t.Fatalf("normalised %q does not hold %q", u.Normalized, u.Host+"/")
		}
		again, err := ParseURL(u.Normalized)
		if err != nil {
			t.Fatalf("normalised %q does not re-parse: %v", u.Normalized, err)
		}
		if again != u {
			t.Fatalf("re-parse of %q gave %+v, want %+v", u.Normalized, again, u)
		}
		_ = u.Site()
	})
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`[{"follow":"same-origin"}]`,
		`[{"skip":"ads.example.com"},{"skip":"https://www.example.com/search"},{"follow":"same-site"},{"capture":"any"}]`,
		`[]`, `[{}]`, `[{"follow":"a","skip":"b"}]`, `[{"allow":"x"}]`, `[{"follow":1}]`, `null`, `{"follow":"any"}`,
		`[{"follow":"HTTPS://X.EXAMPLE:443/A#b"}]`, `[{"follow":"\u00e9"}]`, `[{"follow":"any"}] x`, `[{"follow":"any"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := ParseJSON(data)
		if err != nil {
			if _, ok := err.(*SchemaError); !ok {
				t.Fatalf("error %T is not a *SchemaError: %v", err, err)
			}
			if err.Error() == "" {
				t.Fatal("empty message")
			}
			return
		}
		if len(rules) < MinRules || len(rules) > MaxRules {
			t.Fatalf("%d rules accepted", len(rules))
		}
		if err := CheckShape(rules); err != nil {
			t.Fatalf("accepted rules fail CheckShape: %v", err)
		}
		// Marshal and parse back: the same rules.
		b, err := json.Marshal(rules)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		back, err := ParseJSON(b)
		if err != nil {
			// Invalid UTF-8 in the input becomes U+FFFD; that is still
			// a string of the same shape.
			t.Fatalf("re-parse of %s: %v", b, err)
		}
		if utf8.Valid(data) && !reflect.DeepEqual(back, rules) {
			t.Fatalf("round trip changed %v into %v", rules, back)
		}
		// Normal forms are stable; the checks never panic.
		s, bad := newSet(rules, []URL{{Normalized: "https://www.example.com/", Scheme: "https", Host: "www.example.com", Hostname: "www.example.com", Origin: "https://www.example.com"}})
		if len(bad) == 0 {
			pinned := s.Rules()
			s2, err := NewSet(pinned, s.Seeds())
			if err != nil || !reflect.DeepEqual(s2.Rules(), pinned) {
				t.Fatalf("pinned rules %v are not stable: %v %v", pinned, s2, err)
			}
		}
		_ = Check([]string{"https://www.example.com/"}, rules)
		_, _ = Validate(rules, s.Seeds())
	})
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{
		"follow:same-site", "skip:ads.example.com", "capture:https://www.example.com/search?q=a:b", "follow",
		"allow:any", "follow:", "skip:HTTPS://WWW.EXAMPLE.COM:443/#x", "skip:127.1", "skip:*.example.com",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		r, err := ParseSpec(spec)
		if err != nil {
			if _, ok := err.(*SchemaError); !ok {
				t.Fatalf("error %T is not a *SchemaError", err)
			}
			return
		}
		if r.String() != spec {
			t.Fatalf("String() = %q, want %q", r.String(), spec)
		}
		again, err := ParseSpec(r.String())
		if err != nil || again != r {
			t.Fatalf("re-parse gave %v, %v", again, err)
		}
		kind, norm, err := NormalizePattern(r.Pattern)
		if err != nil {
			if kind != "" {
				t.Fatalf("invalid pattern with kind %q", kind)
			}
			return
		}
		k2, n2, err := NormalizePattern(norm)
		if err != nil || k2 != kind || n2 != norm {
			t.Fatalf("normal form %q not stable: %q %q %v", norm, k2, n2, err)
		}
		if kind == KindURL {
			if _, err := ParseURL(norm); err != nil {
				t.Fatalf("URL pattern %q does not parse: %v", norm, err)
			}
		}
		// A valid rule through the JSON form comes back the same.
		n, _ := r.Normalized()
		b, err := json.Marshal([]Rule{n})
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseJSON(b)
		if utf8.ValidString(spec) && (err != nil || back[0] != n) {
			t.Fatalf("JSON round trip of %v gave %v, %v", n, back, err)
		}
		rep := Check([]string{"https://www.example.com/"}, []Rule{n})
		if len(rep.Rules) != 1 || rep.Rules[0].Kind != kind || rep.Rules[0].Pattern != norm {
			t.Fatalf("Check reports %+v for %v", rep.Rules, n)
		}
	})
}
