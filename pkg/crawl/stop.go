package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Stopper is the store Stop needs; *postgres.Store implements it.
type Stopper interface {
	// StopCrawl ends a running crawl as stopped (succeeded, stop reason
	// "stopped"); false when it was not running. In the same transaction,
	// under the crawl's lock, it registers the captures the runner kept
	// and the plan of keep (Service.keep) for them, and answers how many
	// archives that registered.
	StopCrawl(ctx context.Context, id string, now time.Time, keep ledger.KeepCaptured) (stopped bool, registered int, err error)
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
// admitted and of every capture of the current level whose result the
// runner kept before the stop: those not registered yet (AdmitCaptured
// registers them a moment after they land) are registered by the stop
// itself, in its transaction. No new page is started after it; a capture
// in flight runs to its end, its result is not kept, and the runner
// registers it as it ends (AdmitCaptured: it began before the stop); the
// level it belongs to is not admitted. Who may stop a crawl is who may
// start crawls for its organization: a caller claiming the organization
// with can_submit on it. An absent crawl and one the caller may not stop
// are both ledger.ErrNotFound. Stopping a crawl that has ended is not an
// error: Stopped is false and the state is the crawl's.
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
	now := s.now()
	stopped, registered, err := st.StopCrawl(ctx, id, now, s.keep(ctx, now))
	if err != nil {
		return StopResult{}, err
	}
	if stopped {
		s.log().Info("crawl stopped", "crawlId", id, "by", c.Subject, "archivesRegisteredByTheStop", registered)
	}
	if cr, err = s.Store.Crawl(ctx, id); err != nil {
		return StopResult{}, err
	}
	return StopResult{Stopped: stopped, State: cr.State, StopReason: cr.StopReason}, nil
}

// InFlightFinder finds a capture a crawl's runner began and kept no
// result of, where its capturer leaves it; a runner implements it for the
// capturers that can (runner.InFlight).
type InFlightFinder interface {
	// FindBegun answers the page's result as the runner would have kept
	// it, and whether the capture was found; not found is no error.
	FindBegun(ctx context.Context, crawlID string, b ledger.BegunCapture) (PageReport, bool, error)
}

// keep is what closing a crawl (a stop, a failure, the stall timeout)
// registers of the captures its runner kept, and of those it began and
// kept no result of that InFlight finds: keptPlan.
func (s *Service) keep(ctx context.Context, now time.Time) ledger.KeepCaptured {
	return func(cr ledger.Crawl, depth int, results [][]byte, begun []ledger.BegunCapture) (*ledger.LevelPlan, error) {
		log := s.log().With("crawlId", cr.ID, "depth", depth)
		found := s.foundBegun(ctx, log, cr.ID, begun)
		for _, pr := range found {
			if data, err := json.Marshal(pr); err == nil {
				results = append(results, data)
			}
		}
		plan := s.keptPlan(ctx, log, cr, depth, results, now)
		if plan != nil {
			// A found capture's page records its times, as one in flight
			// at a stop does (no result of it holds them).
			for i, t := range plan.Tasks {
				if pr, ok := found[t.TaskID]; ok {
					sub, fin := pr.SubmittedAt, pr.FinishedAt
					plan.Tasks[i].SubmittedAt, plan.Tasks[i].FinishedAt = &sub, &fin
				}
			}
		}
		return plan, nil
	}
}

// foundBegun is, by task, the captures of begun that InFlight finds
// captured, as the runner would have kept their results: a capture in
// flight when its runner's process died, written whole by the capturer
// before that. A capture not found, or not captured, is left out (its page
// was not captured); a failure to look is logged and leaves it out too:
// the close goes on.
func (s *Service) foundBegun(ctx context.Context, log *slog.Logger, crawlID string, begun []ledger.BegunCapture) map[string]PageReport {
	if s.InFlight == nil {
		return nil
	}
	out := map[string]PageReport{}
	for _, b := range begun {
		pr, found, err := s.InFlight.FindBegun(ctx, crawlID, b)
		switch {
		case err != nil:
			log.Warn("could not look for a capture in flight for closing the crawl; it is not registered", "url", b.URL, "taskId", b.TaskID, "error", err.Error())
			continue
		case !found || pr.Status != StatusCaptured || pr.TaskID != b.TaskID:
			continue
		}
		log.Info("found a capture in flight, to register as the crawl is closed", "url", b.URL, "taskId", b.TaskID)
		out[b.TaskID] = pr
	}
	return out
}

// keptPlan is what closing a crawl registers of the results its runner
// kept at depth (each a PageReport as JSON) whose capture is not in the
// ledger: each captured page judged as the level's admission judges it,
// its manifest read from the bucket, and planned as AdmitCaptured plans
// it. A result that does not read back, or a manifest that cannot be read
// or is not the page's capture, registers nothing (logged): the close
// goes on.
func (s *Service) keptPlan(ctx context.Context, log *slog.Logger, cr ledger.Crawl, depth int, results [][]byte, now time.Time) *ledger.LevelPlan {
	rep := LevelReport{Depth: depth}
	for _, data := range results {
		var pr PageReport
		if err := json.Unmarshal(data, &pr); err != nil {
			log.Warn("a result the runner kept does not read back; closing the crawl does not register it", "error", err.Error())
			continue
		}
		if pr.Status == StatusCaptured && pr.TaskID != "" {
			rep.Results = append(rep.Results, pr)
		}
	}
	if len(rep.Results) == 0 {
		return nil
	}
	norm, err := rep.Normalize()
	if err != nil {
		log.Warn("the results the runner kept do not make a level report; closing the crawl registers none of them", "error", err.Error())
		return nil
	}
	// The manifests read and judged as the level's admission reads them;
	// no links are read (the level is not admitted).
	works, err := s.read(ctx, cr, nil, norm, nil)
	if err != nil {
		log.Warn("the manifests of the results the runner kept could not be read; closing the crawl registers none of them", "error", err.Error())
		return nil
	}
	return capturedPlan(cr, works, nil, now, false)
}
