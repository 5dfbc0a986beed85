package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/search"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/visible"
)

// One Bleve index per database (docs/search.md, "Several serve
// processes"). Every serve with the on-disk index takes part in an election
// through PostgreSQL (search.Leases): the one holding the lease opens its
// index directory, adopts it as the database's index (another index
// recorded before: every archive is indexed again) and indexes, woken by
// PostgreSQL's notifications as archives are admitted. The others never
// open their directory; they send each search, with the caller they
// identified, to the holder's peer address with its secret, and the holder
// runs it as that caller, OpenFGA deciding.

// SearchSecretHeader carries a forwarded search's secret.
const SearchSecretHeader = "X-Ledger-Search-Secret"

// Notification channels (migration 000019).
const (
	chanSearchIndex   = "ledger_search_index"
	chanSearchIndexer = "ledger_search_indexer"
)

// searchCluster is serve's part in the election, and its searcher: local
// while it holds the index, forwarding otherwise.
type searchCluster struct {
	a      *App
	store  *postgres.Store
	holder string
	secret string
	// address is where the peer listener answers (http://host:port).
	address string
	peer    net.Listener
	peerSrv *http.Server
	ttl     time.Duration
	client  *http.Client

	// wake is sent on when archives wait to be indexed; retry when the
	// lease may be free.
	wake, retry chan struct{}

	closeOnce sync.Once
	closed    bool

	mu sync.RWMutex
	// held is set while this process holds the index.
	held *heldIndex
}

// heldIndex is the index this process holds, and its indexer.
type heldIndex struct {
	backend  *search.Bleve
	searcher *search.Searcher
	indexer  *search.Indexer
	stop     context.CancelFunc
	// unwant ends the indexer's want of the WACZs this process puts
	// (blob.Recent): a serve that does not hold the index keeps none.
	unwant func()
	// finished is closed when the indexer has stopped, err saying why.
	finished chan struct{}
	err      error
}

// randomToken is n random bytes in hex.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newSearchCluster binds the peer listener and reads the ledger's record
// once: a database whose index is an OpenSearch one in use is refused.
func (a *App) newSearchCluster(ctx context.Context) (*searchCluster, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	rec, err := st.SearchIndexer(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the search index's record: %w", err)
	}
	if rec.OpenSearchLive && search.IsOpenSearchIdentity(rec.IndexID) {
		return nil, &RefusedError{Err: fmt.Errorf("another process of this database indexes into %s, while CAPTURE_LEDGER_OPENSEARCH_URL is unset here (the on-disk index in CAPTURE_LEDGER_SEARCH_DIR): two indexes would each hold part of the archives; give every process the same CAPTURE_LEDGER_OPENSEARCH_URL and CAPTURE_LEDGER_OPENSEARCH_INDEX", rec.IndexID)}
	}
	ln, err := net.Listen("tcp", a.Settings.SearchPeerListen)
	if err != nil {
		return nil, fmt.Errorf("CAPTURE_LEDGER_SEARCH_PEER_LISTEN %s: %w", a.Settings.SearchPeerListen, err)
	}
	ttl := a.Settings.SearchLeaseTTL
	if ttl <= 0 {
		ttl = 10 * time.Second
	}
	c := &searchCluster{
		a: a, store: st, holder: "serve " + randomToken(12), secret: randomToken(32),
		address: "http://" + ln.Addr().String(), peer: ln, ttl: ttl,
		client: &http.Client{Timeout: api.RequestTimeout},
		wake:   make(chan struct{}, 1), retry: make(chan struct{}, 1),
	}
	c.peerSrv = &http.Server{Handler: c.peerHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = c.peerSrv.Serve(ln) }()
	return c, nil
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// run is serve's worker: the peer listener, the notifications, and the
// election until ctx ends; then the index is closed and the lease
// released, so another serve takes over at once.
func (c *searchCluster) run(ctx context.Context) {
	log := c.a.Log
	lctx, stopListen := context.WithCancel(ctx)
	defer stopListen()
	go c.store.Listen(lctx, []string{chanSearchIndex, chanSearchIndexer}, func(ch string) {
		if ch != chanSearchIndexer {
			poke(c.wake)
		}
		if ch != chanSearchIndex {
			poke(c.retry)
		}
	})
	tick := time.NewTicker(c.ttl / 3)
	defer tick.Stop()
	lastRenew := time.Now()
	for {
		c.mu.RLock()
		held := c.held
		c.mu.RUnlock()
		if held == nil {
			if err := c.tryTake(ctx); err != nil && ctx.Err() == nil {
				log.Warn("could not take the search index; retrying", "error", err.Error(), "retryIn", (c.ttl / 3).String())
			}
			lastRenew = time.Now()
		} else {
			ok, err := c.store.RenewSearchIndexer(ctx, c.holder, c.ttl)
			switch {
			case err == nil && ok:
				lastRenew = time.Now()
			case err == nil && !ok:
				c.stepDown("another process took the search index over (this one did not renew its lease in time)")
			case time.Since(lastRenew) > c.ttl:
				c.stepDown("could not renew the search index's lease for longer than it lasts: " + err.Error())
			}
		}
		c.mu.RLock()
		var finished chan struct{}
		var h *heldIndex
		if h = c.held; h != nil {
			finished = h.finished
		}
		c.mu.RUnlock()
		select {
		case <-ctx.Done():
			c.close()
			return
		case <-finished:
			reason := "the indexer stopped"
			if h.err != nil {
				reason += ": " + h.err.Error()
			}
			c.stepDown(reason)
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = c.store.ReleaseSearchIndexer(rctx, c.holder)
			cancel()
		case <-tick.C:
		case <-c.retry:
		}
	}
}

// close stops indexing, closes the index and gives the lease back, so
// another serve takes over at once.
func (c *searchCluster) close() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.stepDown("")
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = c.store.ReleaseSearchIndexer(rctx, c.holder)
		cancel()
		_ = c.peerSrv.Close()
	})
}

