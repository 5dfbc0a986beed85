package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Rule
	}{
		{"default", `[{"follow":"same-origin"}]`, Default()},
		{"skips, then follow and capture", `[{"skip":"ads.example.com"},{"skip":"https://www.example.com/search"},{"follow":"same-site"},{"capture":"any"}]`,
			[]Rule{{Skip, "ads.example.com"}, {Skip, "https://www.example.com/search"}, {Follow, SameSite}, {Capture, Any}}},
		{"pattern kept as written", `[{"skip":"HTTPS://WWW.EXAMPLE.COM"}]`, []Rule{{Skip, "HTTPS://WWW.EXAMPLE.COM"}}},
		{"invalid pattern is not a shape error", `[{"follow":"not a pattern"}]`, []Rule{{Follow, "not a pattern"}}},
		{"whitespace", " [ { \"follow\" : \"any\" } ] \n", []Rule{{Follow, Any}}},
		{"32 rules", "[" + strings.Repeat(`{"skip":"a.example"},`, 31) + `{"follow":"any"}]`, append(repeatRule(Rule{Skip, "a.example"}, 31), Rule{Follow, Any})},
		{"2048 characters", `[{"skip":"` + strings.Repeat("é", 2048) + `"}]`, []Rule{{Skip, strings.Repeat("é", 2048)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseJSON([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseJSON: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseJSON = %v, want %v", got, tt.want)
			}
		})
	}
}

func repeatRule(r Rule, n int) []Rule {
	out := make([]Rule, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func TestParseJSONShapeErrors(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		index  int
		field  string
		reason string
	}{
		{"zero rules", `[]`, -1, "", "at least one rule"},
		{"33 rules", "[" + strings.Repeat(`{"follow":"any"},`, 32) + `{"follow":"any"}]`, 32, "", "at most 32"},
		{"two keys", `[{"follow":"any"},{"follow":"same-site","skip":"ads.example.com"}]`, 1, "", "more than one key"},
		{"duplicate key", `[{"follow":"any","follow":"same-site"}]`, 0, "", "more than one key"},
		{"empty object", `[{}]`, 0, "", "is empty"},
		{"unknown key", `[{"follow":"any"},{"allow":"same-site"}]`, 1, "allow", "unknown key"},
		{"key is case-sensitive", `[{"Follow":"any"}]`, 0, "Follow", "unknown key"},
		{"number value", `[{"follow":1}]`, 0, "follow", "must be a string, not a number"},
		{"null value", `[{"skip":null}]`, 0, "skip", "must be a string, not null"},
		{"array value", `[{"capture":["any"]}]`, 0, "capture", "must be a string, not an array"},
		{"object value", `[{"capture":{"any":true}}]`, 0, "capture", "must be a string, not an object"},
		{"boolean value", `[{"capture":true}]`, 0, "capture", "must be a string, not a boolean"},
		{"too long", `[{"follow":"any"},{"skip":"` + strings.Repeat("a", 2049) + `"}]`, 1, "skip", "2049 characters"},
		{"element not an object", `["follow:any"]`, 0, "", "must be an object"},
		{"element is an array", `[[{"follow":"any"}]]`, 0, "", "must be an object"},
		{"not an array", `{"follow":"any"}`, -1, "", "must be an array"},
		{"null", `null`, -1, "", "must be an array"},
		{"string", `"follow:any"`, -1, "", "must be an array"},
		{"empty input", ``, -1, "", "not valid JSON"},
		{"truncated", `[{"follow":"any"}`, -1, "", "not valid JSON"},
		{"truncated object", `[{"follow":`, 0, "follow", "not valid JSON"},
		{"trailing data", `[{"follow":"any"}] []`, -1, "", "after the array"},
		{"syntax error", `[{"follow" "any"}]`, 0, "follow", "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseJSON([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseJSON = %v, want an error", got)
			}
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("error %T (%v) is not a *SchemaError", err, err)
			}
			if se.Index != tt.index || se.Field != tt.field || !strings.Contains(se.Reason, tt.reason) {
				t.Errorf("error = {index %d field %q reason %q}, want {index %d field %q reason containing %q}",
					se.Index, se.Field, se.Reason, tt.index, tt.field, tt.reason)
			}
		})
	}
}

