package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
	"github.com/capture-ledger/ledgerctl/pkg/replay/viewer"
)

// Replay is what the replay routes need. On the API's origin: POST
// /api/archives/{id}/replay, /api/crawls/{id}/replay and /api/replay
// (viewer links, each for a replay session of its own). On each session's
// origin, <label>.<replay domain>, and nowhere else: the viewer
// (ReplayWeb.page), its service worker, the archive reads and a
// collection's listing, all served by package viewer, which reads no
// identity. The API's origin serves none of them: archived pages may carry
// hostile script, which must never run where identities, tokens or other
// sessions' data live.
type Replay = viewer.Config

// replayRoutes registers the routes of the API's origin that mint replay
// sessions (Server.Replay is set).
func (s *Server) replayRoutes() {
	s.mux.HandleFunc("POST /api/archives/{id}/replay", s.replayLink())
	s.mux.HandleFunc("POST /api/crawls/{id}/replay", s.crawlReplayLink())
	s.mux.HandleFunc("POST /api/replay", s.setReplayLink())
}

// ReplayLink is the body of the replay routes.
type ReplayLink = replay.Link

type replayLinkRequest struct {
	id, page string
	ids      []string
	ttl      time.Duration
}

// replayTTL reads the optional expiresIn (seconds) of a replay route's
// body.
func replayTTL(expiresIn *int64) (time.Duration, error) {
	if expiresIn == nil {
		return 0, nil
	}
	lo, hi := int64(replay.MinTTL/time.Second), int64(replay.MaxTTL/time.Second)
	if *expiresIn < lo || *expiresIn > hi {
		return 0, &BadRequest{Message: "body/expiresIn must be between " + strconv.FormatInt(lo, 10) + " and " + strconv.FormatInt(hi, 10) + " (seconds)"}
	}
	return time.Duration(*expiresIn) * time.Second, nil
}

// caller is who asks for a session, and until when their credential holds.
func caller(who identity.Identity) replay.Caller {
	return replay.Caller{Subject: who.Subject, Organizations: who.Organizations, Expires: who.Expires}
}

// parseReplayOf reads a replay route of one thing ({id}: an archive, or a
// crawl): the id, and a body with an optional expiresIn and, for an
// archive (withPage), the page to open first.
func parseReplayOf(r *http.Request, withPage bool) (replayLinkRequest, error) {
	id, err := UUIDParam(r, "id")
	if err != nil {
		return replayLinkRequest{}, err
	}
	var body struct {
		ExpiresIn *int64 `json:"expiresIn"`
		Page      string `json:"page"`
	}
	if err := DecodeBody(r, &body, 2*replay.MaxPageBytes); err != nil {
		return replayLinkRequest{}, err
	}
	switch {
	case body.Page != "" && !withPage:
		return replayLinkRequest{}, &BadRequest{Message: "body must NOT have additional properties: page (a collection opens at its first page)"}
	case body.Page != "":
		if err := replay.CheckPage(body.Page); err != nil {
			return replayLinkRequest{}, &BadRequest{Message: "body/page " + err.Error()}
		}
	}
	ttl, err := replayTTL(body.ExpiresIn)
	return replayLinkRequest{id: id, page: body.Page, ttl: ttl}, err
}

// replayLink opens a session on one archive: the same identity and
// can_view check as minting a presigned URL (404 otherwise). An optional
// body asks for another lifetime than the hour ({"expiresIn": seconds},
// never past the caller's credential) and names the archived page to open
// ({"page": url}, the console sends the row's sourceUrl; without it the
// viewer opens the archive's first page).
func (s *Server) replayLink() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (replayLinkRequest, error) { return parseReplayOf(r, true) },
		func(ctx context.Context, who identity.Identity, in replayLinkRequest) (any, error) {
			m, err := s.Replay.Service.Mint(ctx, caller(who), in.id, in.ttl)
			if err != nil {
				return nil, err
			}
			o := s.Replay.Origins
			return ReplayLink{URL: replay.ViewerURL(o, m, replay.Source(o, m, in.id), in.page), ExpiresAt: m.ExpiresAt.UTC()}, nil
		})
}

// crawlReplayLink opens a session replaying a crawl's archives as one
// collection: those the caller may view (404 when none, or no such crawl).
func (s *Server) crawlReplayLink() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (replayLinkRequest, error) { return parseReplayOf(r, false) },
		func(ctx context.Context, who identity.Identity, in replayLinkRequest) (any, error) {
			m, err := s.Replay.Service.MintCrawl(ctx, caller(who), in.id, in.ttl)
			return s.collectionLink(m, err)
		})
}

// setReplayLink opens a session replaying chosen archives as one
// collection ({"archives": [ids]}, 1 to replay.MaxSet): those the caller
// may view (404 when none).
func (s *Server) setReplayLink() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (replayLinkRequest, error) {
			var body struct {
				Archives  []string `json:"archives"`
				ExpiresIn *int64   `json:"expiresIn"`
			}
			if err := DecodeBody(r, &body, 64*1024); err != nil {
				return replayLinkRequest{}, err
			}
			if len(body.Archives) == 0 || len(body.Archives) > replay.MaxSet {
				return replayLinkRequest{}, &BadRequest{Message: "body/archives must hold 1 to " + strconv.Itoa(replay.MaxSet) + " archive ids"}
			}
			seen := map[string]bool{}
			var ids []string
			for i, raw := range body.Archives {
				u, err := uuid.Parse(raw)
				if err != nil || len(raw) != 36 {
					return replayLinkRequest{}, &BadRequest{Message: "body/archives/" + strconv.Itoa(i) + " must match format \"uuid\""}
				}
				if id := u.String(); !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
			ttl, err := replayTTL(body.ExpiresIn)
			return replayLinkRequest{ids: ids, ttl: ttl}, err
		},
		func(ctx context.Context, who identity.Identity, in replayLinkRequest) (any, error) {
			m, err := s.Replay.Service.MintSet(ctx, caller(who), in.ids, in.ttl)
			return s.collectionLink(m, err)
		})
}

func (s *Server) collectionLink(m replay.Session, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	o := s.Replay.Origins
	return ReplayLink{URL: replay.ViewerURL(o, m, replay.Source(o, m, ""), ""), ExpiresAt: m.ExpiresAt.UTC(), Archives: m.Archives, Limit: m.Limit}, nil
}

// replayOrigin is the handler of the replay origins (package viewer),
// answering its refusals through the API's error table (failOnReplay).
func (s *Server) replayOrigin() *viewer.Handler {
	return viewer.New(viewer.Handler{Config: s.Replay, Fail: s.failOnReplay, Log: s.logger(), Timeout: RequestTimeout})
}

// failOnReplay answers an error of a replay origin: a *ledger.FieldError
// (a bad read name or viewer source) is the 400 naming its place
// ("params/name must be …"), anything else goes through fail.
func (s *Server) failOnReplay(w http.ResponseWriter, r *http.Request, err error) {
	var fe *ledger.FieldError
	if errors.As(err, &fe) {
		err = &BadRequest{Message: fe.Error()}
	}
	s.fail(w, r, err)
}
