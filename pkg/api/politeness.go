package api

import (
	"context"
	"net/http"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// politenessRoutes serves GET /api/crawls/{id}/politeness: per host, the
// gaps between one capture's end and the next one's start, overlaps, the
// delay and its source, and robots.txt's outcome. It is gated like
// GET /api/crawls/{id} (an absent crawl and one the caller may not touch
// are the same 404). It is served when the crawl store can read pacing
// evidence (the PostgreSQL store can).
func (s *Server) politenessRoutes() {
	st, ok := s.Crawls.Store.(politeness.Store)
	if !ok {
		return
	}
	svc := &politeness.Service{Crawls: s.Crawls, Store: st}
	s.mux.HandleFunc("GET /api/crawls/{id}/politeness", handle(s, http.StatusOK, crawlID,
		func(ctx context.Context, who identity.Identity, id string) (any, error) {
			r, err := svc.Report(ctx, crawl.Caller{Subject: who.Subject, Orgs: who.Organizations}, id)
			return r, crawlRefusal(err, inParams)
		}))
}
