package capture

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestFromEnv(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

	c, err := FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Timeout != 60*time.Second || c.MaxBodyBytes != 20<<20 || c.MaxPageBytes != 200<<20 || c.MaxResources != 500 || c.AllowPrivate || c.ChromiumPath != "" {
		t.Errorf("defaults = %+v", c)
	}

	c, err = FromEnv(env(map[string]string{
		EnvTimeout: "1500", EnvMaxBody: " 1024 ", EnvMaxPage: "4096", EnvMaxResources: "7",
		EnvAllowPrivate: "1", EnvChromiumPath: "/opt/chromium/chrome",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Timeout != 1500*time.Millisecond || c.MaxBodyBytes != 1024 || c.MaxPageBytes != 4096 || c.MaxResources != 7 || !c.AllowPrivate || c.ChromiumPath != "/opt/chromium/chrome" {
		t.Errorf("set = %+v", c)
	}

	bad := map[string]string{
		EnvTimeout: "0", EnvMaxBody: "ten", EnvMaxPage: "-1", EnvMaxResources: "1e3", EnvAllowPrivate: "true",
	}
	_, err = FromEnv(env(bad))
	if err == nil {
		t.Fatal("bad values accepted")
	}
	for name, val := range bad {
		if !strings.Contains(err.Error(), name+`="`+val+`"`) {
			t.Errorf("error does not name %s=%q:\n%v", name, val, err)
		}
	}
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Errorf("error is not a *ConfigError: %T", err)
	}
	if !strings.Contains(err.Error(), `must be exactly "1"`) {
		t.Errorf("the ALLOW_PRIVATE error does not say what is accepted: %v", err)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 24, 0, 0, 0, 0, time.UTC)
	tests := map[string]time.Duration{
		"":                              0,
		"7":                             7 * time.Second,
		" 120 ":                         2 * time.Minute,
		"0":                             0,
		"-5":                            0,
		"999999999":                     24 * time.Hour,
		"soon":                          0,
		"Thu, 24 Sep 2026 00:01:00 GMT": time.Minute,
		"Wed, 23 Sep 2026 00:00:00 GMT": 0,
	}
	for in, want := range tests {
		if got := ParseRetryAfter(in, now); got != want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}
