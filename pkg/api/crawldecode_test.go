package api

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// The crawl bodies' decoders and the crawl refusals' bodies, without a
// server (the routes are driven end to end in crawls_test.go,
// hostile_reports_test.go and reports_fuzz_test.go).

const task = "7F1E2D3C-4B5A-4968-8776-655443322110"

// refusedAt renders err as the crawl routes do for a body and returns the
// status and the validation message ("" when err is not a refused field).
func refusedAt(t *testing.T, err error) (int, string) {
	t.Helper()
	var r *refusal
	if !errors.As(crawlRefusal(err, inBody), &r) {
		return 0, ""
	}
	b, ok := r.body.(validationBody)
	if !ok {
		return r.status, ""
	}
	return r.status, b.Message
}

// decodeAndCheck is what POST /api/crawls/:id/pages does before identity.
func decodeAndCheck(body []byte) (crawl.Report, error) {
	rep, err := DecodeLevelReport(body)
	if err != nil {
		return crawl.Report{}, err
	}
	return rep.Normalize()
}

func TestDecodeLevelReport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		path string // "" = accepted
	}{
		{`{"depth":0,"results":[]}`, ""},
		{`{"depth":1,"results":[{"url":"https://a.example/","status":"captured","taskId":"` + task + `","manifestLocation":"s3://b/k","linksLocation":"s3://b/l","finalUrl":"https://b.example/","correlationId":"c","submittedAt":"2026-10-01T09:00:00Z","finishedAt":"2026-10-01T09:00:01.5+09:00"}]}`, ""},
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"skipped","skipReason":"robots"}]}`, ""},
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"failed","taskId":"` + task + `","manifestError":"none"}]}`, ""},
		{`{"results":[]}`, "body"},
		{`{"depth":0}`, "body"},
		{`{"depth":-1,"results":[]}`, "body/depth"},
		{`{"depth":"0","results":[]}`, "body/depth"},
		{`{"depth":0.5,"results":[]}`, "body/depth"},
		{`{"depth":0,"results":{}}`, "body/results"},
		{`{"depth":0,"results":[],"compiled":{}}`, ""},
		{`{"depth":0,"results":[],"compiled":null}`, ""},
		{`{"depth":0,"results":[],"compiled":{"typescript":"5.6.3","hostTypes":"0f3c","scripts":[{"id":"scroll","version":2,"sha256":"ab12"}]}}`, ""},
		{`{"depth":0,"results":[],"compiled":[]}`, "body/compiled"},
		{`{"depth":0,"results":[],"compiled":"x"}`, "body/compiled"},
		{`{"depth":0,"results":[],"compiled":{},"compiledAt":"x"}`, "body"},
		{`{"depth":0,"results":[1]}`, "body/results/0"},
		{`{"depth":0,"results":[{"status":"captured"}]}`, "body/results/0"},
		{`{"depth":0,"results":[{"url":"https://a.example/"}]}`, "body/results/0"},
		{`{"depth":0,"results":[{"url":"","status":"captured"}]}`, "body/results/0/url"},
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"captured","extra":1}]}`, "body/results/0"},
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"done"}]}`, "body/results/0/status"},
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"captured","taskId":"x","manifestError":"e"}]}`, "body/results/0/taskId"},
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"captured","taskId":""}]}`, "body/results/0/taskId"},
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"captured","taskId":"` + task + `"}]}`, "body/results/0"},
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"captured","manifestLocation":"s3://b/k"}]}`, "body/results/0"},
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"captured","taskId":"` + task + `","manifestLocation":""}]}`, "body/results/0/manifestLocation"},
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"captured","submittedAt":"yesterday"}]}`, "body/results/0/submittedAt"},
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"captured","submittedAt":""}]}`, "body/results/0/submittedAt"},
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"captured","finalUrl":7}]}`, "body/results/0/finalUrl"},
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"skipped"},{"url":"https://A.example#x","status":"skipped"}]}`, "body/results/1/url"},
		{`{"depth":0,"results":[{"url":"javascript:alert(1)","status":"skipped"}]}`, "body/results/0/url"},
		{`not json`, "body"},
	} {
		_, err := decodeAndCheck([]byte(tc.body))
		if tc.path == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.body, err)
			}
			continue
		}
		status, msg := refusedAt(t, err)
		if status != 400 || !strings.HasPrefix(msg, tc.path+" ") {
			t.Errorf("%s: %v (%d %q), want a validation error at %s", tc.body, err, status, msg, tc.path)
		}
	}
}

// TestRepeatedPageMessage: the second report of one page names the first
// in the API's words.
func TestRepeatedPageMessage(t *testing.T) {
	t.Parallel()
	_, err := decodeAndCheck([]byte(`{"depth":0,"results":[{"url":"https://a.example/","status":"skipped"},{"url":"https://A.example#x","status":"skipped"}]}`))
	if _, msg := refusedAt(t, err); msg != "body/results/1/url repeats body/results/0/url (https://a.example/): a page is reported once" {
		t.Errorf("message %q", msg)
	}
}

// TestHostileStrings: a string PostgreSQL cannot hold (U+0000) or that
// encoding/json would silently rewrite (bytes that are not UTF-8, lone
// surrogates) is a 400 naming its place in every crawl body, wherever the
// string sits.
func TestHostileStrings(t *testing.T) {
	t.Parallel()
	page := func(extra string) string {
		return `{"depth":0,"results":[{"url":"https://a.example/","status":"failed","taskId":"` + task + `","manifestError":"e"` + extra + `}]}`
	}
	type decoder func([]byte) error
	report := func(b []byte) error { _, err := decodeAndCheck(b); return err }
	fail := func(b []byte) error { _, err := DecodeFailRequest(b); return err }
	start := func(b []byte) error { _, err := DecodeStartRequest(b); return err }
	for _, tc := range []struct {
		name   string
		decode decoder
		body   string
		path   string // "" = accepted
		reason string
	}{
		{"NUL in skipReason", report, page(`,"skipReason":"a\u0000b"`), "body/results/0/skipReason", "must NOT contain U+0000 (NUL)"},
		{"NUL in correlationId", report, page(`,"correlationId":"\u0000"`), "body/results/0/correlationId", "must NOT contain U+0000 (NUL)"},
		{"NUL in finalUrl", report, page(`,"finalUrl":"https://b.example/\u0000"`), "body/results/0/finalUrl", "must NOT contain U+0000 (NUL)"},
		{"NUL in manifestError", report, `{"depth":0,"results":[{"url":"https://a.example/","status":"failed","taskId":"` + task + `","manifestError":"x\u0000"}]}`, "body/results/0/manifestError", "must NOT contain U+0000 (NUL)"},
		{"NUL in the url", report, `{"depth":0,"results":[{"url":"https://a.example/\u0000","status":"skipped"}]}`, "body/results/0/url", "must NOT contain U+0000 (NUL)"},
		{"raw invalid UTF-8", report, page(`,"skipReason":"a` + "\xff" + `b"`), "body/results/0/skipReason", "must be valid UTF-8"},
		{"truncated UTF-8", report, page(`,"skipReason":"` + "\xe6\x97" + `"`), "body/results/0/skipReason", "must be valid UTF-8"},
		{"lone high surrogate", report, page(`,"skipReason":"\ud800x"`), "body/results/0/skipReason", "must be valid UTF-8"},
		{"lone low surrogate", report, page(`,"skipReason":"\udc00"`), "body/results/0/skipReason", "must be valid UTF-8"},
		{"high surrogate then not a low one", report, page(`,"skipReason":"\ud800\u0041"`), "body/results/0/skipReason", "must be valid UTF-8"},
		{"NUL inside compiled", report, `{"depth":0,"results":[],"compiled":{"typescript":"\u0000"}}`, "body/compiled/typescript", "must NOT contain U+0000 (NUL)"},
		{"bad property name", report, `{"depth":0,"results":[{"url":"https://a.example/","status":"skipped","a` + "\xff" + `":1}]}`, "body/results/0", "property name must be valid UTF-8"},
		{"bad property name inside compiled", report, `{"depth":0,"results":[],"compiled":{"` + "\xff" + `":1}}`, "body/compiled", "property name must be valid UTF-8"},
		{"a slash in a key is escaped", report, `{"depth":0,"results":[],"compiled":{"a/b~c":"\u0000"}}`, "body/compiled/a~1b~0c", "must NOT contain U+0000 (NUL)"},
		{"seeds twice, the last valid", start, `{"seeds":null,"seeds":["https://a.example/"]}`, "body/seeds", "must NOT appear more than once"},
		{"a result's key twice", report, page(`,"status":"captured"`), "body/results/0/status", "must NOT appear more than once"},
		{"a surrogate pair is fine", report, page(`,"skipReason":"\ud83d\ude00 😀 \u00e9 \ufffd �"`), "", ""},
		{"other control characters are fine", report, page(`,"skipReason":"\u0001\t\n"`), "", ""},
		{"NUL in the fail reason", fail, `{"reason":"[step] \u0000"}`, "body/reason", "must NOT contain U+0000 (NUL)"},
		{"invalid UTF-8 in the fail reason", fail, `{"reason":"a` + "\xff" + `b"}`, "body/reason", "must be valid UTF-8"},
		{"NUL in a seed", start, `{"seeds":["https://e.com/\u0000"]}`, "body/seeds/0", "must NOT contain U+0000 (NUL)"},
		{"invalid UTF-8 in a rule", start, `{"seeds":["https://e.com/"],"rules":[{"follow":"` + "\xc0\xaf" + `"}]}`, "body/rules/0/follow", "must be valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.decode([]byte(tc.body))
			if tc.path == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			status, msg := refusedAt(t, err)
			if status != 400 || msg != tc.path+" "+tc.reason {
				t.Fatalf("%v (%d %q), want %s %s", err, status, msg, tc.path, tc.reason)
			}
			if !utf8.ValidString(msg) {
				t.Errorf("the message is not UTF-8")
			}
		})
	}
}

// TestLevelReportSpellings: two JSON spellings of one report (key order,
// spaces, URL and task id case, time zone) are one report with one digest.
func TestLevelReportSpellings(t *testing.T) {
	t.Parallel()
	a, err := decodeAndCheck([]byte(`{"depth":1,"results":[{"url":"https://a.example/x#f","status":"captured","taskId":"` + task + `","manifestLocation":"s3://b/k","finishedAt":"2026-10-01T18:00:01+09:00"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := decodeAndCheck([]byte(`{ "results" : [ { "finishedAt":"2026-10-01T09:00:01Z", "manifestLocation":"s3://b/k", "taskId":"` + strings.ToLower(task) + `", "status":"captured", "url":"HTTPS://A.EXAMPLE:443/x" } ], "depth" : 1 }`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest() != b.Digest() {
		t.Errorf("two spellings of one report digest differently")
	}
}

func TestDecodeStartRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		path string // "" = accepted
	}{
		{``, ""},
		{`{}`, ""},
		{`{"seeds":["https://example.com/"],"maxDepth":2,"maxPages":10000,"perHostDelayMs":0,"hostParallelism":32}`, ""},
		{`{"fromTargets":{"limit":5}}`, ""},
		{`{"fromTargets":{}}`, ""},
		{`{"seeds":["https://example.com/"],"rules":[{"skip":"ads.example.com"},{"follow":"same-site"}]}`, ""},
		{`{"signing":true}`, "body"},
		{`{"scope":"same-origin"}`, "body"},
		{`{"seeds":[]}`, "body/seeds"},
		{`{"seeds":[""]}`, "body/seeds/0"},
		{`{"seeds":"https://example.com/"}`, "body/seeds"},
		{`{"seeds":[1]}`, "body/seeds/0"},
		{`{"maxPages":0}`, "body/maxPages"},
		{`{"maxPages":10001}`, "body/maxPages"},
		{`{"maxDepth":-1}`, "body/maxDepth"},
		{`{"maxDepth":11}`, "body/maxDepth"},
		{`{"maxDepth":1.5}`, "body/maxDepth"},
		{`{"maxDepth":"2"}`, "body/maxDepth"},
		{`{"hostParallelism":0}`, "body/hostParallelism"},
		{`{"hostParallelism":33}`, "body/hostParallelism"},
		{`{"perHostDelayMs":600001}`, "body/perHostDelayMs"},
		{`{"fromTargets":{"limit":0}}`, "body/fromTargets/limit"},
		{`{"fromTargets":{"all":true}}`, "body/fromTargets"},
		{`{"fromTargets":[]}`, "body/fromTargets"},
		{`{"rules":[]}`, "body/rules"},
		{`{"rules":[{"follow":"same-site","skip":"x"}]}`, "body/rules/0"},
		{`{"rules":[{"allow":"same-site"}]}`, "body/rules/0/allow"},
		{`{"rules":[{"follow":7}]}`, "body/rules/0/follow"},
		{`[]`, "body"},
		{`{"seeds":`, "body"},
	} {
		_, err := DecodeStartRequest([]byte(tc.body))
		if tc.path == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.body, err)
			}
			continue
		}
		status, msg := refusedAt(t, err)
		if status != 400 || !strings.HasPrefix(msg, tc.path+" ") {
			t.Errorf("%s: %v (%d %q), want a validation error at %s", tc.body, err, status, msg, tc.path)
		}
	}
	r, err := DecodeStartRequest([]byte(`{"fromTargets":{"limit":5},"maxDepth":1}`))
	if err != nil || r.FromTargets == nil || *r.FromTargets.Limit != 5 || *r.MaxDepth != 1 || r.Seeds != nil || r.MaxPages != nil {
		t.Errorf("decoded %+v %v", r, err)
	}
}

func TestDecodeFailRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{``, true}, {`{}`, true}, {`{"reason":"[step] boom"}`, true}, {`{"reason":""}`, true},
		{`{"reason":"` + strings.Repeat("é", 2000) + `"}`, true},
		{`{"reason":"` + strings.Repeat("é", 2001) + `"}`, false},
		{`{"why":"x"}`, false}, {`{"reason":1}`, false}, {`"x"`, false},
	} {
		r, err := DecodeFailRequest([]byte(tc.body))
		if (err == nil) != tc.ok {
			t.Errorf("%.40s: %v", tc.body, err)
		}
		if err == nil && strings.Contains(tc.body, `"reason"`) == (r.Reason == nil) {
			t.Errorf("%.40s: reason %v", tc.body, r.Reason)
		}
	}
}

func TestParseDomainQuery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q    string
		want crawl.DomainQuery
		path string
	}{
		{"domain=ads.example.com", crawl.DomainQuery{Domain: "ads.example.com"}, ""},
		{"domain=ads.example.com&days=7&action=follow&other=1", crawl.DomainQuery{Domain: "ads.example.com", Days: 7, Action: "follow"}, ""},
		{"", crawl.DomainQuery{}, "querystring"},
		{"domain=", crawl.DomainQuery{}, "querystring/domain"},
		{"domain=Ads.Example.com", crawl.DomainQuery{}, "querystring/domain"},
		{"domain=https://ads.example.com/", crawl.DomainQuery{}, "querystring/domain"},
		{"domain=same-site", crawl.DomainQuery{}, "querystring/domain"},
		{"domain=a.example&days=0", crawl.DomainQuery{}, "querystring/days"},
		{"domain=a.example&days=-3", crawl.DomainQuery{}, "querystring/days"},
		{"domain=a.example&days=1.5", crawl.DomainQuery{}, "querystring/days"},
		{"domain=a.example&days=100001", crawl.DomainQuery{}, "querystring/days"},
		{"domain=a.example&action=drop", crawl.DomainQuery{}, "querystring/action"},
		{"domain=a.example&action=", crawl.DomainQuery{}, "querystring/action"},
		{"domain=a.example&domain=b.example", crawl.DomainQuery{}, "querystring/domain"},
	} {
		v, _ := url.ParseQuery(tc.q)
		got, err := ParseDomainQuery(v)
		if tc.path == "" {
			if err != nil || got != tc.want {
				t.Errorf("%s: %+v %v", tc.q, got, err)
			}
			continue
		}
		var r *refusal
		if !errors.As(crawlRefusal(err, inQuerystring), &r) || r.status != 400 ||
			!strings.HasPrefix(r.body.(validationBody).Message, tc.path+" ") {
			t.Errorf("%s: %v, want a validation error at %s", tc.q, err, tc.path)
		}
	}
}

