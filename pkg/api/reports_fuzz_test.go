package api_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// The fuzz targets below drive the real handler (real PostgreSQL, S3 and
// embedded OpenFGA) with arbitrary bodies: whatever a runner sends, the
// answer is never a 5xx, and a refusal is a JSON body in UTF-8. The
// application is built once per target, not per input, so that the seed
// corpus runs in a few seconds under plain `go test`.

// fuzzServer is one application and one running crawl for a fuzz target.
type fuzzServer struct {
	url     string
	crawlID string
	bucket  string
}

func newFuzzServer(tb testing.TB) *fuzzServer {
	tb.Helper()
	ctx := context.Background()
	env := apptest.New(tb)
	flowSrv := httptest.NewServer(&flow{})
	tb.Cleanup(flowSrv.Close)
	env.App.Settings.WebhookURL, env.App.Settings.WebhookToken = flowSrv.URL, "flow-token"
	env.App.Settings.CaptureFormats = map[string]bool{"wacz": true}
	svc, err := env.App.Crawls(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if err := env.FGA.Write(ctx, []authz.Tuple{{User: "user:alice", Relation: "submitter", Object: "organization:acme"}}, nil); err != nil {
		tb.Fatal(err)
	}
	access, _ := env.App.Access(ctx)
	perms, _ := env.App.Permissions(ctx)
	s := &api.Server{Access: access, Crawls: svc, Identity: identity.Headers{}, Submitters: perms}
	fs := &fuzzServer{url: serve(tb, s).URL, bucket: env.Bucket}
	code, body := fs.post(tb, "/api/crawls", []byte(`{"seeds":["https://www.example.com/","https://b.example.org/"],"maxDepth":2,"perHostDelayMs":0}`))
	var started struct{ CrawlID string }
	if err := json.Unmarshal([]byte(body), &started); code != 202 || err != nil {
		tb.Fatalf("start: %d %s", code, body)
	}
	fs.crawlID = started.CrawlID
	return fs
}

func (fs *fuzzServer) post(tb testing.TB, path string, body []byte) (int, string) {
	tb.Helper()
	a := send(tb, "POST", fs.url+path, "alice", "acme", string(body))
	return a.status, string(a.body)
}

// checkAnswer fails on a 5xx, and on a refusal whose body is not JSON in
// UTF-8.
func checkAnswer(t *testing.T, code int, body string, sent []byte) {
	t.Helper()
	if code >= 500 {
		t.Fatalf("%d %s for %q", code, body, sent)
	}
	if code >= 400 && (!utf8.ValidString(body) || !json.Valid([]byte(body))) {
		t.Fatalf("%d with a body that is not JSON in UTF-8: %q", code, body)
	}
}

func FuzzLevelReportHTTP(f *testing.F) {
	task := uuid.NewString()
	for _, s := range []string{
		`{"depth":0,"results":[]}`,
		`{"depth":0,"results":[{"url":"https://www.example.com/","status":"failed","taskId":"` + task + `","manifestError":"x","skipReason":"timeout"}]}`,
		`{"depth":0,"results":[{"url":"https://www.example.com/","status":"captured","taskId":"` + task + `","manifestLocation":"s3://b/k","linksLocation":"s3://b/l","finalUrl":"https://www.example.com/a","correlationId":"c","submittedAt":"2026-10-01T09:00:00Z","finishedAt":"2026-10-01T09:00:01Z"}]}`,
		`{"depth":0,"results":[{"url":"https://www.example.com/","status":"skipped","skipReason":"robots"}],"compiled":{"typescript":"5.6.3","hostTypes":"ab","scripts":[]}}`,
		`{"depth":0,"results":[{"url":"https://www.example.com/","status":"skipped","skipReason":"\u0000"}]}`,
		`{"depth":0,"results":[{"url":"https://www.example.com/","status":"failed","taskId":"` + task + `","manifestError":"\ud800"}]}`,
		"{\"depth\":0,\"results\":[{\"url\":\"https://www.example.com/\",\"status\":\"skipped\",\"skipReason\":\"\xff\"}]}",
		`{"depth":0,"results":[{"url":"https://www.example.com/","status":"captured","taskId":"` + task + `","manifestLocation":"s3://b/../k"}]}`,
		`{"depth":0,"results":[{"url":"https://www.example.com/","status":"captured","taskId":"` + task + `","manifestLocation":"s3://b/` + strings.Repeat("k", 1100) + `"}]}`,
		`{"depth":0,"results":[{"url":"https://www.example.com/","status":"captured","correlationId":"` + strings.Repeat("é", 3000) + `"}]}`,
		`{"depth":2147483647,"results":[]}`,
		`{"depth":0,"results":[{"url":"https://www.example.com/","status":"skipped"},{"url":"https://b.example.org/","status":"skipped"}],"compiled":null}`,
		`{"depth":1,"results":[{"url":"https://www.example.com/next","status":"captured"}]}`,
		`{"depth":0,"results":[],"compiled":[]}`,
		`{"depth":0}`, `[]`, `null`, ``, `{`, `{"depth":0,"results":[],"depth":1}`,
	} {
		f.Add([]byte(s))
	}
	fs := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		code, body := fs.post(t, "/api/crawls/"+fs.crawlID+"/pages", data)
		checkAnswer(t, code, body, data)
	})
}

func FuzzFailRequestHTTP(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"reason":"[crawl_host] ServerUnavailable: every endpoint is down"}`,
		`{"reason":"\u0000"}`, `{"reason":"a\ud800b"}`, "{\"reason\":\"\xff\"}",
		`{"reason":"` + strings.Repeat("é", 2000) + `"}`, `{"reason":"` + strings.Repeat("é", 2001) + `"}`,
		`{"reason":null}`, `{"reason":1}`, `{"why":"x"}`, `"x"`, `{`, `{"reason":"x"} {}`,
	} {
		f.Add([]byte(s))
	}
	fs := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		code, body := fs.post(t, "/api/crawls/"+fs.crawlID+"/failed", data)
		checkAnswer(t, code, body, data)
	})
}
