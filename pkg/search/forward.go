package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// A search forwarded to the process holding the index: the caller the
// sending process already identified, and the request it already parsed.
// The holder checks everything again (DecodeForward) and runs the search
// as that caller, OpenFGA deciding.

// Forwarded is the body of a forwarded search.
type Forwarded struct {
	Subject string   `json:"subject"`
	Orgs    []string `json:"orgs"`
	// Q is the parsed query in its canonical form (Query.String).
	Q      string `json:"q"`
	Limit  int    `json:"limit"`
	Cursor string `json:"cursor,omitempty"`
	Crawl  string `json:"crawl,omitempty"`
	Host   string `json:"host,omitempty"`
	// From and To are the filter's bounds as parsed (To exclusive), RFC
	// 3339 with nanoseconds.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// MaxForwardedBytes bounds a forwarded search's body.
const MaxForwardedBytes = 64 << 10

// MaxForwardedOrgs bounds the organizations a forwarded caller names.
const MaxForwardedOrgs = 1000

// EncodeForward is the body forwarding req for subject with orgs.
func EncodeForward(subject string, orgs []string, req Request) ([]byte, error) {
	f := Forwarded{Subject: subject, Orgs: orgs, Q: req.Query.String(), Limit: req.Limit, Cursor: req.Cursor,
		Crawl: req.Filter.CrawlID, Host: req.Filter.Host}
	if f.Orgs == nil {
		f.Orgs = []string{}
	}
	if !req.Filter.From.IsZero() {
		f.From = req.Filter.From.UTC().Format(time.RFC3339Nano)
	}
	if !req.Filter.To.IsZero() {
		f.To = req.Filter.To.UTC().Format(time.RFC3339Nano)
	}
	return json.Marshal(f)
}

// DecodeForward reads a forwarded search: a JSON object of Forwarded's
// members only, each checked as the API checks its own (the subject and
// organizations as OpenFGA names, the query, limit, cursor and filters).
// Bad input is a *ledger.FieldError naming the member.
func DecodeForward(body []byte) (subject string, orgs []string, req Request, err error) {
	bad := func(field, reason string) error { return &ledger.FieldError{Field: field, Reason: reason} }
	if len(body) > MaxForwardedBytes {
		return "", nil, Request{}, bad("body", fmt.Sprintf("must NOT be larger than %d bytes", MaxForwardedBytes))
	}
	if !utf8.Valid(body) {
		return "", nil, Request{}, bad("body", "must be valid UTF-8")
	}
	var f Forwarded
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return "", nil, Request{}, bad("body", "must be a JSON object of subject, orgs, q, limit, cursor, crawl, host, from, to: "+err.Error())
	}
	if dec.More() {
		return "", nil, Request{}, bad("body", "must hold one JSON object")
	}
	if err := ledger.CheckSubject(f.Subject); err != nil {
		return "", nil, Request{}, bad("subject", err.Error())
	}
	if len(f.Orgs) > MaxForwardedOrgs {
		return "", nil, Request{}, bad("orgs", fmt.Sprintf("must NOT have more than %d items", MaxForwardedOrgs))
	}
	for _, o := range f.Orgs {
		if err := ledger.CheckOrganization(o); err != nil {
			return "", nil, Request{}, bad("orgs", err.Error())
		}
	}
	if f.Limit == 0 {
		return "", nil, Request{}, bad("limit", fmt.Sprintf("must be an integer between 1 and %d", MaxLimit))
	}
	req, err = NewRequest(f.Q, f.Limit, f.Cursor)
	if err != nil {
		return "", nil, Request{}, err
	}
	vals := map[string][]string{}
	if f.Crawl != "" {
		vals[ledger.FieldCrawl] = []string{f.Crawl}
	}
	if f.Host != "" {
		vals[ledger.FieldHost] = []string{f.Host}
	}
	if req.Filter, err = ledger.ParseArchiveFilter(vals, false); err != nil {
		return "", nil, Request{}, err
	}
	when := func(field, raw string) (time.Time, error) {
		if raw == "" {
			return time.Time{}, nil
		}
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			return time.Time{}, bad(field, "must be a date-time (RFC 3339)")
		}
		return t.UTC(), nil
	}
	if req.Filter.From, err = when("from", f.From); err != nil {
		return "", nil, Request{}, err
	}
	if req.Filter.To, err = when("to", f.To); err != nil {
		return "", nil, Request{}, err
	}
	if !req.Filter.From.IsZero() && !req.Filter.To.IsZero() && !req.Filter.From.Before(req.Filter.To) {
		return "", nil, Request{}, bad("to", "must be after from")
	}
	if f.Orgs == nil {
		f.Orgs = []string{}
	}
	return f.Subject, f.Orgs, req, nil
}
