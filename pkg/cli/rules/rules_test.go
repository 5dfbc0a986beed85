package rules_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

func TestRulesCheckCLIAndEndpointAgree(t *testing.T) {
	t.Parallel()
	q := url.Values{
		"seed": {"https://www.example.com/", "ftp://x/"},
		"rule": {"follow:same-site", "skip:ads.example.com", "capture:https://WWW.example.com:443/search"},
		"url":  {"https://ads.example.com/a", "https://www.example.com/searching", "https://elsewhere.org/"},
	}
	args := []string{"rules", "check", "--json"}
	for _, s := range q["seed"] {
		args = append(args, "--seed", s)
	}
	for _, r := range q["rule"] {
		args = append(args, "--rule", r)
	}
	for _, u := range q["url"] {
		args = append(args, "--url", u)
	}
	out, _, code := clitest.Run(t, t.TempDir(), nil, args...)
	if code != cmdutil.ExitFailure {
		t.Errorf("exit %d, want 1 (an invalid seed and shadowed rules)", code)
	}

	srv := &api.Server{Identity: identity.Headers{}}
	req := httptest.NewRequest("GET", "/api/crawl-rules/check?"+q.Encode(), nil)
	req.Header.Set("X-Capture-ledger-Subject", "alice")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("endpoint %d %s", rec.Code, rec.Body)
	}
	if strings.TrimSpace(rec.Body.String()) != strings.TrimSpace(out) {
		t.Errorf("CLI and endpoint differ:\nCLI %s\nAPI %s", out, rec.Body)
	}
	var ans rules.DryRun
	if err := json.Unmarshal([]byte(out), &ans); err != nil {
		t.Fatal(err)
	}
	if ans.OK || ans.Rules[1].CoveredBy != 1 || ans.Rules[2].Pattern != "https://www.example.com/search" || ans.Rules[2].CoveredBy != 1 {
		t.Errorf("rules %+v", ans.Rules)
	}
	if ans.Seeds[0].Site != "example.com" || !ans.Seeds[0].Followed || ans.Seeds[1].Valid {
		t.Errorf("seeds %+v", ans.Seeds)
	}
	if ans.URLs[0].Rule != 1 || ans.URLs[2].Rule != 0 || ans.URLs[2].Action != "skip" {
		t.Errorf("urls %+v", ans.URLs)
	}

	// A rule that is not ACTION:PATTERN is the same field error: a usage
	// error naming the flag, and a 400 naming the query parameter.
	_, errs, code := clitest.Run(t, t.TempDir(), nil, "rules", "check", "--seed", "https://e/", "--rule", "follow:any", "--rule", "fetch:any")
	_, cliReason, ok := strings.Cut(errs, "ledgerctl: --rule #2 ")
	cliReason, _, _ = strings.Cut(cliReason, "\n")
	if code != cmdutil.ExitUsage || !ok || cliReason == "" {
		t.Errorf("bad rule: exit %d %s", code, errs)
	}
	rec = httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/crawl-rules/check?seed=https://e/&rule=follow:any&rule=fetch:any", nil))
	var bad struct{ Message string }
	_ = json.Unmarshal(rec.Body.Bytes(), &bad)
	if rec.Code != 400 || bad.Message != "querystring/rule/1 "+cliReason {
		t.Errorf("endpoint bad rule: %d %s, want 400 querystring/rule/1 %s", rec.Code, rec.Body, cliReason)
	}
	// A seed, rule or URL the ledger would not keep as sent (NUL, bytes
	// that are not UTF-8, an encoded lone surrogate) is refused naming it,
	// never echoed back rewritten: the CLI counts from 1, the query from 0.
	for _, tc := range []struct{ param, flag, value, reason string }{
		{"seed", "--seed", "https://e/\x00", "must NOT contain U+0000 (NUL)"},
		{"seed", "--seed", "https://e/\xff", "must be valid UTF-8"},
		{"url", "--url", "https://e/\xed\xa0\x80", "must be valid UTF-8"},
		{"rule", "--rule", "skip:\xc3\x28", "must be valid UTF-8"},
	} {
		args := []string{"rules", "check", "--seed", "https://e/", "--" + tc.param, tc.value}
		at := 0 // the value's place among its parameter's values
		if tc.param == "seed" {
			at = 1
		}
		if _, errs, code := clitest.Run(t, t.TempDir(), nil, args...); code != cmdutil.ExitUsage || !strings.Contains(errs, fmt.Sprintf("ledgerctl: %s #%d %s", tc.flag, at+1, tc.reason)) {
			t.Errorf("%s %q: exit %d %s", tc.flag, tc.value, code, errs)
		}
		rec = httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/crawl-rules/check?seed=https://e/&"+tc.param+"="+url.QueryEscape(tc.value), nil))
		_ = json.Unmarshal(rec.Body.Bytes(), &bad)
		want := fmt.Sprintf("querystring/%s/%d %s", tc.param, at, tc.reason)
		if rec.Code != 400 || bad.Message != want {
			t.Errorf("endpoint %s=%q: %d %s, want 400 %s", tc.param, tc.value, rec.Code, rec.Body, want)
		}
	}
	// Too many rules name the list.
	args = []string{"rules", "check", "--seed", "https://e/"}
	for range rules.MaxRules + 1 {
		args = append(args, "--rule", "follow:any")
	}
	if _, errs, code := clitest.Run(t, t.TempDir(), nil, args...); code != cmdutil.ExitUsage || !strings.Contains(errs, "--rule must NOT have more than") {
		t.Errorf("too many rules: exit %d %s", code, errs)
	}
	// No identity: 401 (after validation).
	rec = httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/crawl-rules/check?seed=https://e/", nil))
	if rec.Code != 401 {
		t.Errorf("endpoint without identity: %d", rec.Code)
	}
}
