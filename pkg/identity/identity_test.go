package identity

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"unicode"
)

func TestHeadersResolve(t *testing.T) {
	tests := []struct {
		name    string
		subject *string
		orgs    *string
		ok      bool
		want    Identity
	}{
		{"subject and orgs", ptr("bob"), ptr("acme"), true, Identity{Subject: "bob", Organizations: []string{"acme"}}},
		{"subject trimmed", ptr("  bob \t"), nil, true, Identity{Subject: "bob", Organizations: []string{}}},
		{"orgs trimmed, empties dropped", ptr("bob"), ptr(" acme , , contoso ,"), true, Identity{Subject: "bob", Organizations: []string{"acme", "contoso"}}},
		{"orgs absent", ptr("bob"), nil, true, Identity{Subject: "bob", Organizations: []string{}}},
		{"orgs empty", ptr("bob"), ptr(""), true, Identity{Subject: "bob", Organizations: []string{}}},
		{"orgs only commas", ptr("bob"), ptr(" , ,,"), true, Identity{Subject: "bob", Organizations: []string{}}},
		{"orgs order kept", ptr("bob"), ptr("zeta,alpha"), true, Identity{Subject: "bob", Organizations: []string{"zeta", "alpha"}}},
		{"subject absent", nil, ptr("acme"), false, Identity{}},
		{"subject empty", ptr(""), ptr("acme"), false, Identity{}},
		{"subject blank", ptr("   "), ptr("acme"), false, Identity{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			if tt.subject != nil {
				r.Header.Set(SubjectHeader, *tt.subject)
			}
			if tt.orgs != nil {
				r.Header.Set(OrganizationsHeader, *tt.orgs)
			}
			id, ok := Headers{}.Resolve(r)
			if ok != tt.ok || !reflect.DeepEqual(id, tt.want) {
				t.Fatalf("Resolve = %#v, %v; want %#v, %v", id, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestHeadersCanonicalName(t *testing.T) {
	// Header names are case-insensitive on the wire.
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header["X-Capture-Ledger-Subject"] = []string{"bob"}
	r.Header["X-Capture-Ledger-Organizations"] = []string{"acme"}
	if id, ok := (Headers{}).Resolve(r); !ok || id.Subject != "bob" || id.Organizations[0] != "acme" {
		t.Fatalf("Resolve = %+v, %v", id, ok)
	}
}

func TestDenyResolve(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set(SubjectHeader, "bob")
	r.Header.Set(OrganizationsHeader, "acme")
	r.Header.Set("Authorization", "Bearer a.b.c")
	if id, ok := (Deny{}).Resolve(r); ok || !reflect.DeepEqual(id, Identity{}) {
		t.Fatalf("Deny resolved %+v", id)
	}
}

func TestSelect(t *testing.T) {
	devRequest := httptest.NewRequest(http.MethodGet, "/", nil)
	devRequest.Header.Set(SubjectHeader, "bob")
	tests := []struct {
		name     string
		opts     Options
		mode     Mode
		devWorks bool
	}{
		{"issuer wins over dev identity", Options{OIDCIssuer: "http://127.0.0.1:9099", DevIdentity: "1"}, ModeJWT, false},
		{"issuer alone", Options{OIDCIssuer: "https://idp.example"}, ModeJWT, false},
		{"dev identity 1", Options{DevIdentity: "1"}, ModeHeader, true},
		{"dev identity true does not count", Options{DevIdentity: "true"}, ModeDeny, false},
		{"dev identity padded does not count", Options{DevIdentity: " 1"}, ModeDeny, false},
		{"dev identity 0", Options{DevIdentity: "0"}, ModeDeny, false},
		{"nothing", Options{}, ModeDeny, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, mode := Select(tt.opts)
			if mode != tt.mode {
				t.Fatalf("mode = %s, want %s", mode, tt.mode)
			}
			switch r := res.(type) {
			case *JWT:
				if mode != ModeJWT || r.Issuer() != tt.opts.OIDCIssuer || r.audience != DefaultAudience {
					t.Fatalf("JWT resolver %+v for mode %s", r, mode)
				}
			case Headers:
				if mode != ModeHeader {
					t.Fatalf("Headers for mode %s", mode)
				}
			case Deny:
				if mode != ModeDeny {
					t.Fatalf("Deny for mode %s", mode)
				}
			default:
				t.Fatalf("unexpected resolver %T", res)
			}
			if _, ok := res.Resolve(devRequest); ok != tt.devWorks {
				t.Fatalf("dev header resolved = %v, want %v", ok, tt.devWorks)
			}
		})
	}
	res, _ := Select(Options{OIDCIssuer: "https://idp.example", OIDCAudience: "custom"})
	if got := res.(*JWT).audience; got != "custom" {
		t.Fatalf("audience = %q", got)
	}
}

func TestStartupNotes(t *testing.T) {
	const (
		headerWarn  = "CAPTURE_LEDGER_DEV_IDENTITY=1 — callers are trusted on the X-Capture-ledger-Subject header. Never enable this outside local development."
		denyWarn    = "No identity is configured — every request is refused (401). Set CAPTURE_LEDGER_OIDC_ISSUER (JWT) or CAPTURE_LEDGER_DEV_IDENTITY=1 (dev header)"
		ignoredInfo = "CAPTURE_LEDGER_DEV_IDENTITY=1 is ignored — CAPTURE_LEDGER_OIDC_ISSUER takes precedence"
		headerCrawl = "Crawl level reports are identified by the X-Capture-ledger-Subject header, not by the flow's Bearer JWT: a report is accepted when the header names the crawl's requester, or a submitter of its organization listed in X-Capture-ledger-Organizations; a report with only a Bearer JWT is refused (401). Set CAPTURE_LEDGER_OIDC_ISSUER"
	)
	warn := func(m string) Note { return Note{Level: slog.LevelWarn, Message: m} }
	info := func(m string) Note { return Note{Level: slog.LevelInfo, Message: m} }
	tests := []struct {
		name string
		in   Startup
		want []Note
	}{
		{"header mode on loopback, no crawls",
			Startup{Mode: ModeHeader, DevIdentity: true, Host: "127.0.0.1", Port: 7070},
			[]Note{warn(headerWarn), info("Archive API listening on 127.0.0.1:7070 — identity: dev header; crawl level reports: off")}},
		{"deny mode",
			Startup{Mode: ModeDeny, Host: "127.0.0.1", Port: 7070},
			[]Note{warn(denyWarn), info("Archive API listening on 127.0.0.1:7070 — identity: none; crawl level reports: off")}},
		{"deny mode with crawls on 0.0.0.0",
			Startup{Mode: ModeDeny, Host: "0.0.0.0", Port: 7070, Crawls: true, LevelReports: true},
			[]Note{warn(denyWarn),
				warn("Crawl level reports will be refused (401): the flow reports with a Bearer JWT, but identity is none. Set CAPTURE_LEDGER_OIDC_ISSUER"),
				info("Archive API listening on 0.0.0.0:7070 — identity: none; crawl level reports: blocked")}},
		{"jwt with dev identity, crawls reachable",
			Startup{Mode: ModeJWT, Issuer: "http://127.0.0.1:9099", DevIdentity: true, Host: "0.0.0.0", Port: 8080, Crawls: true, LevelReports: true},
			[]Note{info(ignoredInfo), info("Archive API listening on 0.0.0.0:8080 — identity: JWT (http://127.0.0.1:9099); crawl level reports: ready")}},
		{"jwt on loopback with crawls",
			Startup{Mode: ModeJWT, Issuer: "https://idp.example", Host: "127.0.0.1", Port: 7070, Crawls: true, LevelReports: true},
			[]Note{warn("Containers cannot reach this API: it listens on 127.0.0.1, and crawl level reports come from containers. Set CAPTURE_LEDGER_API_HOST=0.0.0.0"),
				info("Archive API listening on 127.0.0.1:7070 — identity: JWT (https://idp.example); crawl level reports: blocked")}},
		{"header mode on 0.0.0.0 with crawls",
			Startup{Mode: ModeHeader, DevIdentity: true, Host: "0.0.0.0", Port: 7070, Crawls: true, LevelReports: true},
			[]Note{warn(headerWarn),
				warn("The dev header is trusted on 0.0.0.0:7070 (--insecure-dev-identity-on-network) — anyone who can reach this port can act as any user. Set CAPTURE_LEDGER_API_HOST=127.0.0.1, or keep CAPTURE_LEDGER_OIDC_ISSUER (the console takes a token)"),
				warn(headerCrawl),
				info("Archive API listening on 0.0.0.0:7070 — identity: dev header; crawl level reports: blocked")}},
		{"header mode on localhost with crawls",
			Startup{Mode: ModeHeader, DevIdentity: true, Host: "localhost", Port: 7070, Crawls: true, LevelReports: true},
			[]Note{warn(headerWarn),
				warn("Containers cannot reach this API: it listens on localhost, and crawl level reports come from containers. Set CAPTURE_LEDGER_API_HOST=0.0.0.0 (with the dev header, serve then also needs --insecure-dev-identity-on-network)"),
				warn(headerCrawl),
				info("Archive API listening on localhost:7070 — identity: dev header; crawl level reports: blocked")}},
		{"jwt on ::1 without crawls",
			Startup{Mode: ModeJWT, Issuer: "https://idp.example", Host: "::1", Port: 7070},
			[]Note{info("Archive API listening on ::1:7070 — identity: JWT (https://idp.example); crawl level reports: off")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StartupNotes(tt.in)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d notes, want %d:\n%s", len(got), len(tt.want), dumpNotes(got))
			}
			for i := range got {
				if got[i].Level != tt.want[i].Level || got[i].Message != tt.want[i].Message {
					t.Fatalf("note %d = %v %q\nwant %v %q", i, got[i].Level, got[i].Message, tt.want[i].Level, tt.want[i].Message)
				}
				if i < len(got)-1 && got[i].Attrs != nil {
					t.Fatalf("note %d has attrs", i)
				}
			}
		})
	}
}

func TestCheckDevListen(t *testing.T) {
	for _, tc := range []struct {
		mode    Mode
		host    string
		allow   bool
		refused bool
	}{
		{ModeHeader, "0.0.0.0", false, true},
		{ModeHeader, "192.168.1.10", false, true},
		{ModeHeader, "::", false, true},
		{ModeHeader, "127.0.0.2", false, true}, // not one of the three loopback names
		{ModeHeader, "0.0.0.0", true, false},   // the flag lifts the refusal
		{ModeHeader, "127.0.0.1", false, false},
		{ModeHeader, "localhost", false, false},
		{ModeHeader, "::1", false, false},
		{ModeJWT, "0.0.0.0", false, false},
		{ModeDeny, "0.0.0.0", false, false},
	} {
		err := CheckDevListen(tc.mode, tc.host, tc.allow)
		if (err != nil) != tc.refused {
			t.Errorf("CheckDevListen(%s, %q, %v) = %v", tc.mode, tc.host, tc.allow, err)
		}
		if err != nil && (!strings.Contains(err.Error(), `not "`+tc.host+`"`) || !strings.Contains(err.Error(), "--insecure-dev-identity-on-network")) {
			t.Errorf("unclear refusal: %v", err)
		}
	}
}

func TestStartupNotesAttrs(t *testing.T) {
	attrs := func(s Startup) map[string]any {
		notes := StartupNotes(s)
		m := map[string]any{}
		for _, a := range notes[len(notes)-1].Attrs {
			m[a.Key] = a.Value.Any()
		}
		return m
	}
	got := attrs(Startup{Mode: ModeJWT, Issuer: "https://idp.example", Host: "0.0.0.0", Port: 7070, Crawls: true, LevelReports: true})
	want := map[string]any{"host": "0.0.0.0", "port": int64(7070), "identity": "jwt", "issuer": "https://idp.example", "crawls": true, "crawlLevelReports": "ready"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("attrs = %v, want %v", got, want)
	}
	got = attrs(Startup{Mode: ModeHeader, Host: "127.0.0.1", Port: 7070})
	if _, has := got["issuer"]; has || got["identity"] != "header" || got["crawlLevelReports"] != "off" {
		t.Fatalf("attrs = %v", got)
	}
	// The embedded runner: crawls are served, no level report comes over
	// HTTP, and no warning about containers is given.
	emb := Startup{Mode: ModeHeader, DevIdentity: true, Host: "127.0.0.1", Port: 7070, Crawls: true}
	if got = attrs(emb); got["crawls"] != true || got["crawlLevelReports"] != "off" {
		t.Fatalf("embedded runner: attrs = %v", got)
	}
	if n := StartupNotes(emb); len(n) != 2 {
		t.Fatalf("embedded runner: notes:\n%s", dumpNotes(n))
	}
	if got = attrs(Startup{Mode: ModeHeader, Host: "127.0.0.1", Port: 7070}); got["crawls"] != false {
		t.Fatalf("no runner: attrs = %v", got)
	}
}

func dumpNotes(notes []Note) string {
	var b strings.Builder
	for _, n := range notes {
		b.WriteString(n.Level.String() + " " + n.Message + "\n")
	}
	return b.String()
}

func ptr(s string) *string { return &s }

func FuzzOrganizationsHeader(f *testing.F) {
	for _, s := range []string{"", "acme", " acme , , contoso ,", ",,,", " ", "a,b,c", "\tacme\n,x", "ümlaut, 組織 ", "\u00a0acme\u00a0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		orgs := ParseOrganizations(v)
		if orgs == nil {
			t.Fatal("nil organizations")
		}
		nonBlank := 0
		for part := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(part) != "" {
				nonBlank++
			}
		}
		if len(orgs) != nonBlank {
			t.Fatalf("%q: %d organizations, want %d", v, len(orgs), nonBlank)
		}
		for _, o := range orgs {
			if o == "" || strings.Contains(o, ",") || strings.TrimSpace(o) != o {
				t.Fatalf("%q: bad entry %q", v, o)
			}
			if r := []rune(o); unicode.IsSpace(r[0]) || unicode.IsSpace(r[len(r)-1]) {
				t.Fatalf("%q: untrimmed entry %q", v, o)
			}
			if !strings.Contains(v, o) {
				t.Fatalf("%q: entry %q not in the input", v, o)
			}
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set(SubjectHeader, "bob")
		r.Header.Set(OrganizationsHeader, v)
		id, ok := Headers{}.Resolve(r)
		want := printable(v) && CheckIdentity(Identity{Subject: "bob", Organizations: orgs}) == nil
		if ok != want || (ok && !reflect.DeepEqual(id.Organizations, orgs)) {
			t.Fatalf("%q: Resolve = %+v %v, want ok %v", v, id, ok, want)
		}
	})
}
