package crawl

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// PageStatus is what the runner says became of one page.
type PageStatus string

// The page statuses of a level report.
const (
	StatusCaptured PageStatus = "captured"
	StatusFailed   PageStatus = "failed"
	StatusSkipped  PageStatus = "skipped"
)

// SkipRobots is the skip reason of a page robots.txt disallowed.
const SkipRobots = "robots"

// LevelReport is the body of POST /api/crawls/:id/pages: what the runner
// did with one level's pages.
type LevelReport struct {
	// Depth is the level's depth (0 for the seeds).
	Depth   int          `json:"depth"`
	Results []PageReport `json:"results"`
}

// PageReport is one page of a level report. Empty strings and zero times
// are absent values. A page robots.txt kept out is
// {Status: "skipped", SkipReason: "robots"}.
type PageReport struct {
	// URL is the page as dispatched (it is matched after normalisation).
	URL    string     `json:"url"`
	Status PageStatus `json:"status"`
	// SkipReason says why a page was skipped or failed.
	SkipReason string `json:"skipReason,omitempty"`
	// TaskID is the capture's UUID; with it comes exactly one of
	// ManifestLocation ("s3://bucket/key" of the .result.json) and
	// ManifestError (why there is none), and neither comes without it.
	TaskID           string `json:"taskId,omitempty"`
	CorrelationID    string `json:"correlationId,omitempty"`
	ManifestLocation string `json:"manifestLocation,omitempty"`
	ManifestError    string `json:"manifestError,omitempty"`
	// SubmittedAt and FinishedAt are when the capture was asked for and
	// when it ended (the evidence of pacing).
	SubmittedAt time.Time `json:"submittedAt,omitzero"`
	FinishedAt  time.Time `json:"finishedAt,omitzero"`
	// FinalURL is where the page ended after redirects.
	FinalURL string `json:"finalUrl,omitempty"`
	// LinksLocation is the "s3://bucket/key" of the page's .links.json.
	LinksLocation string `json:"linksLocation,omitempty"`
}

// Validate checks a report whole before anything is written: the depth is
// not negative; each page's URL is an absolute http(s) URL, reported once
// (after normalisation); its status is captured, failed or skipped; a
// taskId is a UUID and comes with exactly one of manifestLocation and
// manifestError, neither of which comes without a taskId; no free-text
// string holds U+0000 or is not UTF-8. Every error is a *ledger.FieldError
// naming the field ("depth", "results/3/taskId").
func (r LevelReport) Validate() error {
	_, err := r.Normalize()
	return err
}

