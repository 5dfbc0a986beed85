package browserhive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Response is a 200 answer of POST /captures.
type Response struct {
	// TaskID is the capture's id as BrowserHive gave it.
	TaskID string
	Report Report
	// Manifest says where the .result.json was written, or why it was not.
	Manifest Manifest
	// Endpoint is the server that answered.
	Endpoint string
}

// Manifest is the response's manifest outcome: at most one of Location (an
// "s3://bucket/key", or whatever an artifact sink answered) and Error is
// set; both are empty when the answer carried no outcome.
type Manifest struct {
	Location string
	Error    string
}

// Status is a capture's status, normalised across BrowserHive's spellings.
type Status string

// The capture statuses (era D spelling; era B's httpError and era C's
// CAPTURE_STATUS_* read as these).
const (
	StatusSuccess   Status = "success"
	StatusFailed    Status = "failed"
	StatusTimeout   Status = "timeout"
	StatusHTTPError Status = "http_error"
)

// Report is the part of the capture's CaptureResultReport the ledger uses
// (the manifest holds the whole of it).
type Report struct {
	TaskID        string
	CorrelationID string
	URL           string
	Status        Status
	// HTTPStatusCode is the main document's status (0 when absent).
	HTTPStatusCode int
	Artifacts      Artifacts
	// Error is errorDetails; nil on success.
	Error *ErrorDetails
	// DocumentURL is document.url: the document the outputs were made from
	// (the final URL after redirects), or "".
	DocumentURL string
}

// Artifacts are the reported locations of a success's outputs.
type Artifacts struct {
	PNG, WebP, HTML, Links, MHTML, WACZ string
}

// ErrorDetails says why a capture did not succeed.
type ErrorDetails struct {
	// Type is http, timeout, connection, signing, internal, artifact_sink
	// or cancelled (era C's ERROR_TYPE_* read as these).
	Type    string
	Message string
	Step    string
}

// Cancelled says the capture was torn down before it finished (BrowserHive
// ≥ v9.1.0 still writes a manifest for it, with no artefacts).
func (r Report) Cancelled() bool { return r.Error != nil && r.Error.Type == "cancelled" }

// FieldError is an answer that is not a capture response, naming the field.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

type object map[string]json.RawMessage

func readObject(raw json.RawMessage, field string) (object, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, &FieldError{Field: field, Reason: "must be an object"}
	}
	var o object
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, &FieldError{Field: field, Reason: "must be an object"}
	}
	return o, nil
}

// str reads an optional string member; null and absent are "".
func (o object) str(key, field string) (string, error) {
	raw, ok := o[key]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", &FieldError{Field: field, Reason: "must be a string"}
	}
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return "", &FieldError{Field: field, Reason: "must be text without U+0000"}
	}
	return s, nil
}

func (o object) int(key, field string) (int, error) {
	raw, ok := o[key]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return 0, nil
	}
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '"' {
		return 0, &FieldError{Field: field, Reason: "must be an integer"}
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return 0, &FieldError{Field: field, Reason: "must be an integer"}
	}
	v, err := n.Int64()
	if err != nil || v < 0 || v > 999 {
		return 0, &FieldError{Field: field, Reason: "must be an HTTP status code"}
	}
	return int(v), nil
}

func (o object) sub(key, field string) (object, bool, error) {
	raw, ok := o[key]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, false, nil
	}
	m, err := readObject(raw, field)
	return m, err == nil, err
}

