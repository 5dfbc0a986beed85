package replay

import (
	"strings"
	"testing"
)

// TestParseDomain: the replay domain setting, with its defaults of scheme
// and port, and what it refuses.
func TestParseDomain(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		port int
		want string // the origin of label "l…", or the error's words
		bad  bool
	}{
		{"", 7070, "http://" + testLabel + ".replay.localhost:7070", false},
		{"replay.localhost", 0, "http://" + testLabel + ".replay.localhost", false},
		{"http://replay.localhost:9000", 7070, "http://" + testLabel + ".replay.localhost:9000", false},
		{"replay.example.org", 7070, "https://" + testLabel + ".replay.example.org", false},
		{"https://Replay.Example.org:8443", 7070, "https://" + testLabel + ".replay.example.org:8443", false},
		{"https://replay.example.org:443", 7070, "https://" + testLabel + ".replay.example.org", false},
		{"http://replay.example.org", 7070, "http://" + testLabel + ".replay.example.org", false},
		{"127.0.0.1", 7070, "an IP address", true},
		{"replay", 7070, "a bare name", true},
		{"ftp://replay.example.org", 7070, "http or https", true},
		{"https://replay.example.org/x", 7070, "want a domain", true},
		{"https://u@replay.example.org", 7070, "want a domain", true},
		{"replay_x.example.org", 7070, "is not a DNS label", true},
		{"replay..example.org", 7070, "is not a DNS label", true},
		{"-replay.example.org", 7070, "is not a DNS label", true},
		{"replay.example.org?x", 7070, "want a domain", true},
		{"*.replay.example.org", 7070, "", true},
	} {
		o, err := ParseDomain(tc.raw, tc.port)
		switch {
		case tc.bad && err == nil:
			t.Errorf("%q: accepted as %+v", tc.raw, o)
		case tc.bad && !strings.Contains(err.Error(), tc.want):
			t.Errorf("%q: %v, want %q", tc.raw, err, tc.want)
		case !tc.bad && err != nil:
			t.Errorf("%q: %v", tc.raw, err)
		case !tc.bad && o.Origin(testLabel) != tc.want:
			t.Errorf("%q: origin %s, want %s", tc.raw, o.Origin(testLabel), tc.want)
		}
	}
}

// TestOriginsMatch: a Host is a session's origin only as <label>.<domain>
// with a label NewLabel could make; any other name at or under the domain
// is the domain's, never the API's.
func TestOriginsMatch(t *testing.T) {
	o := Origins{Scheme: "http", Domain: "replay.localhost", Port: "7070"}
	fresh, err := NewLabel()
	if err != nil || !ValidLabel(fresh) {
		t.Fatalf("NewLabel: %q %v", fresh, err)
	}
	if again, _ := NewLabel(); again == fresh {
		t.Fatal("two labels are equal")
	}
	for _, tc := range []struct {
		host        string
		label       string
		under, isOK bool
	}{
		{fresh + ".replay.localhost:7070", fresh, true, true},
		{strings.ToUpper(fresh) + ".REPLAY.localhost", fresh, true, true},
		{fresh + ".replay.localhost.", fresh, true, true},
		{"replay.localhost:7070", "", true, false},
		{"x.replay.localhost", "", true, false},
		{"a." + fresh + ".replay.localhost", "", true, false},
		{fresh + "1.replay.localhost", "", true, false},
		{"127.0.0.1:7070", "", false, false},
		{"localhost", "", false, false},
		{"evilreplay.localhost", "", false, false},
		{fresh + ".replay.localhost.evil.example", "", false, false},
	} {
		label, under, ok := o.Match(tc.host)
		if label != tc.label || under != tc.under || ok != tc.isOK {
			t.Errorf("%s: %q %v %v, want %q %v %v", tc.host, label, under, ok, tc.label, tc.under, tc.isOK)
		}
	}
}

// FuzzOriginsMatch: whatever the Host, a label returned is one NewLabel
// could have made, and the origin built from it matches again.
func FuzzOriginsMatch(f *testing.F) {
	o := Origins{Scheme: "http", Domain: "replay.localhost", Port: "7070"}
	for _, s := range []string{"", testLabel + ".replay.localhost:7070", "replay.localhost", "[::1]:80", "\x00.replay.localhost", "a.b.replay.localhost"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		label, under, ok := o.Match(host)
		if ok && (!under || !ValidLabel(label)) {
			t.Fatalf("%q: %q %v %v", host, label, under, ok)
		}
		if ok {
			if l2, _, ok2 := o.Match(strings.TrimPrefix(o.Origin(label), "http://")); !ok2 || l2 != label {
				t.Fatalf("%q: origin %s does not match again", host, o.Origin(label))
			}
		}
	})
}

// TestSharesCookiesWith: which hosts are of the replay origins' site (a
// cookie one session's page sets for the site reaches them; clearing the
// site's cookies clears theirs).
func TestSharesCookiesWith(t *testing.T) {
	for _, tc := range []struct {
		domain, host string
		want         bool
	}{
		{"replay.localhost", "127.0.0.1", false},
		{"replay.localhost", "localhost", false},
		{"replay.localhost", "localhost:7070", false},
		{"replay.localhost", "[::1]:7070", false},
		{"replay.localhost", "replay.localhost", true},
		{"replay.localhost", testLabel + ".replay.localhost:7070", true},
		{"replay.example.org", "ledger.example.org", true},
		{"replay.example.org", "EXAMPLE.org.", true},
		{"replay.example.org", "ledger.example.net", false},
		{"replay.example.org", "notexample.org", false},
		{"example-replay.net", "ledger.example.org", false},
		{"replay.example.co.uk", "ledger.example.co.uk", true},
		{"replay.example.co.uk", "other.co.uk", false},
		// A public suffix (of the list's private section) as the domain:
		// each session is a site of its own.
		{"github.io", "ledger.github.io", false},
		{"replay.example.org", "", false},
	} {
		o := Origins{Scheme: "https", Domain: tc.domain}
		if got := o.SharesCookiesWith(tc.host); got != tc.want {
			t.Errorf("%s, %q: %v, want %v", tc.domain, tc.host, got, tc.want)
		}
	}
}