func TestSchemaErrorMessage(t *testing.T) {
	tests := []struct {
		err  SchemaError
		want string
	}{
		{SchemaError{Index: -1, Reason: "r"}, "rules: r"},
		{SchemaError{Index: 3, Reason: "r"}, "rules[3]: r"},
		{SchemaError{Index: 3, Field: "allow", Reason: "r"}, "rules[3].allow: r"},
		{SchemaError{Index: -1, Field: "allow", Reason: "r"}, "rules: allow: r"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in      string
		want    Rule
		wantErr string
	}{
		{in: "follow:same-site", want: Rule{Follow, SameSite}},
		{in: "skip:ads.example.com", want: Rule{Skip, "ads.example.com"}},
		{in: "skip:https://www.example.com/search?q=a:b", want: Rule{Skip, "https://www.example.com/search?q=a:b"}},
		{in: "capture:any", want: Rule{Capture, Any}},
		{in: "capture:", want: Rule{Capture, ""}},
		{in: "follow", wantErr: "action:pattern"},
		{in: "", wantErr: "action:pattern"},
		{in: "allow:any", wantErr: "unknown action"},
		{in: "Follow:any", wantErr: "unknown action"},
		{in: "follow:" + strings.Repeat("x", 2049), wantErr: "2049 characters"},
	}
	for _, tt := range tests {
		t.Run(truncate(tt.in, 40), func(t *testing.T) {
			got, err := ParseSpec(tt.in)
			if tt.wantErr != "" {
				var se *SchemaError
				if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSpec(%q) = %v, %v; want a *SchemaError saying %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSpec(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}
}

func TestNormalizePattern(t *testing.T) {
	tests := []struct {
		in      string
		kind    Kind
		norm    string
		wantErr string
	}{
		{in: "same-origin", kind: KindScope, norm: "same-origin"},
		{in: "same-host", kind: KindScope, norm: "same-host"},
		{in: "same-site", kind: KindScope, norm: "same-site"},
		{in: "any", kind: KindScope, norm: "any"},
		{in: "ads.example.com", kind: KindDomain, norm: "ads.example.com"},
		{in: "localhost", kind: KindDomain, norm: "localhost"},
		{in: "xn--bcher-kva.example", kind: KindDomain, norm: "xn--bcher-kva.example"},
		{in: "my_host.example", kind: KindDomain, norm: "my_host.example"},
		{in: "192.168.0.1", kind: KindDomain, norm: "192.168.0.1"},
		{in: "https://www.example.com/search", kind: KindURL, norm: "https://www.example.com/search"},
		{in: "HTTPS://WWW.Example.com:443", kind: KindURL, norm: "https://www.example.com/"},
		{in: "http://example.com:80/a#frag", kind: KindURL, norm: "http://example.com/a"},
		{in: "http://example.com:8080/a?x=1", kind: KindURL, norm: "http://example.com:8080/a?x=1"},
		{in: "", wantErr: "empty"},
		{in: "Same-Site", wantErr: "lowercase"},
		{in: "ADS.example.com", wantErr: "lowercase"},
		{in: "example.com:8080", wantErr: "port"},
		{in: "example.com/path", wantErr: "path"},
		{in: "*.example.com", wantErr: "wildcard"},
		{in: ".example.com", wantErr: "empty labels"},
		{in: "example.com.", wantErr: "empty labels"},
		{in: "a..example.com", wantErr: "empty labels"},
		{in: "0.0.1", wantErr: "IPv4"},
		{in: "127.1", wantErr: "IPv4"},
		{in: "example.123", wantErr: "IPv4"},
		{in: "ftp://example.com/", wantErr: "not http or https"},
		{in: "https://", wantErr: "no host"},
		{in: "mailto:x@example.com", wantErr: "no scheme"},
		{in: "bücher.example", wantErr: "not a scope word"},
		{in: "same site", wantErr: "not a scope word"},
		{in: " any", wantErr: "not a scope word"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			kind, norm, err := NormalizePattern(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NormalizePattern(%q) = %q, %q, %v; want an error saying %q", tt.in, kind, norm, err, tt.wantErr)
				}
				if (Rule{Follow, tt.in}).Kind() != "" {
					t.Errorf("Kind() of an invalid pattern is not empty")
				}
				return
			}
			if err != nil || kind != tt.kind || norm != tt.norm {
				t.Fatalf("NormalizePattern(%q) = %q, %q, %v; want %q, %q", tt.in, kind, norm, err, tt.kind, tt.norm)
			}
			if (Rule{Follow, tt.in}).Kind() != tt.kind {
				t.Errorf("Kind() = %q, want %q", (Rule{Follow, tt.in}).Kind(), tt.kind)
			}
			k2, n2, err := NormalizePattern(norm)
			if err != nil || k2 != kind || n2 != norm {
				t.Errorf("normal form %q is not stable: %q, %q, %v", norm, k2, n2, err)
			}
		})
	}
}

func TestRuleJSON(t *testing.T) {
	t.Run("marshal shape", func(t *testing.T) {
		b, err := json.Marshal([]Rule{{Skip, "ads.example.com"}, {Follow, SameSite}, {Capture, `https://example.com/"q"`}})
		if err != nil {
			t.Fatal(err)
		}
		want := `[{"skip":"ads.example.com"},{"follow":"same-site"},{"capture":"https://example.com/\"q\""}]`
		if string(b) != want {
			t.Errorf("Marshal = %s, want %s", b, want)
		}
	})
	t.Run("default", func(t *testing.T) {
		b, _ := json.Marshal(Default())
		if string(b) != `[{"follow":"same-origin"}]` {
			t.Errorf("Default() marshals to %s", b)
		}
	})
	t.Run("normalised and pinned", func(t *testing.T) {
		in := []Rule{{Skip, "HTTPS://WWW.EXAMPLE.COM:443/Search#x"}, {Follow, SameSite}}
		s, err := NewSet(in, []URL{mustURL(t, "https://www.example.com/")})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(s.Rules())
		want := `[{"skip":"https://www.example.com/Search"},{"follow":"same-site"}]`
		if string(b) != want {
			t.Errorf("pinned rules = %s, want %s", b, want)
		}
		back, err := ParseJSON(b)
		if err != nil || !reflect.DeepEqual(back, s.Rules()) {
			t.Errorf("ParseJSON(pinned) = %v, %v; want %v", back, err, s.Rules())
		}
	})
	t.Run("marshal refuses an unknown action", func(t *testing.T) {
		if _, err := json.Marshal(Rule{Action: "allow", Pattern: "any"}); err == nil {
			t.Error("no error")
		}
	})
	t.Run("unmarshal one rule", func(t *testing.T) {
		var r Rule
		if err := json.Unmarshal([]byte(`{"capture":"any"}`), &r); err != nil || r != (Rule{Capture, Any}) {
			t.Errorf("Unmarshal = %v, %v", r, err)
		}
	})
	for _, bad := range []string{`{"capture":"any","skip":"x"}`, `{"keep":"any"}`, `{"skip":3}`, `[]`, `{}`} {
		t.Run("unmarshal rejects "+bad, func(t *testing.T) {
			var r Rule
			err := json.Unmarshal([]byte(bad), &r)
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Errorf("Unmarshal(%s) = %v, %v; want a *SchemaError", bad, r, err)
			}
		})
	}
}

func TestCheckShape(t *testing.T) {
	tests := []struct {
		name  string
		rules []Rule
		index int // -2: no error
	}{
		{"one", Default(), -2},
		{"32", repeatRule(Rule{Follow, Any}, 32), -2},
		{"none", nil, -1},
		{"33", repeatRule(Rule{Follow, Any}, 33), 32},
		{"unknown action", []Rule{{Follow, Any}, {"allow", Any}}, 1},
		{"too long", []Rule{{Skip, strings.Repeat("a", 2049)}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckShape(tt.rules)
			if tt.index == -2 {
				if err != nil {
					t.Fatalf("CheckShape: %v", err)
				}
				return
			}
			var se *SchemaError
			if !errors.As(err, &se) || se.Index != tt.index {
				t.Errorf("CheckShape = %v; want a *SchemaError at index %d", err, tt.index)
			}
		})
	}
}

func ExampleParseSpec() {
	r, err := ParseSpec("skip:HTTPS://www.example.com:443/search")
	if err != nil {
		panic(err)
	}
	n, _ := r.Normalized()
	b, _ := json.Marshal(n)
	fmt.Println(string(b))
	// Output: {"skip":"https://www.example.com/search"}
}

func TestNormalizedPatternLength(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("é", 1000) // 1020 characters, 6020 once encoded
	rules, err := ParseJSON([]byte(`[{"follow":"` + long + `"}]`))
	if err != nil {
		t.Fatalf("ParseJSON: %v", err)
	}
	if _, _, err := NormalizePattern(rules[0].Pattern); err == nil || !strings.Contains(err.Error(), "normalised") {
		t.Fatalf("NormalizePattern = %v, want the normalised form refused", err)
	}
	ok := "https://example.com/" + strings.Repeat("é", 338) // 20 + 338*6 = 2048
	if _, n, err := NormalizePattern(ok); err != nil || len(n) != 2048 {
		t.Fatalf("NormalizePattern(2048 once encoded) = %d chars, %v", len(n), err)
	}
}
