// Package browserhivetest serves BrowserHive's era-D capture API (v12+,
// see package browserhive) on a local port for tests: POST /captures with the
// request validated as the server validates it, one capture at a time (429
// Busy while one runs), and the answer the test's CaptureFunc decides.
package browserhivetest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/capture-ledger/ledgerctl/pkg/browserhive"
)

// CaptureFunc makes one capture and returns the answer: an HTTP status (0
// means 200) and the JSON body (a WireResponse for a 200).
type CaptureFunc func(ctx context.Context, req browserhive.Request) (status int, body any)

// Server is one BrowserHive endpoint.
type Server struct {
	*httptest.Server
	capture CaptureFunc

	running sync.Mutex
	// Busy forces every capture request to be answered 429.
	Busy atomic.Bool

	mu       sync.Mutex
	requests []browserhive.Request
	answers  map[int]int // HTTP status → count
}

// New starts a server answering with capture; it is closed when the test
// ends.
func New(t interface{ Cleanup(func()) }, capture CaptureFunc) *Server {
	s := &Server{capture: capture, answers: map[int]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Requests returns the capture requests that reached a capture (not the
// ones answered 400 or 429).
func (s *Server) Requests() []browserhive.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]browserhive.Request(nil), s.requests...)
}

// Answered returns how many requests were answered with status.
func (s *Server) Answered(status int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answers[status]
}

var requestKeys = map[string]bool{
	"url": true, "labels": true, "correlationId": true, "captureFormats": true, "acceptLanguage": true,
	"signing": true, "dismissBanners": true, "viewport": true, "operationDelayMs": true, "trace": true,
	"devicePixelRatios": true, "fullPage": true, "behaviors": true, "preload": true, "session": true,
	"maxResponseBytes": true, "urlPolicies": true, "contentTypePolicies": true, "storageValues": true,
	"artifactSink": true, "loadWait": true,
}

var formatKeys = []string{"png", "webp", "html", "links", "mhtml", "wacz"}

func (s *Server) answer(w http.ResponseWriter, status int, errType string, body any) {
	s.mu.Lock()
	s.answers[status]++
	s.mu.Unlock()
	if errType != "" {
		w.Header().Set("x-amzn-errortype", errType)
	}
	if body == nil {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (s *Server) invalid(w http.ResponseWriter, path, msg string) {
	s.answer(w, http.StatusBadRequest, "ValidationException", map[string]any{
		"message": msg, "fieldList": []map[string]string{{"path": path, "message": msg}},
	})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/captures" || r.Method != http.MethodPost {
		s.answer(w, http.StatusNotFound, "", map[string]string{"message": "not found"})
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		s.invalid(w, "/", "the body could not be read")
		return
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		s.invalid(w, "/", "the body must be a JSON object")
		return
	}
	for k := range raw {
		if !requestKeys[k] {
			s.invalid(w, "/"+k, "unknown member "+k)
			return
		}
	}
	var req browserhive.Request
	if err := json.Unmarshal(data, &req); err != nil {
		s.invalid(w, "/", err.Error())
		return
	}
	if req.URL == "" || !(strings.HasPrefix(req.URL, "http://") || strings.HasPrefix(req.URL, "https://")) {
		s.invalid(w, "/url", "url must be an http(s) URL")
		return
	}
	var formats map[string]json.RawMessage
	if err := json.Unmarshal(raw["captureFormats"], &formats); err != nil {
		s.invalid(w, "/captureFormats", "captureFormats is required")
		return
	}
	for _, k := range formatKeys {
		if v, ok := formats[k]; !ok || (string(v) != "true" && string(v) != "false") {
			s.invalid(w, "/captureFormats/"+k, "captureFormats."+k+" is required and must be a boolean")
			return
		}
	}
	if s.Busy.Load() || !s.running.TryLock() {
		s.answer(w, http.StatusTooManyRequests, "Busy", map[string]string{"message": "a capture is already running"})
		return
	}
	defer s.running.Unlock()
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	status, body := s.capture(r.Context(), req)
	if status == 0 {
		status = http.StatusOK
	}
	errType := ""
	if status == http.StatusInternalServerError {
		errType, body = "InternalFailure", nil
	}
	s.answer(w, status, errType, body)
}

// WireResponse is the 200 body of POST /captures.
type WireResponse struct {
	TaskID   string         `json:"taskId"`
	Report   map[string]any `json:"report"`
	Manifest map[string]any `json:"manifest,omitempty"`
}

// Report builds an era-D CaptureResultReport: a success when errType is
// "", otherwise status "failed" (or "http_error" for errType "http") with
// errorDetails and no artefacts.
func Report(taskID, correlationID, url, errType, message string, httpStatus int, artifacts map[string]string) map[string]any {
	rep := map[string]any{
		"taskId": taskID, "correlationId": correlationID, "url": url, "labels": []string{},
		"timestamp": "2026-10-01T09:00:00.000Z", "captureProcessingTimeMs": 120,
		"artifacts": map[string]string{},
	}
	if httpStatus != 0 {
		rep["httpStatusCode"] = httpStatus
	}
	switch errType {
	case "":
		rep["status"] = "success"
		if artifacts != nil {
			rep["artifacts"] = artifacts
		}
		rep["document"] = map[string]any{"url": url}
	case "http":
		rep["status"] = "http_error"
		rep["errorDetails"] = map[string]any{"type": "http", "message": message, "httpStatusCode": httpStatus}
	default:
		rep["status"] = "failed"
		rep["errorDetails"] = map[string]any{"type": errType, "message": message, "step": "load-pages"}
	}
	return rep
}

// Location is the s3:// location of a task's artefact in bucket, named as
// BrowserHive names it: <taskId>_<correlationId>.<ext>.
func Location(bucket, taskID, correlationID, ext string) string {
	return fmt.Sprintf("s3://%s/%s_%s.%s", bucket, taskID, correlationID, ext)
}
