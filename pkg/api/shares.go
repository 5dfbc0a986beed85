package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/strictjson"
)

// shareBodyLimit bounds a share request's body: a name and a duration.
const shareBodyLimit = 4096

// shareRoutes registers the share and delete routes that are configured.
func (s *Server) shareRoutes() {
	if s.Shares != nil {
		s.mux.HandleFunc("POST /api/archives/{id}/shares", s.grantShare())
		s.mux.HandleFunc("GET /api/archives/{id}/shares", s.listShares())
		s.mux.HandleFunc("DELETE /api/archives/{id}/shares/{shareId}", s.revokeShare())
	}
	if s.Deleter != nil {
		s.mux.HandleFunc("DELETE /api/archives/{id}", s.deleteArchive())
	}
}

// shareInputError renders the share use-case's *ledger.FieldError as the
// 400 naming the body field (body/user, body/duration, …).
func shareInputError(err error) error {
	var fe *ledger.FieldError
	if errors.As(err, &fe) {
		return &BadRequest{Message: inBody + "/" + fe.Error()}
	}
	return err
}

type grantInput struct {
	id  string
	req archive.ShareRequest
}

// ParseShareBody reads POST /api/archives/{id}/shares's body:
// {"user":"carol","duration":"72h"} or {"organization":"partner",
// "duration":"72h"}, through the strict decoder (strictjson.Decode: the
// JSON decoder would replace what is not UTF-8 and lone surrogates, and a
// grant must name exactly whom it was asked for); one object, no other
// keys; the values are checked by ShareRequest.Parse.
func ParseShareBody(data []byte) (archive.ShareRequest, error) {
	var b struct {
		User         *string `json:"user"`
		Organization *string `json:"organization"`
		Duration     *string `json:"duration"`
	}
	if err := asBody(strictjson.Decode(data, &b)); err != nil {
		return archive.ShareRequest{}, err
	}
	req := archive.ShareRequest{User: b.User, Organization: b.Organization}
	if b.Duration != nil {
		req.Duration = *b.Duration
	}
	return req, nil
}

func (s *Server) grantShare() http.HandlerFunc {
	return handle(s, http.StatusCreated,
		func(r *http.Request) (grantInput, error) {
			id, err := UUIDParam(r, "id")
			if err != nil {
				return grantInput{}, err
			}
			data, err := readBody(r, shareBodyLimit)
			if err != nil {
				return grantInput{}, err
			}
			req, err := ParseShareBody(data)
			if err != nil {
				return grantInput{}, err
			}
			// Every check of the input answers 400 before identity.
			if _, _, err := s.Shares.Validate(req); err != nil {
				return grantInput{}, shareInputError(err)
			}
			return grantInput{id, req}, nil
		},
		func(ctx context.Context, who identity.Identity, in grantInput) (any, error) {
			g, err := s.Shares.Grant(ctx, who.Subject, in.id, in.req)
			return g, shareInputError(err)
		})
}

func (s *Server) listShares() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (string, error) { return UUIDParam(r, "id") },
		func(ctx context.Context, who identity.Identity, id string) (any, error) {
			return s.Shares.List(ctx, who.Subject, id)
		})
}

func (s *Server) revokeShare() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) ([2]string, error) {
			id, err := UUIDParam(r, "id")
			if err != nil {
				return [2]string{}, err
			}
			share, err := UUIDParam(r, "shareId")
			if err == nil {
				err = DecodeBody(r, &struct{}{}, 1024)
			}
			return [2]string{id, share}, err
		},
		func(ctx context.Context, who identity.Identity, ids [2]string) (any, error) {
			sh, _, err := s.Shares.Revoke(ctx, who.Subject, ids[0], ids[1])
			return sh, err
		})
}

// deleteArchive answers 200 when the archive and its objects are gone, and
// 202 when the ledger entry is gone but removing the objects failed: the
// deletion is recorded and the next run removes them (pending says why).
func (s *Server) deleteArchive() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		id, err := UUIDParam(r, "id")
		if err == nil {
			err = DecodeBody(r, &struct{}{}, 1024)
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		who, err := s.who(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		d, err := s.Deleter.Delete(ctx, who.Subject, id)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		status := http.StatusOK
		if !d.ObjectsDeleted {
			status = http.StatusAccepted
		}
		writeJSON(w, status, d)
	}
}
