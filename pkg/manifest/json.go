package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// object is one decoded JSON object whose members are decoded on demand, so
// that a wrong type can be reported with the member's path.
type object map[string]json.RawMessage

// jsonKind names the JSON type of raw the way error messages say it.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func isNull(raw json.RawMessage) bool {
	return jsonKind(raw) == "null"
}

// asObject decodes raw as a JSON object; ok is false for any other JSON value.
func asObject(raw json.RawMessage) (object, bool) {
	if jsonKind(raw) != "an object" {
		return nil, false
	}
	var o object
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, false
	}
	return o, true
}

// lookup returns the first of names that is present and not null, and the
// name it was found under. Proto3 JSON readers accept a field's original
// snake_case name as well as its lowerCamelCase name, and null as "not set";
// so do we.
func (o object) lookup(names ...string) (json.RawMessage, string, bool) {
	for _, n := range names {
		if raw, ok := o[n]; ok && !isNull(raw) {
			return raw, n, true
		}
	}
	return nil, "", false
}

// asString decodes raw as a JSON string; ok is false for any other JSON value.
func asString(raw json.RawMessage) (string, bool) {
	if jsonKind(raw) != "a string" {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// asBool decodes raw as a JSON boolean; ok is false for any other JSON value.
func asBool(raw json.RawMessage) (bool, bool) {
	var b bool
	if jsonKind(raw) != "a boolean" {
		return false, false
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, false
	}
	return b, true
}

// asInt decodes raw as an integer written as a JSON number or, as proto3 JSON
// allows, as a decimal string.
func asInt(raw json.RawMessage) (int, error) {
	var text string
	switch jsonKind(raw) {
	case "a number":
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return 0, fmt.Errorf("want an integer, got %s", jsonKind(raw))
		}
		text = n.String()
	case "a string":
		text, _ = asString(raw)
	default:
		return 0, fmt.Errorf("want an integer, got %s", jsonKind(raw))
	}
	n, err := strconv.ParseInt(text, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("not an integer: %s", quoteShort(text))
	}
	return int(n), nil
}

// wantType is the error for a member of the wrong JSON type.
func wantType(want string, raw json.RawMessage) error {
	return fmt.Errorf("want %s, got %s", want, jsonKind(raw))
}

var errMissing = errors.New("missing")

// quoteShort quotes s for an error message, cutting it so that a hostile
// value cannot make a log line arbitrarily long.
func quoteShort(s string) string {
	const max = 80
	r := []rune(s)
	if len(r) > max {
		return strconv.Quote(string(r[:max])) + "…"
	}
	return strconv.Quote(s)
}
