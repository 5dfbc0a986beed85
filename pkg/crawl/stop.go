package crawl

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Stopper is the store Stop needs; *postgres.Store implements it.
type Stopper interface {
	// StopCrawl ends a running crawl as stopped (succeeded, stop reason
	// "stopped"); false when it was not running.
	StopCrawl(ctx context.Context, id string, now time.Time) (bool, error)
}

// StopStopped is the stop reason of a crawl a person stopped.
const StopStopped = "stopped"

// StopResult is the answer of POST /api/crawls/{id}/stop and `ledgerctl
// crawl stop`: whether this call stopped the crawl, and the crawl's state
// and stop reason after it.
type StopResult struct {
	Stopped    bool    `json:"stopped"`
	State      string  `json:"state"`
	StopReason *string `json:"stopReason"`
}

// Stop ends a running crawl at a person's request: it ends succeeded with
// the stop reason "stopped", keeping the archives of the levels already
// admitted, and those of the current level's captures registered before
// the stop (AdmitCaptured). No new page is started after it; a capture in
// flight runs to its end, but neither it nor the level it belongs to is
// admitted. Who may stop a crawl is who may start crawls for its
// organization: a caller claiming the organization with can_submit on it. An absent crawl and one the
// caller may not stop are both ledger.ErrNotFound. Stopping a crawl that
// has ended is not an error: Stopped is false and the state is the
// crawl's.
func (s *Service) Stop(ctx context.Context, c Caller, id string) (StopResult, error) {
	if err := checkID(id); err != nil {
		return StopResult{}, err
	}
	st, ok := s.Store.(Stopper)
	if !ok {
		return StopResult{}, errors.New("this crawl store cannot stop crawls")
	}
	cr, err := s.Store.Crawl(ctx, id)
	if err != nil {
		return StopResult{}, err
	}
	may := false
	if slices.Contains(c.Orgs, cr.OrgID) {
		if may, err = s.maySubmit(ctx, Caller{Subject: c.Subject, Orgs: []string{cr.OrgID}}); err != nil {
			return StopResult{}, err
		}
	}
	if !may {
		return StopResult{}, ledger.ErrNotFound
	}
	stopped, err := st.StopCrawl(ctx, id, s.now())
	if err != nil {
		return StopResult{}, err
	}
	if stopped {
		s.log().Info("crawl stopped", "crawlId", id, "by", c.Subject)
	}
	if cr, err = s.Store.Crawl(ctx, id); err != nil {
		return StopResult{}, err
	}
	return StopResult{Stopped: stopped, State: cr.State, StopReason: cr.StopReason}, nil
}
