package manifest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Status is a capture's terminal status, normalised across BrowserHive's
// manifest dialects.
type Status string

// The capture statuses BrowserHive reports. Only StatusSuccess has artefacts.
const (
	StatusSuccess   Status = "success"
	StatusFailed    Status = "failed"
	StatusTimeout   Status = "timeout"
	StatusHTTPError Status = "http_error"
)

// statusSpellings maps every documented spelling to its normalised status:
// v1.8–v2.x (`httpError`), protobuf JSON of v3–v11 (`CAPTURE_STATUS_*`) and
// v12+ (`http_error`).
var statusSpellings = map[string]Status{
	"success":                   StatusSuccess,
	"CAPTURE_STATUS_SUCCESS":    StatusSuccess,
	"failed":                    StatusFailed,
	"CAPTURE_STATUS_FAILED":     StatusFailed,
	"timeout":                   StatusTimeout,
	"CAPTURE_STATUS_TIMEOUT":    StatusTimeout,
	"httpError":                 StatusHTTPError,
	"http_error":                StatusHTTPError,
	"CAPTURE_STATUS_HTTP_ERROR": StatusHTTPError,
}

// ParseStatus normalises a status as any BrowserHive dialect spells it; ok is
// false for a value no dialect uses (including CAPTURE_STATUS_UNSPECIFIED).
func ParseStatus(s string) (Status, bool) {
	st, ok := statusSpellings[s]
	return st, ok
}

// ErrorType classifies why a capture did not succeed, normalised across
// BrowserHive's manifest dialects. A value BrowserHive may add later is kept
// verbatim rather than rejected: it is only ever logged.
type ErrorType string

// The error types BrowserHive reports (artifact_sink from v10, cancelled from
// v9.1).
const (
	ErrorTypeHTTP         ErrorType = "http"
	ErrorTypeTimeout      ErrorType = "timeout"
	ErrorTypeConnection   ErrorType = "connection"
	ErrorTypeSigning      ErrorType = "signing"
	ErrorTypeInternal     ErrorType = "internal"
	ErrorTypeArtifactSink ErrorType = "artifact_sink"
	ErrorTypeCancelled    ErrorType = "cancelled"
)

var knownErrorTypes = map[ErrorType]bool{
	ErrorTypeHTTP: true, ErrorTypeTimeout: true, ErrorTypeConnection: true,
	ErrorTypeSigning: true, ErrorTypeInternal: true,
	ErrorTypeArtifactSink: true, ErrorTypeCancelled: true,
}

// ParseErrorType normalises an error type: `ERROR_TYPE_CANCELLED` and
// `cancelled` are both ErrorTypeCancelled, `artifactSink` is
// ErrorTypeArtifactSink. Unknown values are returned unchanged.
func ParseErrorType(s string) ErrorType {
	cand := s
	if rest, ok := strings.CutPrefix(s, "ERROR_TYPE_"); ok {
		cand = strings.ToLower(rest)
	} else if s == "artifactSink" {
		cand = string(ErrorTypeArtifactSink)
	}
	if knownErrorTypes[ErrorType(cand)] {
		return ErrorType(cand)
	}
	return ErrorType(s)
}

// Artifacts holds the locations BrowserHive reported for a capture's outputs,
// each as written (`s3://bucket/key`, or whatever an artifact sink answered).
// An empty field means the artefact was not reported; only a success has any.
type Artifacts struct {
	PNG   string
	WebP  string
	HTML  string
	Links string
	MHTML string
	WACZ  string
}

// ErrorDetails is the manifest's account of a capture that did not succeed.
type ErrorDetails struct {
	Type    ErrorType
	Message string
	Step    string // v12+: which step failed, e.g. "load-pages"; "" when absent
}

// Manifest is one decoded BrowserHive result manifest (`.result.json`).
type Manifest struct {
	// TaskID is the capture's UUID, in lower case.
	TaskID string
	// CorrelationID is nil when absent or empty.
	CorrelationID *string
	// URL is the requested URL (not the final one after redirects).
	URL string
	// Labels is never nil; absent means empty.
	Labels []string
	Status Status
	// HTTPStatusCode is the main document's status; nil when absent.
	HTTPStatusCode *int
	// Timestamp is when BrowserHive built the result, i.e. the end of the
	// capture; the ledger's captured_at. Always in UTC.
	Timestamp time.Time
	Artifacts Artifacts
	// WaczComplete is completeness.complete; nil when absent.
	WaczComplete *bool
	// Signed is signature.signed; nil when absent.
	Signed *bool
	// Error is errorDetails; nil when absent.
	Error *ErrorDetails
}

