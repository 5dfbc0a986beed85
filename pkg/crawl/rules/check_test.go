package rules

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestCoverage(t *testing.T) {
	www := []string{"https://www.example.com/"}
	tests := []struct {
		name    string
		earlier string // pattern of rule 1
		later   string // pattern of rule 2
		seeds   []string
		covered bool
	}{
		// any covers everything.
		{"any covers any", "any", "any", www, true},
		{"any covers same-site", "any", "same-site", www, true},
		{"any covers same-origin", "any", "same-origin", www, true},
		{"any covers a domain", "any", "ads.example.com", www, true},
		{"any covers a url", "any", "https://other.test/x", www, true},
		{"any covers with no seeds", "any", "example.com", nil, true},
		{"nothing else covers any (same-site)", "same-site", "any", www, false},
		{"nothing else covers any (domain)", "example.com", "any", www, false},
		{"nothing else covers any (url)", "https://www.example.com/", "any", www, false},

		// Scope words: itself, same-site ⊇ same-host ⊇ same-origin.
		{"same-origin covers itself", "same-origin", "same-origin", www, true},
		{"same-host covers itself", "same-host", "same-host", www, true},
		{"same-site covers itself", "same-site", "same-site", www, true},
		{"same-site covers same-host", "same-site", "same-host", www, true},
		{"same-site covers same-origin", "same-site", "same-origin", www, true},
		{"same-host covers same-origin", "same-host", "same-origin", www, true},
		{"same-origin does not cover same-host", "same-origin", "same-host", www, false},
		{"same-origin does not cover same-site", "same-origin", "same-site", www, false},
		{"same-host does not cover same-site", "same-host", "same-site", www, false},
		{"a domain does not cover a scope word", "example.com", "same-host", www, false},
		{"a domain does not cover same-origin", "www.example.com", "same-origin", www, false},
		{"a url does not cover a scope word", "https://www.example.com/", "same-origin", www, false},

		// Domains: itself and subdomains at a label boundary.
		{"domain covers itself", "example.com", "example.com", www, true},
		{"domain covers a subdomain", "example.com", "ads.example.com", www, true},
		{"domain covers a deep subdomain", "example.com", "a.b.example.com", www, true},
		{"domain label boundary", "ads.example.com", "badads.example.com", www, false},
		{"domain does not cover its parent", "ads.example.com", "example.com", www, false},
		{"domain does not cover a sibling", "ads.example.com", "img.example.com", www, false},
		{"a url does not cover a domain", "https://ads.example.com/", "ads.example.com", www, false},

		// same-site and domains: only when every seed has the domain's site.
		{"same-site covers a domain in the seed's site", "same-site", "ads.example.com", www, true},
		{"same-site covers the seed's site itself", "same-site", "example.com", www, true},
		{"same-site does not cover another site", "same-site", "ads.example.org", www, false},
		{"same-site does not cover a public suffix", "same-site", "com", www, false},
		{"same-site does not cover github.io", "same-site", "github.io", []string{"https://github.io/"}, false},
		{"same-site does not cover another github.io site", "same-site", "bar.github.io", []string{"https://foo.github.io/"}, false},
		{"same-site covers a github.io user's subdomain", "same-site", "x.foo.github.io", []string{"https://foo.github.io/"}, true},
		{"same-site, several seeds of one site", "same-site", "ads.example.com", []string{"https://www.example.com/", "http://shop.example.com:8080/"}, true},
		{"same-site, seeds of two sites", "same-site", "ads.example.com", []string{"https://www.example.com/", "https://www.example.org/"}, false},
		{"same-site, no seeds", "same-site", "ads.example.com", nil, false},
		{"same-site and an IP domain", "same-site", "192.168.0.1", []string{"http://192.168.0.1/"}, false},
		{"same-site and localhost", "same-site", "localhost", []string{"http://localhost:7070/"}, false},
		{"same-host does not cover a domain", "same-host", "www.example.com", www, false},
		{"same-origin does not cover a domain", "same-origin", "www.example.com", www, false},

		// URL prefixes.
		{"shorter prefix covers longer", "https://www.example.com/search", "https://www.example.com/search/advanced", www, true},
		{"prefix covers itself", "https://www.example.com/search", "https://www.example.com/search", www, true},
		{"prefix without boundary covers", "https://www.example.com/search", "https://www.example.com/searching", www, true},
		{"prefix with boundary does not cover", "https://www.example.com/search/", "https://www.example.com/searching", www, false},
		{"longer prefix does not cover shorter", "https://www.example.com/search/advanced", "https://www.example.com/search", www, false},
		{"prefix of another scheme", "http://www.example.com/", "https://www.example.com/a", www, false},
		{"prefix covers after normalisation", "HTTPS://WWW.EXAMPLE.COM:443/a", "https://www.example.com/a/b", www, true},
		{"same-origin covers a prefix on the seed's origin", "same-origin", "https://www.example.com/search", www, true},
		{"same-origin does not cover a prefix on another scheme", "same-origin", "http://www.example.com/search", www, false},
		{"same-origin does not cover a prefix on another port", "same-origin", "https://www.example.com:8443/", www, false},
		{"same-host covers a prefix on the seed's host", "same-host", "http://www.example.com/x", www, true},
		{"same-host does not cover a prefix on a subdomain", "same-host", "https://a.www.example.com/", www, false},
		{"same-site covers a prefix in the seed's site", "same-site", "https://blog.example.com/2024/", www, true},
		{"same-site does not cover a prefix on another site", "same-site", "https://example.org/", www, false},
		{"same-site covers a prefix when any seed's site matches", "same-site", "https://blog.example.org/", []string{"https://www.example.com/", "https://example.org/"}, true},
		{"same-origin covers a prefix of the second seed", "same-origin", "http://docs.example.org:8080/api", []string{"https://www.example.com/", "http://docs.example.org:8080/"}, true},
		{"scope covers no prefix without seeds", "same-origin", "https://www.example.com/", nil, false},
		{"domain covers a prefix on it", "example.com", "https://ads.example.com/x", www, true},
		{"domain covers a prefix on another port", "ads.example.com", "http://ads.example.com:8080/", www, true},
		{"domain does not cover a prefix across a label", "ads.example.com", "https://badads.example.com/", www, false},
		{"domain does not cover a prefix on the parent", "ads.example.com", "https://example.com/ads.example.com", www, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustSet(t, []Rule{{Skip, tt.earlier}, {Follow, tt.later}}, tt.seeds...)
			got := s.coveredBy(1)
			want := 0
			if tt.covered {
				want = 1
			}
			if got != want {
				t.Errorf("rule 2 %q after rule 1 %q (seeds %v): coveredBy = %d, want %d", tt.later, tt.earlier, tt.seeds, got, want)
			}
			// The claim must be sound: a covered rule never decides a URL.
			if tt.covered {
				for _, probe := range coverageProbes {
					u := mustURL(t, probe)
					if s.Decide(u).Rule == 2 {
						t.Errorf("rule 2 is claimed covered but decides %s", probe)
					}
				}
			}
		})
	}
}