// tryTake takes the lease when it is free, then opens the index, adopts it
// and starts indexing. An index directory it cannot open gives the lease
// back.
func (c *searchCluster) tryTake(ctx context.Context) error {
	c.mu.RLock()
	closed := c.closed
	c.mu.RUnlock()
	if closed {
		return nil
	}
	_, got, err := c.store.AcquireSearchIndexer(ctx, c.holder, c.address, c.secret, c.ttl)
	if err != nil || !got {
		return err
	}
	b, err := search.OpenBleve(c.a.searchDir())
	if err != nil {
		_ = c.store.ReleaseSearchIndexer(ctx, c.holder)
		return err
	}
	reset, err := c.store.AdoptSearchIndex(ctx, c.holder, b.IndexID())
	if err != nil {
		_ = b.Close()
		_ = c.store.ReleaseSearchIndexer(ctx, c.holder)
		return err
	}
	if reset > 0 {
		c.a.Log.Warn("this serve's search index is not the one the ledger's indexed marks were made for (another directory, or a new or emptied one): every archive is indexed again into it",
			"index", b.Name(), "indexId", b.IndexID(), "archives", reset)
	}
	searcher, err := c.a.searcherOn(ctx, b)
	if err != nil {
		_ = b.Close()
		_ = c.store.ReleaseSearchIndexer(ctx, c.holder)
		return err
	}
	ix := search.NewIndexer(search.Fenced(c.store, c.store, c.holder, b.IndexID()), blobObjects{c.a.Blob()}, b, c.a.Log)
	ix.Wake = c.wake
	ictx, stop := context.WithCancel(context.Background())
	h := &heldIndex{backend: b, searcher: searcher, indexer: ix, stop: stop, finished: make(chan struct{})}
	go func() {
		h.err = ix.Run(ictx)
		close(h.finished)
	}()
	c.mu.Lock()
	if c.closed { // serve stopped meanwhile
		c.mu.Unlock()
		stop()
		<-h.finished
		_ = b.Close()
		return c.store.ReleaseSearchIndexer(ctx, c.holder)
	}
	h.unwant = c.a.Blob().WantRecent()
	c.held = h
	c.mu.Unlock()
	if !b.Filters() {
		c.a.Log.Warn("the search index was built before pages carried their grantees: searches narrow after the index (slower, and their time depends on what others' archives contain) until it is rebuilt: stop serve, remove the index directory, run `ledgerctl search reindex`", "index", b.Name())
	}
	c.a.Log.Info("this serve holds the search index: it indexes, and answers the searches of the database's other serves", "index", b.Name(), "peer", c.address)
	return nil
}

