package crawl_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

const task = "7F1E2D3C-4B5A-4968-8776-655443322110"

// TestLevelReportDigest: two spellings of one report (URL case, default
// port and fragment, task id case, time zone) have one digest; any change
// of what the report says changes it.
func TestLevelReportDigest(t *testing.T) {
	t.Parallel()
	a := crawl.LevelReport{Depth: 1, Results: []crawl.PageReport{{URL: "https://a.example/x#f", Status: crawl.StatusCaptured, TaskID: task,
		ManifestLocation: "s3://b/k", FinishedAt: time.Date(2026, 10, 1, 18, 0, 1, 0, time.FixedZone("JST", 9*3600))}}}
	b := crawl.LevelReport{Depth: 1, Results: []crawl.PageReport{{URL: "HTTPS://A.EXAMPLE:443/x", Status: crawl.StatusCaptured, TaskID: strings.ToLower(task),
		ManifestLocation: "s3://b/k", FinishedAt: time.Date(2026, 10, 1, 9, 0, 1, 0, time.UTC)}}}
	if a.Digest() != b.Digest() {
		t.Errorf("two spellings of one report digest differently")
	}
	n, err := a.Normalize()
	if err != nil || n.Digest() != a.Digest() || n.Results[0].URL != "https://a.example/x" || n.Results[0].TaskID != strings.ToLower(task) ||
		n.Results[0].FinishedAt.Location() != time.UTC {
		t.Errorf("normal form %+v %v", n.LevelReport, err)
	}
	for _, change := range []func(r *crawl.LevelReport){
		func(r *crawl.LevelReport) { r.Depth = 2 },
		func(r *crawl.LevelReport) { r.Results[0].Status = crawl.StatusFailed },
		func(r *crawl.LevelReport) { r.Results[0].SkipReason = "x" },
		func(r *crawl.LevelReport) { r.Results[0].FinalURL = "https://b.example/" },
		func(r *crawl.LevelReport) { r.Results[0].ManifestLocation = "s3://b/k2" },
		func(r *crawl.LevelReport) { r.Results[0].FinishedAt = r.Results[0].FinishedAt.Add(time.Millisecond) },
		func(r *crawl.LevelReport) {
			r.Results = append(r.Results, crawl.PageReport{URL: "https://c.example/", Status: "skipped"})
		},
	} {
		c := crawl.LevelReport{Depth: a.Depth, Results: append([]crawl.PageReport(nil), a.Results...)}
		change(&c)
		if c.Digest() == a.Digest() {
			t.Errorf("a changed report %+v has the same digest", c)
		}
	}
}

// TestLevelReportFields: a report built in code (an embedded runner's) is
// checked like one read from a body, every refusal naming its field.
func TestLevelReportFields(t *testing.T) {
	t.Parallel()
	ok := crawl.PageReport{URL: "https://a.example/", Status: crawl.StatusSkipped}
	for _, tc := range []struct {
		name  string
		rep   crawl.LevelReport
		field string
	}{
		{"negative depth", crawl.LevelReport{Depth: -1}, crawl.FieldDepth},
		{"NUL in a skip reason", crawl.LevelReport{Results: []crawl.PageReport{ok, {URL: "https://b.example/", Status: crawl.StatusFailed, SkipReason: "a\x00"}}}, "results/1/skipReason"},
		{"not UTF-8 in a final URL", crawl.LevelReport{Results: []crawl.PageReport{{URL: "https://b.example/", Status: crawl.StatusCaptured, FinalURL: "https://b.example/\xff"}}}, "results/0/finalUrl"},
		{"not a URL", crawl.LevelReport{Results: []crawl.PageReport{{URL: "mailto:x@y", Status: crawl.StatusSkipped}}}, "results/0/url"},
		{"a status", crawl.LevelReport{Results: []crawl.PageReport{{URL: "https://b.example/", Status: "done"}}}, "results/0/status"},
		{"a task id", crawl.LevelReport{Results: []crawl.PageReport{{URL: "https://b.example/", Status: crawl.StatusFailed, TaskID: "t", ManifestError: "x"}}}, "results/0/taskId"},
		{"a task without an outcome", crawl.LevelReport{Results: []crawl.PageReport{{URL: "https://b.example/", Status: crawl.StatusFailed, TaskID: task}}}, "results/0"},
		{"a manifest without a task", crawl.LevelReport{Results: []crawl.PageReport{{URL: "https://b.example/", Status: crawl.StatusFailed, ManifestLocation: "s3://b/k"}}}, "results/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rep.Validate()
			var fe *ledger.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, crawl.ErrInvalid) {
				t.Errorf("%v, want a field error at %s", err, tc.field)
			}
		})
	}
	// A page twice: the error names both places, and the first.
	err := crawl.LevelReport{Results: []crawl.PageReport{ok, {URL: "https://A.example#x", Status: crawl.StatusSkipped}}}.Validate()
	var fe *ledger.FieldError
	var rep *crawl.RepeatedPageError
	if !errors.As(err, &fe) || fe.Field != "results/1/url" || !errors.As(err, &rep) || rep.First != 0 || rep.URL != "https://a.example/" ||
		!errors.Is(err, crawl.ErrInvalid) || err.Error() != "results/1/url repeats results/0/url (https://a.example/): a page is reported once" {
		t.Errorf("a page twice: %v", err)
	}
}

