package crawl_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
)

const task = "7F1E2D3C-4B5A-4968-8776-655443322110"

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
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"captured","finalUrl":7}]}`, "body/results/0/finalUrl"},
		{`{"depth":0,"results":[{"url":"https://a.example/","status":"skipped"},{"url":"https://A.example#x","status":"skipped"}]}`, "body/results/1/url"},
		{`{"depth":0,"results":[{"url":"javascript:alert(1)","status":"skipped"}]}`, "body/results/0/url"},
		{`not json`, "body"},
	} {
		_, err := crawl.DecodeLevelReport([]byte(tc.body))
		if tc.path == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.body, err)
			}
			continue
		}
		var ve *crawl.ValidationError
		if !errors.As(err, &ve) || ve.Path != tc.path {
			t.Errorf("%s: %v, want a validation error at %s", tc.body, err, tc.path)
		}
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
	report := func(b []byte) error { _, err := crawl.DecodeLevelReport(b); return err }
	fail := func(b []byte) error { _, err := crawl.DecodeFailRequest(b); return err }
	start := func(b []byte) error { _, err := crawl.DecodeStartRequest(b); return err }
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
			var ve *crawl.ValidationError
			if !errors.As(err, &ve) || ve.Path != tc.path || ve.Reason != tc.reason {
				t.Fatalf("%v, want %s %s", err, tc.path, tc.reason)
			}
			if !utf8.ValidString(mustJSON(ve.Body())) {
				t.Errorf("the body is not UTF-8")
			}
		})
	}
}

func TestLevelReportDigest(t *testing.T) {
	t.Parallel()
	a, err := crawl.DecodeLevelReport([]byte(`{"depth":1,"results":[{"url":"https://a.example/x#f","status":"captured","taskId":"` + task + `","manifestLocation":"s3://b/k","finishedAt":"2026-10-01T18:00:01+09:00"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := crawl.DecodeLevelReport([]byte(`{ "results" : [ { "finishedAt":"2026-10-01T09:00:01Z", "manifestLocation":"s3://b/k", "taskId":"` + strings.ToLower(task) + `", "status":"captured", "url":"HTTPS://A.EXAMPLE:443/x" } ], "depth" : 1 }`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest() != b.Digest() {
		t.Errorf("two spellings of one report digest differently")
	}
	for _, change := range []func(r *crawl.LevelReport){
		func(r *crawl.LevelReport) { r.Depth = 2 },
		func(r *crawl.LevelReport) { r.Results[0].Status = crawl.StatusFailed },
		func(r *crawl.LevelReport) { r.Results[0].SkipReason = "x" },
		func(r *crawl.LevelReport) { r.Results[0].FinalURL = "https://b.example/" },
		func(r *crawl.LevelReport) { r.Results[0].ManifestLocation = "s3://b/k2" },
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

func TestDecodeFailRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{``, true}, {`{}`, true}, {`{"reason":"[step] boom"}`, true},
		{`{"reason":"` + strings.Repeat("é", 2000) + `"}`, true},
		{`{"reason":"` + strings.Repeat("é", 2001) + `"}`, false},
		{`{"why":"x"}`, false}, {`{"reason":1}`, false}, {`"x"`, false},
	} {
		_, err := crawl.DecodeFailRequest([]byte(tc.body))
		if (err == nil) != tc.ok {
			t.Errorf("%.40s: %v", tc.body, err)
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
		{"domain=a.example&action=drop", crawl.DomainQuery{}, "querystring/action"},
		{"domain=a.example&action=", crawl.DomainQuery{}, "querystring/action"},
		{"domain=a.example&domain=b.example", crawl.DomainQuery{}, "querystring/domain"},
	} {
		v, _ := url.ParseQuery(tc.q)
		got, err := crawl.ParseDomainQuery(v)
		if tc.path == "" {
			if err != nil || got != tc.want {
				t.Errorf("%s: %+v %v", tc.q, got, err)
			}
			continue
		}
		var ve *crawl.ValidationError
		if !errors.As(err, &ve) || ve.Path != tc.path {
			t.Errorf("%s: %v, want a validation error at %s", tc.q, err, tc.path)
		}
	}
}

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
		r, err := crawl.DecodeLevelReport(data)
		if err != nil {
			var ve *crawl.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, crawl.ErrInvalid) {
				t.Fatalf("error of the wrong type: %T %v", err, err)
			}
			if !utf8.ValidString(mustJSON(ve.Body())) {
				t.Fatalf("body is not UTF-8")
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
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := crawl.DecodeLevelReport(again)
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
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := crawl.DecodeStartRequest(data)
		if err != nil {
			if !errors.Is(err, crawl.ErrInvalid) {
				t.Fatalf("error of the wrong type: %T %v", err, err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("a decoded request does not validate: %v", err)
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := crawl.DecodeStartRequest(again); err != nil {
			t.Fatalf("re-reading %s: %v", again, err)
		}
	})
}
