package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/strictjson"
)

// The crawl routes' request bodies are read strictly, in the words of a JSON
// Schema validator (the reference API's Fastify/ajv): unknown keys, wrong
// types, out-of-range values and strings the ledger will not keep are a
// *ledger.FieldError whose Field is the place inside the body ("" for the
// body itself, "results/3/taskId"); the route names the body (body/…).
// What the values mean is the use-case's to judge (crawl's Validate and
// Normalize), in the same error type.

// maxInt32 is the largest integer a body may hold where PostgreSQL keeps an
// integer (a depth, a target limit).
const maxInt32 = math.MaxInt32

func invalidField(field, format string, args ...any) error {
	return &ledger.FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

type jsonObject struct {
	field string
	m     map[string]json.RawMessage
}

func jsonKind(raw json.RawMessage) string {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// decodeObject reads raw as a JSON object whose keys are all in allowed.
// The whole body (field "") is also checked, once, for strings the ledger
// will not keep, so that every crawl body gets the same rule wherever its
// strings end up (read field by field, handed to the rule parser, or
// ignored).
func decodeObject(raw json.RawMessage, field string, allowed ...string) (*jsonObject, error) {
	if !json.Valid(raw) {
		return nil, invalidField(field, "is not valid JSON")
	}
	if jsonKind(raw) != "object" {
		return nil, invalidField(field, "must be object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, invalidField(field, "must be object")
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		q := make([]string, len(unknown))
		for i, k := range unknown {
			q[i] = strconv.Quote(k)
		}
		return nil, invalidField(field, "must NOT have additional properties: %s", strings.Join(q, ", "))
	}
	if field == "" {
		if err := strictjson.CheckStrings(raw); err != nil {
			return nil, err
		}
	}
	return &jsonObject{field: field, m: m}, nil
}

func (o *jsonObject) sub(key string) string { return strictjson.Join(o.field, key) }

// require reports the first missing key among keys.
func (o *jsonObject) require(keys ...string) error {
	for _, k := range keys {
		if _, ok := o.m[k]; !ok {
			return invalidField(o.field, "must have required property '%s'", k)
		}
	}
	return nil
}

// int reads an optional integer in [min, max]; nil when absent.
func (o *jsonObject) int(key string, min, max int) (*int, error) {
	raw, ok := o.m[key]
	if !ok {
		return nil, nil
	}
	field := o.sub(key)
	if jsonKind(raw) != "number" {
		return nil, invalidField(field, "must be integer")
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || math.IsInf(f, 0) || f != math.Trunc(f) {
		return nil, invalidField(field, "must be integer")
	}
	if f < float64(min) {
		return nil, invalidField(field, "must be >= %d", min)
	}
	if f > float64(max) {
		return nil, invalidField(field, "must be <= %d", max)
	}
	n := int(f)
	return &n, nil
}

// str reads an optional string of at least minLen characters (and at most
// maxLen when maxLen > 0); "" when absent.
func (o *jsonObject) str(key string, minLen, maxLen int) (string, error) {
	raw, ok := o.m[key]
	if !ok {
		return "", nil
	}
	return jsonString(raw, o.sub(key), minLen, maxLen)
}

func jsonString(raw json.RawMessage, field string, minLen, maxLen int) (string, error) {
	if jsonKind(raw) != "string" {
		return "", invalidField(field, "must be string")
	}
	if _, reason := strictjson.ScanString(bytes.TrimLeft(raw, " \t\r\n"), 0); reason != "" {
		return "", invalidField(field, "%s", reason)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalidField(field, "must be string")
	}
	n := utf8.RuneCountInString(s)
	if n < minLen {
		return "", invalidField(field, "must NOT have fewer than %d characters", minLen)
	}
	if maxLen > 0 && n > maxLen {
		return "", invalidField(field, "must NOT have more than %d characters", maxLen)
	}
	return s, nil
}

// dateTime reads an optional RFC 3339 date-time; zero when absent.
func (o *jsonObject) dateTime(key string) (time.Time, error) {
	raw, ok := o.m[key]
	if !ok {
		return time.Time{}, nil
	}
	s, err := jsonString(raw, o.sub(key), 0, 0)
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, invalidField(o.sub(key), "must match format \"date-time\"")
	}
	return t.UTC(), nil
}

// array reads an optional array; ok is false when absent.
func (o *jsonObject) array(key string) (items []json.RawMessage, ok bool, err error) {
	raw, ok := o.m[key]
	if !ok {
		return nil, false, nil
	}
	if jsonKind(raw) != "array" || json.Unmarshal(raw, &items) != nil {
		return nil, false, invalidField(o.sub(key), "must be array")
	}
	if items == nil {
		items = []json.RawMessage{}
	}
	return items, true, nil
}

// The keys of a level report and of one of its results. "compiled" is the
// capture-scheduler's record of the scripts its compile_scripts step built
// ({typescript, hostTypes, scripts}): accepted and ignored, since the
// ledger always dispatches `scripts: []` and so has no use for it.
var (
	reportKeys = []string{"depth", "results", "compiled"}
	pageKeys   = []string{"url", "status", "skipReason", "taskId", "correlationId", "submittedAt", "finishedAt",
		"linksLocation", "manifestLocation", "manifestError", "finalUrl"}
)

// DecodeLevelReport reads the body of POST /api/crawls/:id/pages: unknown
// keys, wrong types, empty strings where a value is required, dates that
// are not RFC 3339, and strings holding U+0000 or not valid UTF-8 are a
// *ledger.FieldError naming the place in the body. The scheduler's
// "compiled" object is accepted and not kept. What the values mean (URLs,
// statuses, task ids) is checked by crawl.LevelReport.Normalize.
func DecodeLevelReport(body []byte) (crawl.LevelReport, error) {
	o, err := decodeObject(body, "", reportKeys...)
	if err != nil {
		return crawl.LevelReport{}, err
	}
	if err := o.require("depth", "results"); err != nil {
		return crawl.LevelReport{}, err
	}
	var out crawl.LevelReport
	d, err := o.int("depth", 0, maxInt32)
	if err != nil {
		return crawl.LevelReport{}, err
	}
	out.Depth = *d
	if raw, ok := o.m["compiled"]; ok {
		if k := jsonKind(raw); k != "object" && k != "null" {
			return crawl.LevelReport{}, invalidField(o.sub("compiled"), "must be object")
		}
	}
	items, _, err := o.array("results")
	if err != nil {
		return crawl.LevelReport{}, err
	}
	out.Results = make([]crawl.PageReport, len(items))
	for i, it := range items {
		if out.Results[i], err = decodePageReport(it, fmt.Sprintf("%s/%d", crawl.FieldResults, i)); err != nil {
			return crawl.LevelReport{}, err
		}
	}
	return out, nil
}

func decodePageReport(raw json.RawMessage, field string) (crawl.PageReport, error) {
	o, err := decodeObject(raw, field, pageKeys...)
	if err != nil {
		return crawl.PageReport{}, err
	}
	if err := o.require("url", "status"); err != nil {
		return crawl.PageReport{}, err
	}
	var p crawl.PageReport
	var status string
	for _, f := range []struct {
		key    string
		dst    *string
		minLen int
	}{
		{"url", &p.URL, 1}, {"status", &status, 0}, {"skipReason", &p.SkipReason, 0},
		{"taskId", &p.TaskID, 1}, {"correlationId", &p.CorrelationID, 0},
		{"linksLocation", &p.LinksLocation, 0}, {"manifestLocation", &p.ManifestLocation, 1},
		{"manifestError", &p.ManifestError, 1}, {"finalUrl", &p.FinalURL, 0},
	} {
		if *f.dst, err = o.str(f.key, f.minLen, 0); err != nil {
			return crawl.PageReport{}, err
		}
	}
	p.Status = crawl.PageStatus(status)
	if p.SubmittedAt, err = o.dateTime("submittedAt"); err != nil {
		return crawl.PageReport{}, err
	}
	if p.FinishedAt, err = o.dateTime("finishedAt"); err != nil {
		return crawl.PageReport{}, err
	}
	return p, nil
}

var startKeys = []string{"seeds", "fromTargets", "rules", "maxDepth", "maxPages", "perHostDelayMs", "hostParallelism"}

// DecodeStartRequest reads the body of POST /api/crawls; an empty body is
// {}. Unknown keys, wrong types and out-of-range values are a
// *ledger.FieldError naming the place in the body.
func DecodeStartRequest(body []byte) (crawl.StartRequest, error) {
	var out crawl.StartRequest
	if len(bytes.TrimSpace(body)) == 0 {
		return out, nil
	}
	o, err := decodeObject(body, "", startKeys...)
	if err != nil {
		return crawl.StartRequest{}, err
	}
	if items, ok, err := o.array(crawl.FieldSeeds); err != nil {
		return crawl.StartRequest{}, err
	} else if ok {
		if len(items) == 0 {
			return crawl.StartRequest{}, invalidField(crawl.FieldSeeds, "must NOT have fewer than 1 items")
		}
		out.Seeds = make([]string, len(items))
		for i, it := range items {
			if out.Seeds[i], err = jsonString(it, fmt.Sprintf("%s/%d", crawl.FieldSeeds, i), 1, 0); err != nil {
				return crawl.StartRequest{}, err
			}
		}
	}
	if raw, ok := o.m[crawl.FieldFromTargets]; ok {
		ft, err := decodeObject(raw, crawl.FieldFromTargets, "limit")
		if err != nil {
			return crawl.StartRequest{}, err
		}
		out.FromTargets = &crawl.FromTargets{}
		if out.FromTargets.Limit, err = ft.int("limit", 1, maxInt32); err != nil {
			return crawl.StartRequest{}, err
		}
	}
	if raw, ok := o.m[crawl.FieldRules]; ok {
		rs, err := rules.ParseJSON(raw)
		if err != nil {
			return crawl.StartRequest{}, crawl.RuleFieldError(err)
		}
		out.Rules = rs
	}
	for _, f := range []struct {
		key      string
		dst      **int
		min, max int
	}{
		{crawl.FieldMaxDepth, &out.MaxDepth, 0, crawl.MaxDepthLimit},
		{crawl.FieldMaxPages, &out.MaxPages, 1, crawl.MaxPagesLimit},
		{crawl.FieldPerHostDelayMs, &out.PerHostDelayMs, 0, crawl.MaxPerHostDelayMs},
		{crawl.FieldHostParallelism, &out.HostParallelism, crawl.MinHostParallelism, crawl.MaxHostParallelism},
	} {
		if *f.dst, err = o.int(f.key, f.min, f.max); err != nil {
			return crawl.StartRequest{}, err
		}
	}
	return out, nil
}

// DecodeFailRequest reads the optional body of POST /api/crawls/:id/failed
// ({reason?: string of at most 2000 characters}, no other key).
func DecodeFailRequest(body []byte) (crawl.FailRequest, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return crawl.FailRequest{}, nil
	}
	o, err := decodeObject(body, "", crawl.FieldReason)
	if err != nil {
		return crawl.FailRequest{}, err
	}
	if _, ok := o.m[crawl.FieldReason]; !ok {
		return crawl.FailRequest{}, nil
	}
	r, err := o.str(crawl.FieldReason, 0, crawl.MaxFailReason)
	if err != nil {
		return crawl.FailRequest{}, err
	}
	return crawl.FailRequest{Reason: &r}, nil
}

// ParseDomainQuery reads GET /api/decisions' ?domain=&days=&action= (each at
// most once; unknown parameters are ignored): domain is required and a
// lowercase hostname, days a positive integer (90 when absent), action
// follow, capture or skip (skip when absent). Errors are a
// *ledger.FieldError naming the parameter ("" for the query itself).
func ParseDomainQuery(q url.Values) (crawl.DomainQuery, error) {
	for _, k := range []string{crawl.FieldDomain, crawl.FieldDays, crawl.FieldAction} {
		if len(q[k]) > 1 {
			return crawl.DomainQuery{}, invalidField(k, "must be a single value")
		}
	}
	dq := crawl.DomainQuery{Domain: q.Get(crawl.FieldDomain), Action: q.Get(crawl.FieldAction)}
	if !q.Has(crawl.FieldDomain) {
		return crawl.DomainQuery{}, invalidField("", "must have required property 'domain'")
	}
	if q.Has(crawl.FieldDays) {
		n, err := strconv.Atoi(q.Get(crawl.FieldDays))
		if err != nil || n < 1 {
			return crawl.DomainQuery{}, invalidField(crawl.FieldDays, "must be a positive integer")
		}
		dq.Days = n
	}
	if q.Has(crawl.FieldAction) && dq.Action == "" {
		return crawl.DomainQuery{}, invalidField(crawl.FieldAction, "must be equal to one of the allowed values (follow, capture, skip)")
	}
	if err := dq.Validate(); err != nil {
		return crawl.DomainQuery{}, err
	}
	return dq, nil
}
