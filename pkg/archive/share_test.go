package archive_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

func TestParseShareDuration(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	max := archive.MaxShareDuration
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"72h", 72 * time.Hour, ""},
		{"90m", 90 * time.Minute, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"3600s", time.Hour, ""},
		{"7d", 7 * day, ""},
		{"7d12h", 7*day + 12*time.Hour, ""},
		{"1d1h1m1s", day + time.Hour + time.Minute + time.Second, ""},
		{"90d", 90 * day, ""},
		{"2160h", 90 * day, ""},
		{"007h", 7 * time.Hour, ""},
		{"", 0, "is required"},
		{"0h", 0, "must be positive"},
		{"0d0s", 0, "must be positive"},
		{"-1h", 0, "must be positive"},
		{"91d", 0, "longer than the maximum of 90 days"},
		{"2161h", 0, "longer than the maximum of 90 days"},
		{"90d1s", 0, "longer than the maximum of 90 days"},
		{"99999999999999999999d", 0, "longer than the maximum"},
		{"9223372036854775807s", 0, "longer than the maximum"},
		{"1.5h", 0, "is not a duration"},
		{"72", 0, "is not a duration"},
		{"h", 0, "is not a duration"},
		{"1h1h", 0, "is not a duration"},
		{"1m2h", 0, "is not a duration"},
		{"1ms", 0, "is not a duration"},
		{"1w", 0, "is not a duration"},
		{"+1h", 0, "is not a duration"},
		{" 1h", 0, "is not a duration"},
		{"1h ", 0, "is not a duration"},
		{"1H", 0, "is not a duration"},
		{"１h", 0, "is not a duration"},
		{"1h\x00", 0, "is not a duration"},
		{"\xff", 0, "is not a duration"},
		{"forever", 0, "is not a duration"},
	} {
		got, err := archive.ParseShareDuration(tc.in, max)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%q: got %v %v, want %v", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: got %v %v, want an error saying %q", tc.in, got, err, tc.err)
		case tc.err != "" && !fixedReasons()[err.Error()]:
			t.Errorf("%q: the error is not one of the fixed reasons (it must not repeat the value): %v", tc.in, err)
		}
	}
	// Another cap is another bound.
	if _, err := archive.ParseShareDuration("2h", time.Hour); err == nil || !strings.Contains(err.Error(), "maximum of 1h") {
		t.Errorf("2h under a 1h cap: %v", err)
	}
}

func TestFormatDurationReadsBack(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		time.Hour: "1h", 72 * time.Hour: "72h", 90 * time.Minute: "1h30m", 45 * time.Second: "45s",
		time.Hour + time.Second: "1h1s", archive.MaxShareDuration: "2160h",
	} {
		if got := archive.FormatDuration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
		if back, err := archive.ParseShareDuration(archive.FormatDuration(d), archive.MaxShareDuration); err != nil || back != d {
			t.Errorf("%v reads back as %v %v", d, back, err)
		}
	}
}

// fixedReasons are every error ParseShareDuration gives under the default
// cap: whatever the input, one of these (nothing of the value is repeated).
func fixedReasons() map[string]bool {
	out := map[string]bool{}
	for _, s := range []string{"", "0s", "91d", "x"} {
		_, err := archive.ParseShareDuration(s, archive.MaxShareDuration)
		out[err.Error()] = true
	}
	return out
}

// FuzzParseShareDuration: any input is a positive duration within the cap
// in whole seconds that FormatDuration writes back to the same value, or one
// of the fixed errors (it does not repeat the input).
func FuzzParseShareDuration(f *testing.F) {
	for _, s := range []string{"72h", "7d12h", "1h30m", "90d", "91d", "0s", "-1h", "1.5h", "1h1h", "9999999999999999999999d", "\x00", "d", "1d-1h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := archive.ParseShareDuration(s, archive.MaxShareDuration)
		if err != nil {
			if d != 0 {
				t.Fatalf("%q: error %v with a duration %v", s, err, d)
			}
			if !fixedReasons()[err.Error()] {
				t.Fatalf("%q: an error that is not one of the fixed reasons: %v", s, err)
			}
			return
		}
		if d <= 0 || d > archive.MaxShareDuration || d%time.Second != 0 {
			t.Fatalf("%q: accepted %v", s, d)
		}
		if back, err := archive.ParseShareDuration(archive.FormatDuration(d), archive.MaxShareDuration); err != nil || back != d {
			t.Fatalf("%q = %v writes back as %q = %v %v", s, d, archive.FormatDuration(d), back, err)
		}
	})
}

func TestShareRequestParse(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name  string
		req   archive.ShareRequest
		field string
		want  string // the reason, or the grantee when field is ""
	}{
		{"user", archive.ShareRequest{User: str("carol"), Duration: "72h"}, "", "user carol"},
		{"organization", archive.ShareRequest{Organization: str("partner"), Duration: "1h"}, "", "organization partner"},
		{"neither", archive.ShareRequest{Duration: "1h"}, "user", "is required"},
		{"both", archive.ShareRequest{User: str("carol"), Organization: str("partner"), Duration: "1h"}, "user", "both given"},
		{"empty user", archive.ShareRequest{User: str(""), Duration: "1h"}, "user", "is empty"},
		{"user with a colon", archive.ShareRequest{User: str("user:carol"), Duration: "1h"}, "user", `contains ':'`},
		{"user with a hash", archive.ShareRequest{User: str("carol#member"), Duration: "1h"}, "user", `contains '#'`},
		{"wildcard", archive.ShareRequest{User: str("*"), Duration: "1h"}, "user", "wildcard"},
		{"NUL", archive.ShareRequest{User: str("car\x00ol"), Duration: "1h"}, "user", "control character"},
		{"invalid UTF-8", archive.ShareRequest{User: str("car\xffol"), Duration: "1h"}, "user", "not valid UTF-8"},
		{"space", archive.ShareRequest{User: str("carol smith"), Duration: "1h"}, "user", "whitespace"},
		{"too long", archive.ShareRequest{User: str(strings.Repeat("c", 256)), Duration: "1h"}, "user", "longer than 255 bytes"},
		{"empty organization", archive.ShareRequest{Organization: str(""), Duration: "1h"}, "organization", "is empty"},
		{"organization with a hash", archive.ShareRequest{Organization: str("partner#member"), Duration: "1h"}, "organization", `contains '#'`},
		{"no duration", archive.ShareRequest{User: str("carol")}, "duration", "is required"},
		{"over the cap", archive.ShareRequest{User: str("carol"), Duration: "91d"}, "duration", "maximum of 90 days"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, d, err := tc.req.Parse(archive.MaxShareDuration)
			var fe *ledger.FieldError
			if tc.field == "" {
				if err != nil || g.String() != tc.want || d <= 0 {
					t.Errorf("got %v %v %v, want %s", g, d, err, tc.want)
				}
				return
			}
			if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Reason, tc.want) {
				t.Errorf("got %v, want field %s saying %q", err, tc.field, tc.want)
			}
			if err != nil && tc.req.User != nil && len(*tc.req.User) > 1 && strings.Contains(err.Error(), *tc.req.User) {
				t.Errorf("the error repeats the value: %v", err)
			}
		})
	}
}