// Normalize validates the report (see Validate) and returns it in normal
// form, the form that is written and digested: URLs normalised, task ids in
// lower case, times in UTC. The crawl operations take the result as it is
// (it is not checked again).
func (r LevelReport) Normalize() (Report, error) {
	if r.Depth < 0 {
		return Report{}, invalid(FieldDepth, "must be >= 0")
	}
	out := LevelReport{Depth: r.Depth, Results: make([]PageReport, len(r.Results))}
	urls := make([]rules.URL, len(r.Results))
	seen := make(map[string]int, len(r.Results))
	for i, p := range r.Results {
		path := fmt.Sprintf("%s/%d", FieldResults, i)
		for _, f := range []struct{ key, v string }{
			{"url", p.URL}, {"status", string(p.Status)}, {"skipReason", p.SkipReason}, {"taskId", p.TaskID},
			{"correlationId", p.CorrelationID}, {"manifestLocation", p.ManifestLocation},
			{"manifestError", p.ManifestError}, {"finalUrl", p.FinalURL}, {"linksLocation", p.LinksLocation},
		} {
			if reason := TextProblem(f.v); reason != "" {
				return Report{}, invalid(path+"/"+f.key, "%s", reason)
			}
		}
		u, err := rules.ParseURL(p.URL)
		if err != nil {
			return Report{}, invalid(path+"/url", "must be an absolute http(s) URL")
		}
		if j, dup := seen[u.Normalized]; dup {
			rep := &RepeatedPageError{First: j, URL: u.Normalized}
			return Report{}, &ledger.FieldError{Field: path + "/url", Reason: rep.Error(), Err: rep}
		}
		seen[u.Normalized] = i
		switch p.Status {
		case StatusCaptured, StatusFailed, StatusSkipped:
		default:
			return Report{}, invalid(path+"/status", "must be equal to one of the allowed values (captured, failed, skipped)")
		}
		if p.TaskID != "" {
			if !ledger.IsUUID(p.TaskID) {
				return Report{}, invalid(path+"/taskId", "must match format \"uuid\"")
			}
			if (p.ManifestLocation == "") == (p.ManifestError == "") {
				return Report{}, invalid(path, "must have exactly one of 'manifestLocation' and 'manifestError' with 'taskId'")
			}
		} else {
			if p.ManifestLocation != "" {
				return Report{}, invalid(path, "must have property 'taskId' when property 'manifestLocation' is present")
			}
			if p.ManifestError != "" {
				return Report{}, invalid(path, "must have property 'taskId' when property 'manifestError' is present")
			}
		}
		p.URL, urls[i] = u.Normalized, u
		p.TaskID = lowerASCII(p.TaskID)
		if !p.SubmittedAt.IsZero() {
			p.SubmittedAt = p.SubmittedAt.UTC()
		}
		if !p.FinishedAt.IsZero() {
			p.FinishedAt = p.FinishedAt.UTC()
		}
		out.Results[i] = p
	}
	data, err := json.Marshal(out)
	if err != nil {
		return Report{}, err
	}
	return Report{LevelReport: out, urls: urls, digest: sha256.Sum256(data), normal: true}, nil
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Digest is the sha256 of the report in canonical form (normalised URLs,
// lower-case task ids, UTC times, fixed key order): two deliveries of the
// same report have the same digest whatever their JSON spelling. The
// report must be valid.
func (r LevelReport) Digest() [32]byte {
	n, err := r.Normalize()
	if err != nil {
		data, _ := json.Marshal(r)
		return sha256.Sum256(data)
	}
	return n.digest
}

// Report is a level report checked and put in normal form once (see
// LevelReport.Normalize): URLs normalised, with their parsed form kept for
// the rules; task ids in lower case; times in UTC; and its digest. The
// crawl use-cases work on it, never on the report as received.
type Report struct {
	LevelReport
	urls   []rules.URL
	digest [32]byte
	normal bool // made by Normalize, not by hand
}

// Reported is what ReportLevel takes: a LevelReport as
// received, or a Report the caller already made with Normalize (the API
// does, to refuse a bad report before it asks who is calling), which is not
// checked again.
type Reported interface {
	normalized() (Report, error)
}

func (r LevelReport) normalized() (Report, error) { return r.Normalize() }

func (r Report) normalized() (Report, error) {
	if !r.normal {
		return r.LevelReport.Normalize()
	}
	return r, nil
}

// NextPage is a page of the next level.
type NextPage struct {
	URL   string `json:"url"`
	Host  string `json:"host"`
	Depth int    `json:"depth"`
}

// LevelResult is the answer to a level report: the next level's pages (the
// ledger has already dispatched them) and this level's stop reason when the
// crawl ended with it (completed, max_depth or max_pages), else nil.
type LevelResult struct {
	Next       []NextPage `json:"next"`
	StopReason *string    `json:"stopReason"`
	// Refused lists the results that were not admitted because they are
	// not this crawl's to report (docs/security.md); never nil.
	Refused []Refusal `json:"refused"`
	// Replayed says the same report had been accepted before: this is its
	// answer again, and nothing changed.
	Replayed bool `json:"-"`
}

// Refusal is one result of a level report that was refused: nothing of it
// was admitted (no archive, no submission, no tuple).
type Refusal struct {
	URL    string `json:"url"`
	TaskID string `json:"taskId,omitempty"`
	Reason string `json:"reason"`
}

// The reasons a result is refused for.
const (
	RefuseNotPending   = "not a pending page of this crawl at this depth"
	RefuseCorrelation  = "the report's correlationId is not this crawl"
	RefuseManifestTask = "the manifest belongs to another task"
	RefuseManifestCorr = "the manifest's correlationId is not this crawl"
	RefuseManifestURL  = "the manifest's url is not this page"
)
