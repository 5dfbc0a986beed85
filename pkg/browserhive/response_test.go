package browserhive_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/browserhive"
)

const okBody = `{"taskId":"2b9e63ec-1c1e-4b5e-9d8e-3f1a2b3c4d5e","report":{"taskId":"2b9e63ec-1c1e-4b5e-9d8e-3f1a2b3c4d5e",
"correlationId":"c","url":"https://example.com/","labels":[],"status":"success","httpStatusCode":200,
"timestamp":"2026-09-24T00:00:04.210Z","captureProcessingTimeMs":4210,
"artifacts":{"wacz":"s3://bh/x_c.wacz","links":"s3://bh/x_c.links.json"},"document":{"url":"https://example.com/home"},
"settle":{"strategy":"fully-loaded"}},"manifest":{"location":"s3://bh/x_c.result.json"}}`

func TestDecodeResponse(t *testing.T) {
	t.Parallel()
	r, err := browserhive.DecodeResponse([]byte(okBody))
	if err != nil {
		t.Fatal(err)
	}
	if r.TaskID == "" || r.Report.Status != browserhive.StatusSuccess || r.Report.HTTPStatusCode != 200 ||
		r.Report.Artifacts.Links != "s3://bh/x_c.links.json" || r.Report.DocumentURL != "https://example.com/home" ||
		r.Manifest.Location != "s3://bh/x_c.result.json" {
		t.Errorf("decoded %+v", r)
	}
	for _, c := range []struct{ body, field string }{
		{`[]`, "body"},
		{`{"report":{"status":"success"}}`, "taskId"},
		{`{"taskId":"t"}`, "report"},
		{`{"taskId":"t","report":{"status":"done"}}`, "report.status"},
		{`{"taskId":"t","report":{"status":"success","httpStatusCode":"200"}}`, "report.httpStatusCode"},
		{`{"taskId":"t","report":{"status":"success","artifacts":{"wacz":1}}}`, "report.artifacts.wacz"},
		{`{"taskId":"t","report":{"status":"success"},"manifest":{"location":"s3://b/k","error":"e"}}`, "manifest"},
		{`{"taskId":"t\u0000","report":{"status":"success"}}`, "taskId"},
		{"{\"taskId\":\"t\xff\",\"report\":{\"status\":\"success\"}}", "body"},
	} {
		_, err := browserhive.DecodeResponse([]byte(c.body))
		var fe *browserhive.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: got %v, want an error on %q", c.body, err, c.field)
		}
	}
	// Era B and era C spellings read as era D's.
	r, err = browserhive.DecodeResponse([]byte(`{"taskId":"t","report":{"status":"CAPTURE_STATUS_FAILED","errorDetails":{"type":"ERROR_TYPE_CANCELLED"}}}`))
	if err != nil || !r.Report.Cancelled() || r.Report.Status != browserhive.StatusFailed {
		t.Errorf("era C cancelled: %+v %v", r, err)
	}
	r, err = browserhive.DecodeResponse([]byte(`{"taskId":"t","report":{"status":"httpError","httpStatusCode":429}}`))
	if err != nil || r.Report.Status != browserhive.StatusHTTPError || r.Report.HTTPStatusCode != 429 {
		t.Errorf("era B http error: %+v %v", r, err)
	}
}

// FuzzDecodeResponse: whatever the body, DecodeResponse does not panic, and
// what it accepts has a task id, a known status, at most one manifest
// outcome, and strings without U+0000 or invalid UTF-8.
func FuzzDecodeResponse(f *testing.F) {
	f.Add([]byte(okBody))
	f.Add([]byte(`{"taskId":"t","report":{"status":"failed","errorDetails":{"type":"cancelled","message":"m"}},"manifest":{"error":"e"}}`))
	f.Add([]byte(`{"taskId":"t","report":{"status":"http_error","httpStatusCode":503},"manifest":null}`))
	f.Add([]byte(`{"taskId":"","report":{}}`))
	f.Add([]byte(`{"taskId":"t","report":{"status":"success","httpStatusCode":1e3}}`))
	f.Add([]byte("\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := browserhive.DecodeResponse(data)
		if err != nil {
			var fe *browserhive.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a FieldError", err)
			}
			return
		}
		if r.TaskID == "" {
			t.Fatal("accepted without a task id")
		}
		switch r.Report.Status {
		case browserhive.StatusSuccess, browserhive.StatusFailed, browserhive.StatusTimeout, browserhive.StatusHTTPError:
		default:
			t.Fatalf("status %q", r.Report.Status)
		}
		if r.Manifest.Location != "" && r.Manifest.Error != "" {
			t.Fatal("both manifest outcomes")
		}
		for _, s := range []string{r.TaskID, r.Report.URL, r.Report.DocumentURL, r.Manifest.Location, r.Manifest.Error, r.Report.Artifacts.Links} {
			if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
				t.Fatalf("unclean string %q", s)
			}
		}
	})
}