// coverageProbes are URLs the soundness check in TestCoverage runs through a
// rule list claimed to have a dead rule.
var coverageProbes = []string{
	"https://www.example.com/", "https://www.example.com/search", "https://www.example.com/searching",
	"https://www.example.com/search/advanced", "http://www.example.com/x", "https://www.example.com:8443/",
	"https://example.com/", "https://ads.example.com/x", "https://a.b.example.com/", "http://ads.example.com:8080/",
	"https://blog.example.com/2024/", "https://badads.example.com/", "https://example.org/", "https://blog.example.org/",
	"http://docs.example.org:8080/api", "https://other.test/x", "https://foo.github.io/", "https://x.foo.github.io/",
	"https://bar.github.io/", "https://github.io/", "http://192.168.0.1/", "http://localhost:7070/",
}

func TestCoveredByIsTheFirst(t *testing.T) {
	s := mustSet(t, specs(t,
		"follow:https://www.example.com/a",
		"follow:example.com",
		"follow:same-site",
		"skip:https://www.example.com/a/b",
		"skip:ads.example.com",
		"capture:any",
		"skip:same-origin",
	), "https://www.example.com/")
	got := s.shadowed()
	// Rule 3 (same-site) is not covered by the domain example.com; rule 5 is
	// covered by 2 and 3, rule 7 by 3 and 6: the first is named.
	want := []Shadowed{{Rule: 4, CoveredBy: 1}, {Rule: 5, CoveredBy: 2}, {Rule: 7, CoveredBy: 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shadowed = %+v, want %+v", got, want)
	}
}

func TestValidateOrder(t *testing.T) {
	seeds := []URL{mustURL(t, "https://www.example.com/")}
	tests := []struct {
		name  string
		rules []Rule
		check func(error) bool
	}{
		{"shape first", []Rule{{Follow, "BAD PATTERN"}, {"allow", Any}}, func(err error) bool {
			var e *SchemaError
			return errors.As(err, &e) && e.Index == 1
		}},
		{"no rules is a shape error", nil, func(err error) bool {
			var e *SchemaError
			return errors.As(err, &e)
		}},
		{"invalid patterns before shadowing", specs(t, "follow:any", "skip:any", "skip:Bad"), func(err error) bool {
			var e *InvalidPatternsError
			return errors.As(err, &e) && len(e.Rules) == 1 && e.Rules[0].Rule == 3
		}},
		{"shadowing before seeds", specs(t, "skip:any", "follow:same-origin"), func(err error) bool {
			var e *ShadowedRulesError
			return errors.As(err, &e) && reflect.DeepEqual(e.Rules, []Shadowed{{2, 1}})
		}},
		{"seed skipped", specs(t, "skip:www.example.com", "follow:same-origin"), func(err error) bool {
			var e *UnfollowedSeedsError
			return errors.As(err, &e) && reflect.DeepEqual(e.Seeds, []string{"https://www.example.com/"})
		}},
		{"seed captured", specs(t, "capture:https://www.example.com/"), func(err error) bool {
			var e *UnfollowedSeedsError
			return errors.As(err, &e) && len(e.Seeds) == 1
		}},
		{"seed matched by no rule", specs(t, "follow:other.test"), func(err error) bool {
			var e *UnfollowedSeedsError
			return errors.As(err, &e) && len(e.Seeds) == 1
		}},
		{"ok", specs(t, "skip:ads.example.com", "skip:https://www.example.com/search", "follow:same-site", "capture:any"), func(err error) bool {
			return err == nil
		}},
		{"default ok", Default(), func(err error) bool { return err == nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Validate(tt.rules, seeds)
			if !tt.check(err) {
				t.Fatalf("Validate = %v", err)
			}
			if err == nil && (s == nil || len(s.Rules()) != len(tt.rules)) {
				t.Fatalf("Validate returned set %v", s)
			}
			if err != nil && s != nil {
				t.Fatalf("Validate returned a set with an error")
			}
		})
	}
	t.Run("unfollowed seeds listed in order, normalised", func(t *testing.T) {
		seeds := []URL{mustURL(t, "HTTPS://A.example.com/#x"), mustURL(t, "https://b.example.com/"), mustURL(t, "https://c.example.com/")}
		_, err := Validate(specs(t, "follow:b.example.com"), seeds)
		var e *UnfollowedSeedsError
		if !errors.As(err, &e) || !reflect.DeepEqual(e.Seeds, []string{"https://a.example.com/", "https://c.example.com/"}) {
			t.Errorf("Validate = %v", err)
		}
	})
}

func TestErrorBodies(t *testing.T) {
	tests := []struct {
		name string
		err  BodyError
		want string
	}{
		{"invalid patterns", &InvalidPatternsError{Rules: []InvalidPattern{{Rule: 2, Pattern: "Bad", Reason: "a hostname pattern must be lowercase"}}},
			`{"error":"invalid rule patterns","rules":[{"rule":2,"pattern":"Bad"}]}`},
		{"never match", &ShadowedRulesError{Rules: []Shadowed{{Rule: 2, CoveredBy: 1}, {Rule: 4, CoveredBy: 1}}},
			`{"error":"rules that can never match","rules":[{"rule":2,"coveredBy":1},{"rule":4,"coveredBy":1}]}`},
		{"seeds", &UnfollowedSeedsError{Seeds: []string{"https://www.example.com/"}},
			`{"error":"seeds the rules do not follow","seeds":["https://www.example.com/"]}`},
		{"invalid seeds", &InvalidSeedsError{Seeds: []string{"ftp://x/"}},
			`{"error":"every seed must be an http(s) URL"}`},
		{"empty lists are arrays", &ShadowedRulesError{}, `{"error":"rules that can never match","rules":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.err.Body())
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("body = %s, want %s", b, tt.want)
			}
			if tt.err.Error() == "" {
				t.Error("empty message")
			}
		})
	}
}

func TestParseSeeds(t *testing.T) {
	got, err := ParseSeeds([]string{"https://example.com#x", "https://example.com/"})
	if err != nil || len(got) != 2 || got[0] != got[1] {
		t.Errorf("ParseSeeds = %v, %v", got, err)
	}
	_, err = ParseSeeds([]string{"https://example.com/", "ftp://example.com/", "not a url"})
	var e *InvalidSeedsError
	if !errors.As(err, &e) || !reflect.DeepEqual(e.Seeds, []string{"ftp://example.com/", "not a url"}) {
		t.Errorf("ParseSeeds error = %v", err)
	}
}

func TestCheckSeedExample(t *testing.T) {
	// The example of GET /api/crawl-rules/check in the seed.
	rep := Check([]string{"https://www.example.com/"}, specs(t, "follow:same-site", "skip:ads.example.com"))
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seeds":[{"url":"https://www.example.com/","valid":true,"site":"example.com","followed":true}],` +
		`"rules":[{"rule":1,"action":"follow","kind":"scope","pattern":"same-site"},` +
		`{"rule":2,"action":"skip","kind":"domain","pattern":"ads.example.com","coveredBy":1}],"ok":false}`
	if string(b) != want {
		t.Errorf("report =\n%s\nwant\n%s", b, want)
	}
	var e *ShadowedRulesError
	if err := rep.Err(); !errors.As(err, &e) || !reflect.DeepEqual(e.Rules, []Shadowed{{2, 1}}) {
		t.Errorf("Err() = %v", err)
	}
}

func TestCheck(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		rep := Check([]string{"https://www.example.com/#top"}, specs(t, "skip:ads.example.com", "follow:same-site"))
		if !rep.OK || rep.Err() != nil {
			t.Fatalf("report not ok: %+v %v", rep, rep.Err())
		}
		if rep.Seeds[0].URL != "https://www.example.com/" || rep.Rules[0].Kind != KindDomain {
			t.Errorf("report = %+v", rep)
		}
	})
	t.Run("no rules means the default", func(t *testing.T) {
		rep := Check([]string{"https://www.example.com/"}, nil)
		want := []RuleReport{{Rule: 1, Action: Follow, Kind: KindScope, Pattern: SameOrigin}}
		if !rep.OK || !reflect.DeepEqual(rep.Rules, want) {
			t.Errorf("report = %+v", rep)
		}
	})
	t.Run("no seeds is not ok", func(t *testing.T) {
		rep := Check(nil, Default())
		if rep.OK {
			t.Errorf("report ok without seeds")
		}
	})
	t.Run("everything wrong at once", func(t *testing.T) {
		rep := Check(
			[]string{"mailto:x@example.com", "https://www.example.com/", "https://ads.example.com/"},
			[]Rule{{Follow, "HTTPS://WWW.EXAMPLE.COM"}, {Skip, "Ads.example.com"}, {Capture, "ads.example.com"}, {Follow, "same-origin"}, {"allow", "any"}, {Skip, strings.Repeat("a", 2049)}},
		)
		b, _ := json.Marshal(rep)
		if rep.OK {
			t.Fatalf("ok: %s", b)
		}
		if s := rep.Seeds[0]; s.Valid || s.Followed || s.Site != "" || s.URL != "mailto:x@example.com" || s.Error == "" {
			t.Errorf("invalid seed = %+v", s)
		}
		if s := rep.Seeds[1]; !s.Valid || !s.Followed || s.Site != "example.com" {
			t.Errorf("www seed = %+v", s)
		}
		if s := rep.Seeds[2]; !s.Valid || s.Followed {
			t.Errorf("captured seed = %+v", s)
		}
		wantRules := []RuleReport{
			{Rule: 1, Action: Follow, Kind: KindURL, Pattern: "https://www.example.com/"},
			{Rule: 2, Action: Skip, Pattern: "Ads.example.com", Error: "a hostname pattern must be lowercase"},
			{Rule: 3, Action: Capture, Kind: KindDomain, Pattern: "ads.example.com"},
			{Rule: 4, Action: Follow, Kind: KindScope, Pattern: SameOrigin},
			{Rule: 5, Action: "allow", Pattern: "any", Error: errUnknownAction.Error()},
			{Rule: 6, Action: Skip, Pattern: strings.Repeat("a", 2049), Error: "the pattern is 2049 characters long; at most 2048 are allowed"},
		}
		if !reflect.DeepEqual(rep.Rules, wantRules) {
			t.Errorf("rules =\n%+v\nwant\n%+v", rep.Rules, wantRules)
		}
		var e *InvalidSeedsError
		if err := rep.Err(); !errors.As(err, &e) {
			t.Errorf("Err() = %v, want the invalid seeds first", err)
		}
	})
	t.Run("Err order without invalid seeds", func(t *testing.T) {
		rep := Check([]string{"https://ads.example.com/"}, specs(t, "follow:Bad", "skip:any", "follow:same-origin"))
		var e *InvalidPatternsError
		if err := rep.Err(); !errors.As(err, &e) || e.Rules[0].Rule != 1 || e.Rules[0].Pattern != "Bad" {
			t.Errorf("Err() = %v", err)
		}
		if rep.Rules[2].CoveredBy != 2 {
			t.Errorf("shadowing not reported alongside: %+v", rep.Rules)
		}
		if rep.Seeds[0].Followed {
			t.Errorf("seed followed despite skip:any")
		}
	})
	t.Run("Err seeds last", func(t *testing.T) {
		rep := Check([]string{"https://ads.example.com/"}, specs(t, "skip:ads.example.com", "follow:any"))
		var e *UnfollowedSeedsError
		if err := rep.Err(); !errors.As(err, &e) || !reflect.DeepEqual(e.Seeds, []string{"https://ads.example.com/"}) {
			t.Errorf("Err() = %v", err)
		}
	})
}