// DecodeResponse reads the body of a 200 answer of POST /captures. Unknown
// keys are ignored (BrowserHive adds fields between versions); a field the
// ledger uses that has the wrong type, and strings holding U+0000 or
// invalid UTF-8, are a *FieldError naming it. taskId and report.status are
// required; a manifest with both a location and an error is refused.
func DecodeResponse(data []byte) (Response, error) {
	if !utf8.Valid(data) {
		return Response{}, &FieldError{Field: "body", Reason: "is not valid UTF-8"}
	}
	if !json.Valid(data) {
		return Response{}, &FieldError{Field: "body", Reason: "is not valid JSON"}
	}
	root, err := readObject(data, "body")
	if err != nil {
		return Response{}, err
	}
	var r Response
	if r.TaskID, err = root.str("taskId", "taskId"); err != nil {
		return Response{}, err
	}
	if r.TaskID == "" {
		return Response{}, &FieldError{Field: "taskId", Reason: "is required"}
	}
	rep, ok, err := root.sub("report", "report")
	if err != nil {
		return Response{}, err
	}
	if !ok {
		return Response{}, &FieldError{Field: "report", Reason: "is required"}
	}
	if r.Report, err = decodeReport(rep); err != nil {
		return Response{}, err
	}
	man, ok, err := root.sub("manifest", "manifest")
	if err != nil {
		return Response{}, err
	}
	if ok {
		if r.Manifest.Location, err = man.str("location", "manifest.location"); err != nil {
			return Response{}, err
		}
		if r.Manifest.Error, err = man.str("error", "manifest.error"); err != nil {
			return Response{}, err
		}
		if r.Manifest.Location != "" && r.Manifest.Error != "" {
			return Response{}, &FieldError{Field: "manifest", Reason: "has both a location and an error"}
		}
	}
	return r, nil
}

func decodeReport(o object) (Report, error) {
	var r Report
	var err error
	for _, f := range []struct {
		key string
		dst *string
	}{{"taskId", &r.TaskID}, {"correlationId", &r.CorrelationID}, {"url", &r.URL}} {
		if *f.dst, err = o.str(f.key, "report."+f.key); err != nil {
			return Report{}, err
		}
	}
	status, err := o.str("status", "report.status")
	if err != nil {
		return Report{}, err
	}
	if r.Status, err = parseStatus(status); err != nil {
		return Report{}, err
	}
	if r.HTTPStatusCode, err = o.int("httpStatusCode", "report.httpStatusCode"); err != nil {
		return Report{}, err
	}
	if a, ok, err := o.sub("artifacts", "report.artifacts"); err != nil {
		return Report{}, err
	} else if ok {
		for _, f := range []struct {
			key string
			dst *string
		}{{"png", &r.Artifacts.PNG}, {"webp", &r.Artifacts.WebP}, {"html", &r.Artifacts.HTML},
			{"links", &r.Artifacts.Links}, {"mhtml", &r.Artifacts.MHTML}, {"wacz", &r.Artifacts.WACZ}} {
			if *f.dst, err = a.str(f.key, "report.artifacts."+f.key); err != nil {
				return Report{}, err
			}
		}
	}
	if e, ok, err := o.sub("errorDetails", "report.errorDetails"); err != nil {
		return Report{}, err
	} else if ok {
		d := &ErrorDetails{}
		if d.Type, err = e.str("type", "report.errorDetails.type"); err != nil {
			return Report{}, err
		}
		d.Type = strings.ToLower(strings.TrimPrefix(d.Type, "ERROR_TYPE_"))
		if d.Message, err = e.str("message", "report.errorDetails.message"); err != nil {
			return Report{}, err
		}
		if d.Step, err = e.str("step", "report.errorDetails.step"); err != nil {
			return Report{}, err
		}
		r.Error = d
	}
	if d, ok, err := o.sub("document", "report.document"); err != nil {
		return Report{}, err
	} else if ok {
		if r.DocumentURL, err = d.str("url", "report.document.url"); err != nil {
			return Report{}, err
		}
	}
	return r, nil
}

func parseStatus(s string) (Status, error) {
	switch s {
	case "success", "CAPTURE_STATUS_SUCCESS":
		return StatusSuccess, nil
	case "failed", "CAPTURE_STATUS_FAILED":
		return StatusFailed, nil
	case "timeout", "CAPTURE_STATUS_TIMEOUT":
		return StatusTimeout, nil
	case "http_error", "httpError", "CAPTURE_STATUS_HTTP_ERROR":
		return StatusHTTPError, nil
	case "":
		return "", &FieldError{Field: "report.status", Reason: "is required"}
	}
	return "", &FieldError{Field: "report.status", Reason: fmt.Sprintf("is not a capture status: %q", clean(s, 40))}
}

// clean makes s safe to keep in a message: valid UTF-8, no control
// characters, at most n characters.
func clean(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n]) + "…"
	}
	return s
}