// FieldError is a manifest that cannot be read, naming the field at fault
// (empty for the document as a whole) and what is wrong with it.
type FieldError struct {
	Field string
	Err   error
}

// Error reads "manifest: <field>: <problem>".
func (e *FieldError) Error() string {
	if e.Field == "" {
		return "manifest: " + e.Err.Error()
	}
	return "manifest: " + e.Field + ": " + e.Err.Error()
}

// Unwrap returns the problem, e.g. ErrNotS3Location for artifacts.wacz.
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field string, err error) error { return &FieldError{Field: field, Err: err} }

func fieldErrf(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Decode reads a BrowserHive result manifest of any dialect. Every error is a
// *FieldError naming the field and what is wrong with it.
//
// Members are looked up by their lowerCamelCase name and, failing that, by
// their proto field name (task_id, error_details, …), which proto3 JSON
// readers also accept. A member that is null counts as absent.
func Decode(data []byte) (Manifest, error) {
	var m Manifest
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return m, fieldErrf("", "not valid JSON: %v", err)
	}
	var raw json.RawMessage = data
	root, ok := asObject(raw)
	if !ok {
		return m, fieldErrf("", "want a JSON object, got %s", jsonKind(raw))
	}

	var err error
	if m.TaskID, err = decodeTaskID(root); err != nil {
		return Manifest{}, err
	}
	if m.CorrelationID, err = optionalString(root, "correlationId", "correlation_id"); err != nil {
		return Manifest{}, err
	}
	if m.URL, err = requiredString(root, "url"); err != nil {
		return Manifest{}, err
	}
	if m.Labels, err = decodeLabels(root); err != nil {
		return Manifest{}, err
	}
	if m.Status, err = decodeStatus(root); err != nil {
		return Manifest{}, err
	}
	if m.HTTPStatusCode, err = optionalInt(root, "httpStatusCode", "http_status_code"); err != nil {
		return Manifest{}, err
	}
	if m.Timestamp, err = decodeTimestamp(root); err != nil {
		return Manifest{}, err
	}
	if m.Artifacts, err = decodeArtifacts(root); err != nil {
		return Manifest{}, err
	}
	if m.WaczComplete, err = nestedBool(root, "completeness", "complete"); err != nil {
		return Manifest{}, err
	}
	if m.Signed, err = nestedBool(root, "signature", "signed"); err != nil {
		return Manifest{}, err
	}
	if m.Error, err = decodeErrorDetails(root); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

func requiredString(o object, names ...string) (string, error) {
	raw, name, ok := o.lookup(names...)
	if !ok {
		return "", fieldErr(names[0], errMissing)
	}
	s, ok := asString(raw)
	if !ok {
		return "", fieldErr(name, wantType("a string", raw))
	}
	if s == "" {
		return "", fieldErrf(name, "empty")
	}
	return s, nil
}

// optionalString returns nil for an absent, null or empty string.
func optionalString(o object, names ...string) (*string, error) {
	raw, name, ok := o.lookup(names...)
	if !ok {
		return nil, nil
	}
	s, ok := asString(raw)
	if !ok {
		return nil, fieldErr(name, wantType("a string", raw))
	}
	if s == "" {
		return nil, nil
	}
	return &s, nil
}

func optionalInt(o object, names ...string) (*int, error) {
	raw, name, ok := o.lookup(names...)
	if !ok {
		return nil, nil
	}
	n, err := asInt(raw)
	if err != nil {
		return nil, fieldErr(name, err)
	}
	return &n, nil
}

func decodeTaskID(o object) (string, error) {
	s, err := requiredString(o, "taskId", "task_id")
	if err != nil {
		return "", err
	}
	id, ok := canonicalUUID(s)
	if !ok {
		_, name, _ := o.lookup("taskId", "task_id")
		return "", fieldErrf(name, "not a UUID: %s", quoteShort(s))
	}
	return id, nil
}

// canonicalUUID accepts the hyphenated 8-4-4-4-12 hex form in any case, of any
// version, and returns it in lower case, so that one capture always yields the
// same capture_job:<taskId> object whichever path recorded it.
func canonicalUUID(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return "", false
			}
		}
	}
	return strings.ToLower(s), true
}