// TestReportMadeByHand: a Report not made by Normalize is checked all the
// same (before anything is read: this service has no store).
func TestReportMadeByHand(t *testing.T) {
	t.Parallel()
	svc := &crawl.Service{}
	forged := crawl.Report{LevelReport: crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{{URL: "javascript:alert(1)", Status: crawl.StatusCaptured}}}}
	_, err := svc.ReportLevel(context.Background(), crawl.Caller{Subject: "alice", Orgs: []string{"acme"}}, "5b0a3c1e-0000-4000-8000-000000000000", forged)
	var fe *ledger.FieldError
	if !errors.As(err, &fe) || fe.Field != "results/0/url" {
		t.Errorf("a forged report: %v, want a field error at results/0/url", err)
	}
	in := crawl.LevelOutcomes{Depth: 0, Pages: []crawl.PageOutcome{{PageReport: forged.Results[0]}}}
	if _, _, err := svc.AdmitLevelOutcomes(context.Background(), "5b0a3c1e-0000-4000-8000-000000000000", in); !errors.As(err, &fe) || fe.Field != "results/0/url" {
		t.Errorf("a forged report admitted in process: %v", err)
	}
}

// TestRequestFields: the checks of the other typed requests, as the CLI
// hands them over, name the field.
func TestRequestFields(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", crawl.MaxFailReason+1)
	for _, tc := range []struct {
		name  string
		err   error
		field string
	}{
		{"an empty seed", crawl.StartRequest{Seeds: []string{"https://e.com/", ""}}.Validate(), "seeds/1"},
		{"NUL in a seed", crawl.StartRequest{Seeds: []string{"https://e.com/\x00"}}.Validate(), "seeds/0"},
		{"not UTF-8 in a rule", crawl.StartRequest{Seeds: []string{"https://e.com/"}, Rules: []rules.Rule{{Action: rules.Follow, Pattern: "same-site"}, {Action: rules.Skip, Pattern: "\xc0"}}}.Validate(), "rules/1/skip"},
		{"no rules", crawl.StartRequest{Rules: []rules.Rule{}}.Validate(), "rules"},
		{"an unknown action", crawl.StartRequest{Rules: []rules.Rule{{Action: "fetch", Pattern: "any"}}}.Validate(), "rules/0/fetch"},
		{"a target limit", crawl.StartRequest{FromTargets: &crawl.FromTargets{Limit: ptr(0)}}.Validate(), crawl.FieldFromTargetLimit},
		{"max depth", crawl.StartRequest{MaxDepth: ptr(11)}.Validate(), crawl.FieldMaxDepth},
		{"max pages", crawl.StartRequest{MaxPages: ptr(0)}.Validate(), crawl.FieldMaxPages},
		{"delay", crawl.StartRequest{PerHostDelayMs: ptr(-1)}.Validate(), crawl.FieldPerHostDelayMs},
		{"parallelism", crawl.StartRequest{HostParallelism: ptr(33)}.Validate(), crawl.FieldHostParallelism},
		{"a long reason", crawl.FailRequest{Reason: &long}.Validate(), crawl.FieldReason},
		{"NUL in a reason", crawl.FailRequest{Reason: ptr("a\x00")}.Validate(), crawl.FieldReason},
		{"a domain", crawl.DomainQuery{Domain: "Example.com"}.Validate(), crawl.FieldDomain},
		{"days", crawl.DomainQuery{Domain: "example.com", Days: crawl.MaxDecisionDays + 1}.Validate(), crawl.FieldDays},
		{"an action", crawl.DomainQuery{Domain: "example.com", Action: "drop"}.Validate(), crawl.FieldAction},
		{"a state", crawl.CheckState("done"), crawl.FieldState},
	} {
		var fe *ledger.FieldError
		if !errors.As(tc.err, &fe) || fe.Field != tc.field || !errors.Is(tc.err, crawl.ErrInvalid) {
			t.Errorf("%s: %v, want a field error at %s", tc.name, tc.err, tc.field)
		}
	}
	for name, err := range map[string]error{
		"a start":          crawl.StartRequest{Seeds: []string{"https://e.com/"}, Rules: rules.Default(), MaxDepth: ptr(0), MaxPages: ptr(1)}.Validate(),
		"no reason":        crawl.FailRequest{}.Validate(),
		"a longest reason": crawl.FailRequest{Reason: ptr(long[2:])}.Validate(),
		"a domain query":   crawl.DomainQuery{Domain: "ads.example.com", Days: 7, Action: "skip"}.Validate(),
	} {
		if err != nil {
			t.Errorf("%s refused: %v", name, err)
		}
	}
}
