package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// CaptureTimePerURL bounds one URL of POST /api/captures (the capturer's
// own timeout is inside it); the request gets this much per URL.
const CaptureTimePerURL = 2 * time.Minute

// captureRoutes serves POST /api/captures: capture the pages now, answer
// each page's outcome (200). The request checks its body first (400), then
// the identity (401), then can_submit on the organization (404, like every
// denial).
func (s *Server) captureRoutes() {
	s.mux.HandleFunc("POST /api/captures", func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r, 1<<20)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		req, err := decodeCaptureRequest(body)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		who, err := s.who(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		req.Subject = who.Subject
		ctx, cancel := context.WithTimeout(r.Context(), time.Duration(len(req.URLs))*CaptureTimePerURL)
		defer cancel()
		res, err := s.Captures.Capture(ctx, req)
		if err != nil {
			s.fail(w, r, fieldRefusal(err))
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
}

// decodeCaptureRequest reads {"urls": [...], "organization": "...",
// "engine": "http"} (engine optional)
// strictly (checkBody, then unknown keys and wrong types are
// refused) and checks it whole.
func decodeCaptureRequest(body []byte) (archive.CaptureRequest, error) {
	if err := checkBody(body); err != nil {
		return archive.CaptureRequest{}, err
	}
	var raw struct {
		URLs         *[]string `json:"urls"`
		Organization *string   `json:"organization"`
		Engine       *string   `json:"engine"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return archive.CaptureRequest{}, &BadRequest{Message: "body/" + te.Field + " must be " + map[string]string{"urls": "an array of strings", "organization": "a string", "engine": "a string"}[rootField(te.Field)]}
		}
		return archive.CaptureRequest{}, &BadRequest{Message: "body must be a JSON object with urls, organization and engine only: " + err.Error()}
	}
	if dec.More() {
		return archive.CaptureRequest{}, &BadRequest{Message: "body must hold one JSON object"}
	}
	switch {
	case raw.URLs == nil:
		return archive.CaptureRequest{}, &BadRequest{Message: "body must have required property 'urls'"}
	case raw.Organization == nil:
		return archive.CaptureRequest{}, &BadRequest{Message: "body must have required property 'organization'"}
	}
	req := archive.CaptureRequest{URLs: *raw.URLs, Org: *raw.Organization}
	if raw.Engine != nil {
		req.Engine = *raw.Engine
	}
	if err := archive.CheckCaptureRequest(req); err != nil {
		return req, fieldRefusal(err)
	}
	return req, nil
}

func rootField(f string) string {
	for i := 0; i < len(f); i++ {
		if f[i] == '.' || f[i] == '[' {
			return f[:i]
		}
	}
	return f
}

// fieldRefusal answers a *ledger.FieldError of a body as a 400 naming
// body/<field>; other errors pass.
func fieldRefusal(err error) error {
	var fe *ledger.FieldError
	if errors.As(err, &fe) {
		return &BadRequest{Message: "body/" + fe.Field + " " + fe.Reason}
	}
	return err
}