// TestCrawlRefusalBodies pins the exact body of every refusal of the crawl
// use-cases, as the API answers it.
func TestCrawlRefusalBodies(t *testing.T) {
	t.Parallel()
	started := time.Date(2026, 10, 1, 18, 0, 0, 5, time.FixedZone("JST", 9*3600))
	for _, tc := range []struct {
		name   string
		err    error
		place  string
		status int
		body   string
	}{
		{"a body field", &ledger.FieldError{Field: "maxPages", Reason: "must be >= 1", Err: crawl.ErrInvalid}, inBody, 400,
			`{"statusCode":400,"code":"FST_ERR_VALIDATION","error":"Bad Request","message":"body/maxPages must be \u003e= 1"}`},
		{"the body itself", &ledger.FieldError{Field: "", Reason: "is not valid JSON"}, inBody, 400,
			`{"statusCode":400,"code":"FST_ERR_VALIDATION","error":"Bad Request","message":"body is not valid JSON"}`},
		{"a query parameter", &ledger.FieldError{Field: "state", Reason: "must be equal to one of the allowed values (running, succeeded, failed)"}, inQuerystring, 400,
			`{"statusCode":400,"code":"FST_ERR_VALIDATION","error":"Bad Request","message":"querystring/state must be equal to one of the allowed values (running, succeeded, failed)"}`},
		{"the crawl id is a path parameter", &ledger.FieldError{Field: crawl.FieldID, Reason: `must match format "uuid"`}, inBody, 400,
			`{"statusCode":400,"code":"FST_ERR_VALIDATION","error":"Bad Request","message":"params/id must match format \"uuid\""}`},
		{"a wrapped field error", wrap(&ledger.FieldError{Field: "reason", Reason: "must be valid UTF-8"}), inBody, 400,
			`{"statusCode":400,"code":"FST_ERR_VALIDATION","error":"Bad Request","message":"body/reason must be valid UTF-8"}`},
		{"seeds xor targets", &crawl.RequestError{Message: crawl.MsgSeedsXorTargets}, inBody, 400,
			`{"error":"provide exactly one of seeds or fromTargets"}`},
		{"no targets", &crawl.RequestError{Message: crawl.MsgNoTargets}, inBody, 400,
			`{"error":"no enabled capture targets for this organization"}`},
		{"a rule check", &crawl.RequestError{Err: &rules.ShadowedRulesError{Rules: []rules.Shadowed{{Rule: 2, CoveredBy: 1}}}}, inBody, 400,
			`{"error":"rules that can never match","rules":[{"rule":2,"coveredBy":1}]}`},
		{"bad seeds", &crawl.RequestError{Err: &rules.InvalidSeedsError{Seeds: []string{"ftp://x/"}}}, inBody, 400,
			`{"error":"every seed must be an http(s) URL"}`},
		{"a running crawl named", &crawl.ActiveCrawlError{ActiveCrawlError: &ledger.ActiveCrawlError{CrawlID: "5b0a3c1e-0000-4000-8000-000000000000", StartedAt: started}}, inBody, 409,
			`{"error":"a crawl is already in progress","crawlId":"5b0a3c1e-0000-4000-8000-000000000000","startedAt":"2026-10-01T09:00:00.000000005Z"}`},
		{"a running crawl not named", &crawl.ActiveCrawlError{ActiveCrawlError: &ledger.ActiveCrawlError{}}, inBody, 409,
			`{"error":"a crawl is already in progress"}`},
		{"not running", &crawl.NotRunningError{CrawlID: "x", State: crawl.StateFailed}, inBody, 409,
			`{"error":"the crawl is not running","state":"failed"}`},
		{"a different report", &crawl.LevelConflictError{CrawlID: "x", Depth: 1}, inBody, 409,
			`{"error":"this level was already reported with different results","depth":1}`},
		{"no such level", &crawl.LevelConflictError{CrawlID: "x", Depth: 2, NoSuchLevel: true}, inBody, 409,
			`{"error":"the crawl has no such level","depth":2}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r *refusal
			if !errors.As(crawlRefusal(tc.err, tc.place), &r) {
				t.Fatalf("%v is not a refusal", tc.err)
			}
			b, err := json.Marshal(r.body)
			if err != nil || r.status != tc.status || string(b) != tc.body {
				t.Errorf("%d %s %v\nwant %d %s", r.status, b, err, tc.status, tc.body)
			}
			if !errors.Is(crawlRefusal(tc.err, tc.place), tc.err) {
				t.Errorf("the refusal does not keep its cause")
			}
		})
	}
	for _, err := range []error{nil, errors.New("boom"), ledger.ErrNotFound} {
		if got := crawlRefusal(err, inBody); got != err {
			t.Errorf("crawlRefusal(%v) = %v, want it unchanged", err, got)
		}
	}
}

func wrap(err error) error { return &wrapped{err} }

type wrapped struct{ err error }

func (w *wrapped) Error() string { return "context: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

func FuzzDecodeLevelReport(f *testing.F) {
	for _, s := range []string{
		`{"depth":0,"results":[]}`,
		`{"depth":1,"results":[{"url":"https://a.example/","status":"captured","taskId":"` + task + `","manifestLocation":"s3://b/k","finalUrl":"https://b.example/"}]}`,
		`{"depth":0,"results":[{"url":"https://a.example/","status":"skipped","skipReason":"robots"}]}`,
		`{"depth":0,"results":[{"url":"https://a.example/","status":"failed","taskId":"` + task + `","manifestError":"none","submittedAt":"2026-10-01T09:00:00Z"}]}`,
		`{"depth":1e3,"results":[{}]}`,
		`{"depth":0,"results":[],"compiled":{"typescript":"5.6.3","hostTypes":"0f3c","scripts":[]}}`,
		`{"depth":0,"results":[{"url":"https://a.example/","status":"skipped","skipReason":"\u0000"}]}`,
		`{"depth":0,"results":[{"url":"https://a.example/","status":"skipped","skipReason":"\ud800\udc00\ud800"}]}`,
		"{\"depth\":0,\"results\":[{\"url\":\"https://a.example/\",\"status\":\"skipped\",\"skipReason\":\"\xff\"}]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeAndCheck(data)
		if err != nil {
			var fe *ledger.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error of the wrong type: %T %v", err, err)
			}
			status, msg := refusedAt(t, err)
			if status != 400 || !strings.HasPrefix(msg, "body") {
				t.Fatalf("refused as %d %q", status, msg)
			}
			var ref *refusal
			_ = errors.As(crawlRefusal(err, inBody), &ref)
			if b, err := json.Marshal(ref.body); err != nil || !utf8.Valid(b) {
				t.Fatalf("body is not UTF-8 JSON: %v", err)
			}
			return
		}
		// Every string kept is what was sent: UTF-8 without U+0000.
		for _, p := range r.Results {
			for _, s := range []string{p.URL, string(p.Status), p.SkipReason, p.TaskID, p.CorrelationID,
				p.ManifestLocation, p.ManifestError, p.FinalURL, p.LinksLocation} {
				if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
					t.Fatalf("kept %q from %q", s, data)
				}
				// U+FFFD only when it was sent, never as a replacement.
				if strings.ContainsRune(s, utf8.RuneError) && !strings.ContainsRune(string(data), utf8.RuneError) &&
					!strings.Contains(strings.ToLower(string(data)), `\ufffd`) {
					t.Fatalf("kept %q (a replacement character) from %q", s, data)
				}
			}
		}
		// An accepted report survives its own JSON form, with one digest.
		again, err := json.Marshal(r.LevelReport)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := decodeAndCheck(again)
		if err != nil {
			t.Fatalf("re-reading %s: %v", again, err)
		}
		if r.Digest() != r2.Digest() {
			t.Fatalf("digest changed through JSON: %s", again)
		}
	})
}

func FuzzDecodeStartRequest(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"seeds":["https://example.com/"],"maxDepth":2}`, `{"fromTargets":{"limit":5}}`,
		`{"seeds":["https://example.com/"],"rules":[{"skip":"ads.example.com"},{"follow":"same-site"}],"maxPages":100,"perHostDelayMs":0,"hostParallelism":32}`,
		`{"rules":[{"follow":"same-site","skip":"x"}]}`,
		`{"seeds":["https://e.com/\u0000"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeStartRequest(data)
		if err != nil {
			var fe *ledger.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error of the wrong type: %T %v", err, err)
			}
			if status, msg := refusedAt(t, err); status != 400 || !strings.HasPrefix(msg, "body") || !utf8.ValidString(msg) {
				t.Fatalf("refused as %d %q", status, msg)
			}
			return
		}
		// What the decoder lets through, the use-case takes as well formed.
		if err := r.Validate(); err != nil {
			t.Fatalf("a decoded request does not validate: %v", err)
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeStartRequest(again); err != nil {
			t.Fatalf("re-reading %s: %v", again, err)
		}
	})
}

func FuzzDecodeFailRequest(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"reason":"[step] boom"}`, `{"reason":"\u0000"}`, "{\"reason\":\"\xff\"}", `{"reason":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeFailRequest(data)
		if err != nil {
			if status, _ := refusedAt(t, err); status != 400 {
				t.Fatalf("refused as %d: %v", status, err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("a decoded request does not validate: %v", err)
		}
	})
}