func decodeLabels(o object) ([]string, error) {
	raw, name, ok := o.lookup("labels")
	if !ok {
		return []string{}, nil
	}
	if jsonKind(raw) != "an array" {
		return nil, fieldErr(name, wantType("an array of strings", raw))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fieldErr(name, wantType("an array of strings", raw))
	}
	labels := make([]string, 0, len(items))
	for i, item := range items {
		s, ok := asString(item)
		if !ok {
			return nil, fieldErr(fmt.Sprintf("%s[%d]", name, i), wantType("a string", item))
		}
		labels = append(labels, s)
	}
	return labels, nil
}

func decodeStatus(o object) (Status, error) {
	s, err := requiredString(o, "status")
	if err != nil {
		return "", err
	}
	st, ok := ParseStatus(s)
	if !ok {
		return "", fieldErrf("status", "unknown value %s", quoteShort(s))
	}
	return st, nil
}

func decodeTimestamp(o object) (time.Time, error) {
	s, err := requiredString(o, "timestamp")
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fieldErrf("timestamp", "not an RFC 3339 time: %s", quoteShort(s))
	}
	return t.UTC(), nil
}

// decodeArtifacts reads the six artefact kinds BrowserHive knows; other keys
// are ignored like any unknown field. A present location must be a non-empty
// string.
func decodeArtifacts(o object) (Artifacts, error) {
	var a Artifacts
	raw, name, ok := o.lookup("artifacts")
	if !ok {
		return a, nil
	}
	arts, ok := asObject(raw)
	if !ok {
		return a, fieldErr(name, wantType("an object", raw))
	}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"png", &a.PNG}, {"webp", &a.WebP}, {"html", &a.HTML},
		{"links", &a.Links}, {"mhtml", &a.MHTML}, {"wacz", &a.WACZ},
	} {
		v, _, ok := arts.lookup(f.key)
		if !ok {
			continue
		}
		s, ok := asString(v)
		if !ok {
			return Artifacts{}, fieldErr(name+"."+f.key, wantType("a string", v))
		}
		if s == "" {
			return Artifacts{}, fieldErrf(name+"."+f.key, "empty")
		}
		*f.dst = s
	}
	return a, nil
}

// nestedBool reads parent.member as an optional boolean.
func nestedBool(o object, parent, member string) (*bool, error) {
	raw, _, ok := o.lookup(parent)
	if !ok {
		return nil, nil
	}
	obj, ok := asObject(raw)
	if !ok {
		return nil, fieldErr(parent, wantType("an object", raw))
	}
	v, _, ok := obj.lookup(member)
	if !ok {
		return nil, nil
	}
	b, ok := asBool(v)
	if !ok {
		return nil, fieldErr(parent+"."+member, wantType("a boolean", v))
	}
	return &b, nil
}

func decodeErrorDetails(o object) (*ErrorDetails, error) {
	raw, name, ok := o.lookup("errorDetails", "error_details")
	if !ok {
		return nil, nil
	}
	obj, ok := asObject(raw)
	if !ok {
		return nil, fieldErr(name, wantType("an object", raw))
	}
	var d ErrorDetails
	for _, f := range []struct {
		key string
		dst *string
	}{{"message", &d.Message}, {"step", &d.Step}} {
		v, _, ok := obj.lookup(f.key)
		if !ok {
			continue
		}
		s, ok := asString(v)
		if !ok {
			return nil, fieldErr(name+"."+f.key, wantType("a string", v))
		}
		*f.dst = s
	}
	if v, _, ok := obj.lookup("type"); ok {
		s, ok := asString(v)
		if !ok {
			return nil, fieldErr(name+".type", wantType("a string", v))
		}
		d.Type = ParseErrorType(s)
	}
	return &d, nil
}
