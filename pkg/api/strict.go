package api

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// CheckBodyStrings is the check every JSON request body passes before it is
// decoded, whichever route reads it: the body must be one JSON value, and no
// string in it — values and property names — may hold U+0000 (raw or
// escaped), bytes that are not UTF-8, or an escaped lone surrogate
// ("\ud800", which encoding/json would silently turn into U+FFFD). A
// refusal is a 400 naming the place: "body/urls/0 must be valid UTF-8".
// The crawl bodies run the same walk (checkStrings) from decodeObject.
func CheckBodyStrings(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return &BadRequest{Message: "body is not valid JSON"}
	}
	if dec.More() {
		return &BadRequest{Message: "body must be one JSON object"}
	}
	if err := checkStrings(raw); err != nil {
		var fe *ledger.FieldError
		if errors.As(err, &fe) {
			if fe.Field == "" {
				return &BadRequest{Message: "body " + fe.Reason}
			}
			return &BadRequest{Message: "body/" + fe.Field + " " + fe.Reason}
		}
		return err
	}
	return nil
}

// decodeStrict decodes data, one JSON object (empty is {}), into dst after
// CheckBodyStrings: unknown keys, a wrong type and trailing data are 400s.
func decodeStrict(data []byte, dst any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	if err := CheckBodyStrings(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return &BadRequest{Message: "body " + jsonProblem(err)}
	}
	if dec.More() {
		return &BadRequest{Message: "body must be one JSON object"}
	}
	return nil
}
