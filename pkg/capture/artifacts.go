package capture

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// Job names one capture the way BrowserHive names a task: the stem of
// every object it writes is "<TaskID>_<CorrelationID>".
type Job struct {
	TaskID        string // a UUID, written in lower case
	CorrelationID string // may be empty ("<taskId>_.wacz")
	URL           string
	Labels        []string // recorded in the manifest and links file only
}

// NewTaskID returns a random (version 4) task UUID.
func NewTaskID() string { return uuid.NewString() }

// NewCorrelationID returns 8 random hex digits, the shape of a submission's
// correlation id.
func NewCorrelationID() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// JobError is a Job that cannot name objects, naming the field at fault.
type JobError struct {
	Field, Value, Reason string
}

// Error reads "capture job: <field> <value>: <reason>".
func (e *JobError) Error() string {
	return fmt.Sprintf("capture job: %s %q: %s", e.Field, e.Value, e.Reason)
}

// Check validates the job and puts TaskID in lower case. The correlation id
// must be filename-safe as BrowserHive requires it: at most 100 characters,
// no whitespace or control character, none of < > : " / \ ? * _ |. Labels
// follow the same rule and may not be empty.
func (j *Job) Check() error {
	id, err := uuid.Parse(j.TaskID)
	if err != nil || len(j.TaskID) != 36 {
		return &JobError{Field: "taskId", Value: j.TaskID, Reason: "not a UUID (8-4-4-4-12 hex digits)"}
	}
	j.TaskID = id.String()
	if reason := filenameProblem(j.CorrelationID); reason != "" && j.CorrelationID != "" {
		return &JobError{Field: "correlationId", Value: j.CorrelationID, Reason: reason}
	}
	for i, l := range j.Labels {
		if reason := filenameProblem(l); reason != "" {
			return &JobError{Field: fmt.Sprintf("labels[%d]", i), Value: l, Reason: reason}
		}
	}
	if _, err := CheckURL(j.URL); err != nil {
		return &JobError{Field: "url", Value: j.URL, Reason: err.(*URLError).Reason}
	}
	return nil
}

func filenameProblem(s string) string {
	switch {
	case s == "":
		return "empty"
	case len([]rune(s)) > 100:
		return "longer than 100 characters"
	case !utf8.ValidString(s):
		return "not valid UTF-8"
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune(`<>:"/\?*_|`, r) {
			return fmt.Sprintf("may not contain %q (whitespace, control characters and < > : \" / \\ ? * _ | are not filename-safe)", r)
		}
	}
	return ""
}

// Stem is "<taskId>_<correlationId>", the name every object of the job
// shares.
func (j Job) Stem() string { return j.TaskID + "_" + j.CorrelationID }

// The object names of a job, as BrowserHive names them.
func (j Job) WACZName() string     { return j.Stem() + ".wacz" }
func (j Job) LinksName() string    { return j.Stem() + ".links.json" }
func (j Job) ManifestName() string { return j.Stem() + ".result.json" }

// Content types of the objects.
const (
	ContentTypeWACZ = "application/wacz+zip"
	ContentTypeJSON = "application/json"
)

// LinksFile renders the job's `.links.json` as BrowserHive writes it:
// taskId, url (asked), finalUrl, labels, correlationId (when set),
// capturedAt and links [{href, text, rel}] with rel null when absent;
// 2-space indented, no trailing newline.
func LinksFile(j Job, r *Result) ([]byte, error) {
	type link struct {
		Href string  `json:"href"`
		Text string  `json:"text"`
		Rel  *string `json:"rel"`
	}
	out := struct {
		TaskID        string   `json:"taskId"`
		URL           string   `json:"url"`
		FinalURL      string   `json:"finalUrl"`
		Labels        []string `json:"labels"`
		CorrelationID string   `json:"correlationId,omitempty"`
		CapturedAt    string   `json:"capturedAt"`
		Links         []link   `json:"links"`
	}{
		TaskID: j.TaskID, URL: j.URL, FinalURL: r.FinalURL, Labels: labels(j),
		CorrelationID: j.CorrelationID, CapturedAt: isoMillis(r.Capture.Created), Links: []link{},
	}
	for _, l := range r.Links {
		x := link{Href: l.Href, Text: l.Text}
		if l.Rel != "" {
			x.Rel = &l.Rel
		}
		out.Links = append(out.Links, x)
	}
	return marshal(out)
}

func labels(j Job) []string {
	if j.Labels == nil {
		return []string{}
	}
	return j.Labels
}

