// Package strictjson reads JSON request bodies strictly, for every route
// that takes one: the body must be one JSON value, and no string in it —
// values and property names — may hold U+0000 (raw or escaped), bytes that
// are not UTF-8, or an escaped lone surrogate ("\ud800", which
// encoding/json would silently turn into U+FFFD), and no object may hold a
// property twice (encoding/json would keep the last); decoding into a
// struct also refuses unknown keys, wrong types and trailing data.
//
// A refusal is a *ledger.FieldError whose Field is the place inside the
// body ("" for the body itself, "urls/0", a property name as a JSON Pointer
// token), or a *TooLarge; the edge that read the body names it its own way
// (the API answers "body/urls/0 must be valid UTF-8"). It does no I/O of
// its own beyond reading the body it is handed.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// TooLarge is a request body over its route's limit, answered 413 before
// identity: bad input gets a clear error.
type TooLarge struct{ Limit int64 }

func (e *TooLarge) Error() string { return fmt.Sprintf("body must be at most %d bytes", e.Limit) }

// refuse is a refusal at field ("" is the body itself).
func refuse(field, reason string) error {
	return &ledger.FieldError{Field: field, Reason: reason}
}

// Read reads at most limit bytes of the request body: a body over the
// limit is a *TooLarge, whether its Content-Length says so (refused
// unread) or its bytes do; one that cannot be read is refused at the body
// ("could not be read").
func Read(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, &TooLarge{Limit: limit}
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, refuse("", "could not be read")
	}
	if int64(len(data)) > limit {
		return nil, &TooLarge{Limit: limit}
	}
	return data, nil
}

// Check is the check every JSON request body passes before it is decoded,
// whichever route reads it: one JSON value, every string in it one the
// ledger keeps as sent (CheckStrings).
func Check(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return refuse("", "is not valid JSON")
	}
	if dec.More() {
		return refuse("", "must be one JSON object")
	}
	return CheckStrings(raw)
}

// Decode decodes data, one JSON object (empty is {}), into dst after
// Check: unknown keys, a wrong type and trailing data are refused
// (Problem says where).
func Decode(data []byte, dst any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	if err := Check(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return Problem(err)
	}
	if dec.More() {
		return refuse("", "must be one JSON object")
	}
	return nil
}

// Problem says, in a schema validator's words, what an error of
// encoding/json's Decode found: a wrong type at its field ("duration must
// be string"), a body that is not an object or not JSON, or an unknown key.
func Problem(err error) *ledger.FieldError {
	var typeErr *json.UnmarshalTypeError
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return &ledger.FieldError{Reason: "must be object"}
		}
		return &ledger.FieldError{Field: typeErr.Field, Reason: "must be " + typeErr.Type.String()}
	case errors.As(err, &syntax):
		return &ledger.FieldError{Reason: "is not valid JSON"}
	}
	// encoding/json says: json: unknown field "x"
	return &ledger.FieldError{Reason: "must NOT have additional properties (" + err.Error() + ")"}
}