// stepDown stops indexing and closes the index (after the searches in
// flight), logging why when reason is given.
func (c *searchCluster) stepDown(reason string) {
	c.mu.Lock()
	h := c.held
	c.held = nil
	c.mu.Unlock()
	if h == nil {
		return
	}
	h.stop()
	<-h.finished
	h.unwant()
	_ = h.backend.Close()
	if reason != "" {
		c.a.Log.Warn("this serve no longer holds the search index; its searches go to the holder", "reason", reason)
	}
}

// Holding says this process holds the index now (tests, logs).
func (c *searchCluster) Holding() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.held != nil
}

// Search runs the search here while this process holds the index, else
// sends it to the holder.
func (c *searchCluster) Search(ctx context.Context, subject string, orgs []string, req search.Request) (search.Page, error) {
	c.mu.RLock()
	if h := c.held; h != nil {
		defer c.mu.RUnlock()
		return h.searcher.Search(ctx, subject, orgs, req)
	}
	c.mu.RUnlock()
	rec, err := c.store.SearchIndexer(ctx)
	if err != nil {
		return search.Page{}, err
	}
	return forwardSearch(ctx, c.client, rec, subject, orgs, req, c.ttl)
}

// IndexArchives indexes the archives now while this process holds the
// index; otherwise the holder is woken (it indexes them within seconds).
func (c *searchCluster) IndexArchives(ctx context.Context, ids []string) (search.Result, error) {
	c.mu.RLock()
	h := c.held
	c.mu.RUnlock()
	if h != nil {
		return h.indexer.IndexArchives(ctx, ids)
	}
	return search.Result{}, c.store.WakeSearchIndexer(ctx)
}

// errNoHolder is a search sent while no process holds the index (a
// takeover under way).
func errNoHolder(ttl time.Duration) error {
	return &search.UnreachableError{Where: "the search index", Err: fmt.Errorf("no process holds it right now (another serve takes it over within %s)", ttl+ttl/3)}
}

