package config

import (
	"strings"
	"testing"
)

// TestReplaySettings: the replay key is checked for length and never
// quoted; the API's URL must be a bare origin; the replay domain is a
// domain; the viewer origin of old is refused by name.
func TestReplaySettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		env   map[string]string
		want  string // "" for no error
		never string // must not be in the error
	}{
		{"a long key", map[string]string{"CAPTURE_LEDGER_REPLAY_KEY": strings.Repeat("k", 32)}, "", ""},
		{"a short key", map[string]string{"CAPTURE_LEDGER_REPLAY_KEY": "hunter2-secret"}, "CAPTURE_LEDGER_REPLAY_KEY: is 14 bytes; it must be at least 32", "hunter2"},
		{"origins", map[string]string{"CAPTURE_LEDGER_REPLAY_DOMAIN": "https://replay.example.org", "CAPTURE_LEDGER_API_URL": "http://127.0.0.1:7070/"}, "", ""},
		{"a replay domain", map[string]string{"CAPTURE_LEDGER_REPLAY_DOMAIN": "replay.example.org"}, "", ""},
		{"the old viewer origin", map[string]string{"CAPTURE_LEDGER_REPLAY_ORIGIN": "https://viewer.example"}, `CAPTURE_LEDGER_REPLAY_ORIGIN: is no longer read`, ""},
		{"an API URL with a query", map[string]string{"CAPTURE_LEDGER_API_URL": "https://ledger.example?x=1"}, "CAPTURE_LEDGER_API_URL=", ""},
		{"not a URL", map[string]string{"CAPTURE_LEDGER_API_URL": "ledger.example"}, "must be an http(s) URL", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadEnv(t.TempDir(), nil, func(name string) (string, bool) { v, ok := tc.env[name]; return v, ok })
			if err != nil {
				t.Fatal(err)
			}
			s, err := c.Settings()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			case tc.never != "" && err != nil && strings.Contains(err.Error(), tc.never):
				t.Fatalf("the error quotes the secret: %v", err)
			}
			if tc.want == "" && tc.env["CAPTURE_LEDGER_API_URL"] != "" && strings.HasSuffix(s.APIURL, "/") {
				t.Errorf("APIURL %q keeps its slash", s.APIURL)
			}
		})
	}
	c, _ := LoadEnv(t.TempDir(), nil, func(string) (string, bool) { return "", false })
	if s, _ := c.Settings(); s.ReplayDomain != "replay.localhost" || s.ReplayViewerDir != ".state/replay/replaywebpage-2.5.3" || s.ReplayKey != "" {
		t.Errorf("defaults: domain %q, viewer %q", s.ReplayDomain, s.ReplayViewerDir)
	}
}