// isoMillis is JavaScript's Date.toISOString: UTC, milliseconds, "Z".
func isoMillis(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Artifacts are where a job's objects were put (s3://bucket/key, or what
// the uploader answered); empty when not written.
type Artifacts struct {
	WACZ  string `json:"wacz,omitempty"`
	Links string `json:"links,omitempty"`
}

// Manifest statuses and error types, in BrowserHive's v12 spelling.
const (
	statusSuccess   = "success"
	statusFailed    = "failed"
	statusTimeout   = "timeout"
	statusHTTPError = "http_error"
)

// ManifestInput is what a `.result.json` says.
type ManifestInput struct {
	Job       Job
	Result    *Result
	Artifacts Artifacts // only reported on success
	// Summary is what wacz.Write reported; nil when no WACZ was written.
	Summary *wacz.Summary
	// Failure overrides Result.Failure: a failure after the capture
	// (packaging, upload). Step names where ("package-wacz", "upload-wacz").
	Failure *Failure
	Step    string
}

type manifestJSON struct {
	TaskID                  string            `json:"taskId"`
	CorrelationID           string            `json:"correlationId,omitempty"`
	URL                     string            `json:"url"`
	Labels                  []string          `json:"labels"`
	Status                  string            `json:"status"`
	HTTPStatusCode          int               `json:"httpStatusCode,omitempty"`
	Timestamp               string            `json:"timestamp"`
	CaptureProcessingTimeMs int64             `json:"captureProcessingTimeMs"`
	Artifacts               Artifacts         `json:"artifacts"`
	WaczStats               *waczStatsJSON    `json:"waczStats,omitempty"`
	Completeness            *completenessJSON `json:"completeness,omitempty"`
	ErrorDetails            *errorDetailsJSON `json:"errorDetails,omitempty"`
	Document                *documentJSON     `json:"document,omitempty"`
}

type waczStatsJSON struct {
	TotalRecorded           int   `json:"totalRecorded"`
	TotalBlocked            int   `json:"totalBlocked"`
	TotalDenied             int   `json:"totalDenied"`
	TotalSkippedContentType int   `json:"totalSkippedContentType"`
	TotalSkippedURLPolicy   int   `json:"totalSkippedUrlPolicy"`
	TotalTruncatedTooLarge  int   `json:"totalTruncatedTooLarge"`
	TotalTruncatedTaskCap   int   `json:"totalTruncatedTaskCap"`
	TotalFailed             int   `json:"totalFailed"`
	TotalIncomplete         int   `json:"totalIncomplete"`
	TotalBodyBytes          int64 `json:"totalBodyBytes"`
}

type completenessJSON struct {
	BodylessURLs  []string `json:"bodylessUrls"`
	TruncatedURLs []string `json:"truncatedUrls"`
	Complete      bool     `json:"complete"`
}

type errorDetailsJSON struct {
	Type           string `json:"type"`
	Message        string `json:"message"`
	HTTPStatusCode int    `json:"httpStatusCode,omitempty"`
	HTTPStatusText string `json:"httpStatusText,omitempty"`
	TimeoutMs      int64  `json:"timeoutMs,omitempty"`
	Step           string `json:"step,omitempty"`
}

type documentJSON struct {
	URL string `json:"url"`
}

// Completeness is BrowserHive's completeness of a capture written as a
// WACZ: bodyless URLs (seen only as 304), truncated URLs (a cap cut the body
// or kept the resource out), complete when both are empty.
func Completeness(r *Result, s *wacz.Summary) (bodyless, truncated []string, complete bool) {
	bodyless = []string{}
	truncated = slices.Clone(r.TruncatedURLs)
	if s != nil {
		bodyless = append(bodyless, s.BodylessURLs...)
		truncated = append(truncated, s.TruncatedURLs...)
	}
	slices.Sort(truncated)
	truncated = slices.Compact(truncated)
	if truncated == nil {
		truncated = []string{}
	}
	return bodyless, truncated, len(bodyless) == 0 && len(truncated) == 0
}

// ManifestFile renders the job's `.result.json` in BrowserHive's v12
// dialect (2-space indent, no trailing newline): success with artifacts,
// waczStats, completeness and document; or failed / timeout / http_error
// with empty artifacts and errorDetails.
func ManifestFile(in ManifestInput) ([]byte, error) {
	r := in.Result
	m := manifestJSON{
		TaskID: in.Job.TaskID, CorrelationID: in.Job.CorrelationID, URL: in.Job.URL, Labels: labels(in.Job),
		Timestamp:               isoMillis(r.Started.Add(r.Timings.Total)),
		CaptureProcessingTimeMs: r.Timings.Total.Milliseconds(),
	}
	f, step := in.Failure, in.Step
	if f == nil {
		f = r.Failure
		step = stepOf(f)
	}
	if f == nil {
		m.Status = statusSuccess
		m.HTTPStatusCode = r.Status
		m.Artifacts = in.Artifacts
		if in.Summary != nil {
			bodyless, truncated, complete := Completeness(r, in.Summary)
			m.Completeness = &completenessJSON{BodylessURLs: bodyless, TruncatedURLs: truncated, Complete: complete}
			m.WaczStats = &waczStatsJSON{
				TotalRecorded: r.Stats.Recorded, TotalBlocked: r.Stats.Refused, TotalDenied: r.Stats.Refused,
				TotalTruncatedTooLarge: r.Stats.TruncatedTooLarge, TotalTruncatedTaskCap: r.Stats.TruncatedPageCap,
				TotalFailed: r.Stats.Failed, TotalBodyBytes: r.Stats.BodyBytes,
			}
		}
		m.Document = &documentJSON{URL: r.FinalURL}
		return marshal(m)
	}
	d := &errorDetailsJSON{Message: f.Message, Step: step}
	switch f.Kind {
	case FailHTTP:
		m.Status, d.Type = statusHTTPError, "http"
		m.HTTPStatusCode, d.HTTPStatusCode, d.HTTPStatusText = f.Status, f.Status, f.StatusText
	case FailTimeout:
		m.Status, d.Type, d.TimeoutMs = statusTimeout, "timeout", f.Timeout.Milliseconds()
	case FailConnection:
		m.Status, d.Type = statusFailed, "connection"
	case FailCancelled:
		m.Status, d.Type = statusFailed, "cancelled"
	case FailArtifactSink:
		m.Status, d.Type = statusFailed, "artifact_sink"
	default: // refused (BrowserHive: "url is not allowed" is internal), internal
		m.Status, d.Type = statusFailed, "internal"
	}
	m.ErrorDetails = d
	return marshal(m)
}

func stepOf(f *Failure) string {
	if f == nil {
		return ""
	}
	if f.Kind == FailRefused {
		return "check-address"
	}
	return "load-pages"
}