// forwardSearch sends the search to the holder recorded in rec.
func forwardSearch(ctx context.Context, client *http.Client, rec search.IndexerLease, subject string, orgs []string, req search.Request, ttl time.Duration) (search.Page, error) {
	if rec.Live && rec.Address == "" {
		return search.Page{}, &search.UnreachableError{Where: "the search index", Err: errors.New("a ledgerctl command (search reindex, crawl run) holds it while it indexes; a serve takes it over when that command ends")}
	}
	if !rec.Live {
		return search.Page{}, errNoHolder(ttl)
	}
	body, err := search.EncodeForward(subject, orgs, req)
	if err != nil {
		return search.Page{}, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, rec.Address+"/search", bytes.NewReader(body))
	if err != nil {
		return search.Page{}, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set(SearchSecretHeader, rec.Secret)
	res, err := client.Do(hreq)
	if err != nil {
		return search.Page{}, &search.UnreachableError{Where: "the serve holding the search index at " + rec.Address, Err: err}
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return search.Page{}, &search.UnreachableError{Where: "the serve holding the search index at " + rec.Address, Err: err}
	}
	var e peerError
	_ = json.Unmarshal(data, &e)
	switch res.StatusCode {
	case http.StatusOK:
		var page search.Page
		if err := json.Unmarshal(data, &page); err != nil {
			return search.Page{}, fmt.Errorf("the serve holding the search index at %s: %w", rec.Address, err)
		}
		return page, nil
	case http.StatusBadRequest:
		if e.Field == "cursor" {
			return search.Page{}, search.ErrBadCursor
		}
		return search.Page{}, &api.BadRequest{Message: e.Field + " " + e.Reason}
	case http.StatusServiceUnavailable:
		if e.Busy {
			secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
			return search.Page{}, &visible.BusyError{What: "searches", Limit: e.Limit, PerCaller: e.PerCaller, Org: e.Org, RetryAfter: time.Duration(max(secs, 1)) * time.Second}
		}
		return search.Page{}, &search.UnreachableError{Where: "the serve holding the search index at " + rec.Address, Err: errors.New(e.Error)}
	default:
		return search.Page{}, fmt.Errorf("the serve holding the search index at %s answered %d: %s", rec.Address, res.StatusCode, e.Error)
	}
}

// peerError is the body of a peer answer other than 200.
type peerError struct {
	Error     string `json:"error"`
	Field     string `json:"field,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Busy      bool   `json:"busy,omitempty"`
	Limit     int    `json:"limit,omitempty"`
	PerCaller bool   `json:"perCaller,omitempty"`
	Org       string `json:"org,omitempty"`
}

// busyAnswer is the body of a peer's refusal by its search gate: which
// bound was full, for the forwarding serve to answer as its own
// (forwardSearch).
func busyAnswer(busy *visible.BusyError) peerError {
	return peerError{Error: busy.Error(), Busy: true, Limit: busy.Limit, PerCaller: busy.PerCaller, Org: busy.Org}
}

// peerHandler answers POST /search, forwarded by another serve: 401
// without this process's secret (nothing read), 400 naming the member of
// a bad body, 503 while this process does not hold the index or the
// searches are full, else the search as the named caller.
func (c *searchCluster) peerHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /search", func(w http.ResponseWriter, r *http.Request) {
		answer := func(code int, body any) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_ = json.NewEncoder(w).Encode(body)
		}
		got := r.Header.Get(SearchSecretHeader)
		if subtle.ConstantTimeCompare([]byte(got), []byte(c.secret)) != 1 {
			answer(http.StatusUnauthorized, peerError{Error: "a forwarded search must carry the secret of the serve holding the index"})
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, search.MaxForwardedBytes+1))
		if err != nil {
			answer(http.StatusRequestEntityTooLarge, peerError{Error: "body too large"})
			return
		}
		subject, orgs, req, err := search.DecodeForward(body)
		var fe *ledger.FieldError
		if errors.As(err, &fe) {
			answer(http.StatusBadRequest, peerError{Error: fe.Error(), Field: fe.Field, Reason: fe.Reason})
			return
		}
		if err != nil {
			answer(http.StatusBadRequest, peerError{Error: err.Error(), Field: "body", Reason: err.Error()})
			return
		}
		c.mu.RLock()
		defer c.mu.RUnlock()
		if c.held == nil {
			answer(http.StatusServiceUnavailable, peerError{Error: "this serve no longer holds the search index"})
			return
		}
		page, err := c.held.searcher.Search(r.Context(), subject, orgs, req)
		var busy *visible.BusyError
		switch {
		case errors.Is(err, search.ErrBadCursor):
			answer(http.StatusBadRequest, peerError{Error: "cursor " + err.Error(), Field: "cursor", Reason: err.Error()})
		case errors.As(err, &busy):
			w.Header().Set("Retry-After", strconv.Itoa(busy.RetrySeconds()))
			answer(http.StatusServiceUnavailable, busyAnswer(busy))
		case errors.Is(err, ledger.ErrUnreachable):
			answer(http.StatusServiceUnavailable, peerError{Error: err.Error()})
		case err != nil:
			c.a.Log.Error("forwarded search failed", "error", err.Error())
			answer(http.StatusInternalServerError, peerError{Error: "internal error"})
		default:
			answer(http.StatusOK, page)
		}
	})
	return mux
}
