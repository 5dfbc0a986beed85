package crawl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Strict JSON reading for request bodies: unknown keys, wrong types and
// out-of-range values are refused with a *ValidationError naming the place,
// in the words of the API's JSON Schema validation.

type jsonObject struct {
	path string
	m    map[string]json.RawMessage
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
func decodeObject(raw json.RawMessage, path string, allowed ...string) (*jsonObject, error) {
	if !json.Valid(raw) {
		return nil, invalid(path, "is not valid JSON")
	}
	if jsonKind(raw) != "object" {
		return nil, invalid(path, "must be object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, invalid(path, "must be object")
	}
	var unknown []string
	for k := range m {
		if !contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, invalid(path, "must NOT have additional properties: %s", quoteJoin(unknown))
	}
	// A whole body (a path with no "/") is checked for strings the ledger
	// will not keep once, here, so that every crawl body gets the same rule
	// wherever its strings end up (read field by field, handed to the rule
	// parser, or ignored).
	if !strings.Contains(path, "/") {
		if err := checkStrings(raw, path); err != nil {
			return nil, err
		}
	}
	return &jsonObject{path: path, m: m}, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func quoteJoin(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func (o *jsonObject) has(key string) bool {
	_, ok := o.m[key]
	return ok
}

func (o *jsonObject) sub(key string) string { return o.path + "/" + key }

// require reports the first missing key among keys.
func (o *jsonObject) require(keys ...string) error {
	for _, k := range keys {
		if !o.has(k) {
			return invalid(o.path, "must have required property '%s'", k)
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
	n, err := jsonInt(raw, o.sub(key), min, max)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

func jsonInt(raw json.RawMessage, path string, min, max int) (int, error) {
	if jsonKind(raw) != "number" {
		return 0, invalid(path, "must be integer")
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || math.IsInf(f, 0) || f != math.Trunc(f) {
		return 0, invalid(path, "must be integer")
	}
	if f < float64(min) {
		return 0, invalid(path, "must be >= %d", min)
	}
	if f > float64(max) {
		return 0, invalid(path, "must be <= %d", max)
	}
	return int(f), nil
}

// str reads an optional string of at least minLen characters; ok is false
// when absent.
func (o *jsonObject) str(key string, minLen, maxLen int) (s string, ok bool, err error) {
	raw, ok := o.m[key]
	if !ok {
		return "", false, nil
	}
	s, err = jsonString(raw, o.sub(key), minLen, maxLen)
	return s, err == nil, err
}

func jsonString(raw json.RawMessage, path string, minLen, maxLen int) (string, error) {
	if jsonKind(raw) != "string" {
		return "", invalid(path, "must be string")
	}
	if reason := stringProblem(raw); reason != "" {
		return "", invalid(path, "%s", reason)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalid(path, "must be string")
	}
	n := utf8.RuneCountInString(s)
	if n < minLen {
		return "", invalid(path, "must NOT have fewer than %d characters", minLen)
	}
	if maxLen > 0 && n > maxLen {
		return "", invalid(path, "must NOT have more than %d characters", maxLen)
	}
	return s, nil
}

// dateTime reads an optional RFC 3339 date-time; zero when absent.
func (o *jsonObject) dateTime(key string) (time.Time, error) {
	s, ok, err := o.str(key, 0, 0)
	if err != nil || !ok {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, invalid(o.sub(key), "must match format \"date-time\"")
	}
	return t.UTC(), nil
}

// array reads an optional array; ok is false when absent.
func (o *jsonObject) array(key string) (items []json.RawMessage, ok bool, err error) {
	raw, ok := o.m[key]
	if !ok {
		return nil, false, nil
	}
	if jsonKind(raw) != "array" {
		return nil, false, invalid(o.sub(key), "must be array")
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, false, invalid(o.sub(key), "must be array")
	}
	if items == nil {
		items = []json.RawMessage{}
	}
	return items, true, nil
}

// ruleSchemaError turns a rule list's shape error into a validation error.
func ruleSchemaError(err error, base string) error {
	var se *rules.SchemaError
	if !errors.As(err, &se) {
		return err
	}
	path := base
	if se.Index >= 0 {
		path += fmt.Sprintf("/%d", se.Index)
	}
	if se.Field != "" {
		path += "/" + se.Field
	}
	return &ValidationError{Path: path, Reason: se.Reason}
}

// checkID refuses a crawl id that is not a UUID.
func checkID(id string) error {
	if !ledger.IsUUID(id) {
		return invalid("params/id", "must match format \"uuid\"")
	}
	return nil
}
