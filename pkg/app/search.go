package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/search"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
)

// searchState is the App's search backend, opened once: a Bleve index
// directory can be open in one place of one process only.
type searchState struct {
	mu      sync.Mutex
	backend search.Backend
	// holder is the index lease a command holds (commandLease); release
	// gives it back.
	holder  string
	release func()
	// closeBackend closes backend once (SearchBackend's closer, or
	// putIndexBack's, whichever comes first).
	closeBackend func()
	// passMu orders the command's index passes (indexPass): passes is how
	// many run now; the last one to end puts the index back.
	passMu sync.Mutex
	passes int
	// cluster is serve's part in the election (serve with Bleve only).
	cluster *searchCluster
	// served says serve's indexer runs in this process: it indexes every
	// new archive as PostgreSQL announces it (or hands it to the process
	// holding the index), so nothing else here needs to.
	served atomic.Bool
}

// search is the App's search state, made on first use; Close drops it, so
// a later SearchBackend opens the index again.
func (a *App) search() *searchState {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.searchState == nil {
		a.searchState = &searchState{}
	}
	return a.searchState
}

// searchDir is CAPTURE_LEDGER_SEARCH_DIR, or its default.
func (a *App) searchDir() string {
	if a.Settings.SearchDir == "" {
		return ".ledgerctl/search"
	}
	return a.Settings.SearchDir
}

// SearchBackend opens the full-text index on first use: OpenSearch when
// CAPTURE_LEDGER_OPENSEARCH_URL is set, else the Bleve index in
// CAPTURE_LEDGER_SEARCH_DIR (search.ErrIndexBusy while another process,
// such as a running serve, holds it). serve with Bleve does not call it:
// its index is opened by the process the election chooses
// (searchcluster.go).
func (a *App) SearchBackend(ctx context.Context) (search.Backend, error) {
	st := a.search()
	if c := st.cluster; c != nil {
		c.mu.RLock()
		defer c.mu.RUnlock()
		if c.held == nil {
			return nil, fmt.Errorf("this serve does not hold the search index now: %w", search.ErrIndexBusy)
		}
		return c.held.backend, nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.backend != nil {
		return st.backend, nil
	}
	var b search.Backend
	var err error
	if a.Settings.OpenSearchURL != "" {
		b, err = search.NewOpenSearch(a.Settings.OpenSearchURL, a.Settings.OpenSearchIndex, nil)
	} else {
		b, err = search.OpenBleve(a.searchDir())
	}
	if err != nil {
		return nil, err
	}
	st.backend = b
	var once sync.Once
	st.closeBackend = func() { once.Do(func() { _ = b.Close() }) }
	closeB := st.closeBackend
	a.mu.Lock()
	a.closers = append(a.closers, func() {
		a.searchState = nil // Close holds a.mu
		closeB()
	})
	a.mu.Unlock()
	return b, nil
}

// indexPass is the indexer for one of a command's index passes (each
// crawl level's archives, in `crawl run` and `crawl start --wait`), and
// done ends the pass. With Bleve, when the last pass running ends, the
// command closes the index and gives its lease back (ReleaseSearchIndexer
// notifies the serves): a serve started while the crawl runs takes the
// index at once, instead of answering searches with 503 until the command
// exits; the next level's pass takes the lease again if no serve did (else
// that serve indexes it). In serve, and with OpenSearch, done does nothing.
func (a *App) indexPass(ctx context.Context) (ix ArchiveIndexer, done func(), err error) {
	ss := a.search()
	if ss.cluster != nil || a.Settings.OpenSearchURL != "" {
		ix, err := a.archiveIndexer(ctx)
		return ix, func() {}, err
	}
	ss.passMu.Lock()
	defer ss.passMu.Unlock()
	ix, err = a.archiveIndexer(ctx)
	if err != nil {
		if ss.passes == 0 {
			a.putIndexBack()
		}
		return nil, nil, err
	}
	ss.passes++
	return ix, func() {
		ss.passMu.Lock()
		defer ss.passMu.Unlock()
		if ss.passes--; ss.passes == 0 {
			a.putIndexBack()
		}
	}, nil
}

// putIndexBack closes a command's Bleve index and gives its lease back;
// the next SearchBackend or Indexer opens and takes them again.
func (a *App) putIndexBack() {
	ss := a.search()
	ss.mu.Lock()
	closeB := ss.closeBackend
	ss.backend, ss.closeBackend = nil, nil
	ss.mu.Unlock()
	if closeB != nil {
		closeB()
	}
	ss.releaseLease()
}

// SetSearchBackend installs an already-open backend (tests).
func (a *App) SetSearchBackend(b search.Backend) {
	st := a.search()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.backend = b
}

// blobObjects opens bucket objects for the indexer's ranged reads: a WACZ
// this process put moments ago (a capture it made) from memory, any other
// from S3.
type blobObjects struct{ c *blob.Client }

func (o blobObjects) OpenObject(ctx context.Context, bucket, key string) (search.Object, error) {
	if body, ok := o.c.TakeRecent(bucket, key); ok {
		return bytes.NewReader(body), nil
	}
	return o.c.OpenReaderAt(ctx, bucket, key)
}

// Indexer is the search indexer of a command (`search reindex`, `crawl
// run`, `capture`, tests), which writes only to the database's index:
//
//   - Bleve: the command takes the index's lease (docs/search.md) as a
//     holder that answers no forwarded search, for as long as the App is
//     open; while a serve holds it, or its directory is open elsewhere, the
//     error matches search.ErrIndexBusy (that serve indexes, woken by
//     PostgreSQL). An index other than the one recorded is adopted: every
//     archive is indexed again into it.
//   - OpenSearch: the command checks in; a database whose index is a Bleve
//     one held by a serve, or another OpenSearch index, is refused
//     (*search.SplitError).
//
// Its marks are fenced: an indexer that lost the index marks nothing.
func (a *App) Indexer(ctx context.Context) (*search.Indexer, error) {
	return a.indexer(ctx, false)
}

// RebuildIndexer is Indexer for `ledgerctl search reindex`: the one
// command that adopts a Bleve directory other than the index recorded
// (every archive is indexed again into it). Indexer refuses one instead
// (*OtherIndexError): a `crawl run` in another working directory must not
// move the database's index.
func (a *App) RebuildIndexer(ctx context.Context) (*search.Indexer, error) {
	return a.indexer(ctx, true)
}

// OtherIndexError is a command's Bleve directory that is not the
// database's index.
type OtherIndexError struct{ Dir, Recorded string }

func (e *OtherIndexError) Error() string {
	return fmt.Sprintf("%s is not this database's search index (its archives were indexed into %s): a serve started where that index is indexes the new archives; `ledgerctl search reindex` here would rebuild the index into this directory instead", e.Dir, e.Recorded)
}

func (a *App) indexer(ctx context.Context, adopt bool) (*search.Indexer, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	if a.Settings.OpenSearchURL != "" {
		b, err := a.SearchBackend(ctx)
		if err != nil {
			return nil, err
		}
		id := search.OpenSearchIdentity(a.Settings.OpenSearchURL, a.Settings.OpenSearchIndex)
		if err := a.checkInOpenSearch(ctx, st, id); err != nil {
			return nil, err
		}
		return search.NewIndexer(search.Fenced(st, st, "", id), blobObjects{a.Blob()}, b, a.Log), nil
	}
	holder, err := a.commandLease(ctx, st)
	if err != nil {
		return nil, err
	}
	b, err := a.SearchBackend(ctx)
	if err != nil {
		a.releaseCommandLease(st)
		return nil, err
	}
	bl, ok := b.(*search.Bleve)
	if !ok { // an index installed by a test, not one of the database's
		return search.NewIndexer(st, blobObjects{a.Blob()}, b, a.Log), nil
	}
	if !adopt {
		rec, err := st.SearchIndexer(ctx)
		if err != nil {
			return nil, err
		}
		if rec.IndexID != "" && rec.IndexID != bl.IndexID() {
			a.releaseCommandLease(st)
			return nil, &OtherIndexError{Dir: bl.Name(), Recorded: rec.IndexID}
		}
	}
	reset, err := st.AdoptSearchIndex(ctx, holder, bl.IndexID())
	if err != nil {
		return nil, err
	}
	if reset > 0 {
		a.Log.Warn("this search index is not the one the ledger's indexed marks were made for: every archive is indexed again into it", "index", bl.Name(), "archives", reset)
	}
	return search.NewIndexer(search.Fenced(st, st, holder, bl.IndexID()), blobObjects{a.Blob()}, b, a.Log), nil
}

// checkInOpenSearch records this process as using the OpenSearch index
// id; another index recorded before is rebuilt into this one.
func (a *App) checkInOpenSearch(ctx context.Context, st *postgres.Store, id string) error {
	reset, err := st.CheckInOpenSearch(ctx, id, a.searchLeaseTTL())
	if err != nil {
		return err
	}
	if reset > 0 {
		a.Log.Warn("the ledger's indexed marks were made for another index: every archive is indexed again into this one", "index", id, "archives", reset)
	}
	return nil
}

func (a *App) searchLeaseTTL() time.Duration {
	if a.Settings.SearchLeaseTTL > 0 {
		return a.Settings.SearchLeaseTTL
	}
	return 10 * time.Second
}

// commandLease takes the Bleve index's lease for this App (once), renewed
// until Close, which releases it.
func (a *App) commandLease(ctx context.Context, st *postgres.Store) (string, error) {
	ss := a.search()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.holder != "" {
		return ss.holder, nil
	}
	holder := "command " + randomToken(12)
	ttl := a.searchLeaseTTL()
	rec, got, err := st.AcquireSearchIndexer(ctx, holder, "", "", ttl)
	if err != nil {
		return "", err
	}
	if !got {
		who := "a ledgerctl command"
		if rec.Address != "" {
			who = "the serve answering at " + rec.Address
		}
		return "", fmt.Errorf("%s holds the search index for this database (it indexes new archives itself): %w", who, search.ErrIndexBusy)
	}
	ss.holder = holder
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				_, _ = st.RenewSearchIndexer(rctx, holder, ttl)
			}
		}
	}()
	ss.release = func() {
		stop()
		<-done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = st.ReleaseSearchIndexer(ctx, holder)
	}
	a.mu.Lock()
	a.closers = append(a.closers, func() { ss.releaseLease() })
	a.mu.Unlock()
	return holder, nil
}

// releaseCommandLease gives the command's lease back.
func (a *App) releaseCommandLease(_ *postgres.Store) { a.search().releaseLease() }

// releaseLease gives the command's lease back (once).
func (ss *searchState) releaseLease() {
	ss.mu.Lock()
	release := ss.release
	ss.release, ss.holder = nil, ""
	ss.mu.Unlock()
	if release != nil {
		release()
	}
}

// Searcher is the search use-case over this process's own index, filtered
// through OpenFGA with the archive list's budgets. A Bleve directory whose
// id is not the index the database recorded is refused: its answers would
// not be the database's.
func (a *App) Searcher(ctx context.Context) (*search.Searcher, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	b, err := a.SearchBackend(ctx)
	if err != nil {
		return nil, err
	}
	if bl, ok := b.(*search.Bleve); ok {
		rec, err := st.SearchIndexer(ctx)
		if err != nil {
			return nil, err
		}
		if rec.IndexID != "" && rec.IndexID != bl.IndexID() {
			return nil, fmt.Errorf("%s is not this database's search index (its archives were indexed into %s): run the search where that index is (or while a serve of this database runs), or rebuild here with `ledgerctl search reindex`", bl.Name(), rec.IndexID)
		}
	}
	return a.searcherOn(ctx, b)
}

// CommandSearcher is what `ledgerctl search` searches with: the serve
// holding the database's index when one does (the search is forwarded to
// it, as serve's own followers do), else this process's own index
// (Searcher).
func (a *App) CommandSearcher(ctx context.Context) (api.Searcher, error) {
	if a.Settings.OpenSearchURL == "" {
		st, err := a.Store(ctx)
		if err != nil {
			return nil, err
		}
		rec, err := st.SearchIndexer(ctx)
		if err != nil {
			return nil, err
		}
		if rec.Live && rec.Address != "" {
			return forwarder{rec: rec, client: &http.Client{Timeout: api.RequestTimeout}, ttl: a.searchLeaseTTL()}, nil
		}
	}
	return a.Searcher(ctx)
}

// forwarder sends searches to the holder recorded in rec.
type forwarder struct {
	rec    search.IndexerLease
	client *http.Client
	ttl    time.Duration
}

func (f forwarder) Search(ctx context.Context, subject string, orgs []string, req search.Request) (search.Page, error) {
	return forwardSearch(ctx, f.client, f.rec, subject, orgs, req, f.ttl)
}

// searcherOn builds the Searcher over backend b.
func (a *App) searcherOn(ctx context.Context, b search.Backend) (*search.Searcher, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	perms, err := a.Permissions(ctx)
	if err != nil {
		return nil, err
	}
	source, err := a.listSource()
	if err != nil {
		return nil, err
	}
	s := &search.Searcher{
		Backend: b, Perms: perms, Keys: st, Log: a.Log,
		CheckBudget: a.Settings.ListCheckBudget, TimeBudget: a.Settings.ListTimeBudget,
		Gate: a.ScanGate(), Matching: st, Captures: st,
	}
	if source == archive.SourceCandidates {
		// The ledger's record of grantees narrows the search: inside the
		// index (Scope), and after it when the index cannot (Recorded).
		s.Recorded, s.Scope = st, st
	}
	return s, nil
}

// ArchiveIndexer indexes archives now (search.Indexer), or hands them to
// the process that holds the index.
type ArchiveIndexer interface {
	IndexArchives(ctx context.Context, ids []string) (search.Result, error)
}

// CrawlIndexer indexes a crawl's archives for a caller allowed to touch the
// crawl (POST /api/crawls/{id}/index).
type CrawlIndexer struct {
	Crawls  *crawl.Service
	Archive interface {
		CrawlArchiveIDs(ctx context.Context, crawlID string) ([]string, error)
	}
	Indexer ArchiveIndexer
}

// IndexCrawl authorizes the caller for the crawl the way its other routes
// do (reading it: ledger.ErrNotFound when absent or not allowed), then
// indexes the archives it produced that are not indexed yet.
func (c CrawlIndexer) IndexCrawl(ctx context.Context, subject string, orgs []string, crawlID string) (search.Result, error) {
	if _, err := c.Crawls.Get(ctx, crawl.Caller{Subject: subject, Orgs: orgs}, crawlID); err != nil {
		return search.Result{}, err
	}
	ids, err := c.Archive.CrawlArchiveIDs(ctx, crawlID)
	if err != nil {
		return search.Result{}, err
	}
	return c.Indexer.IndexArchives(ctx, ids)
}

// CrawlIndexer wires IndexCrawl for this process (archiveIndexer).
func (a *App) CrawlIndexer(ctx context.Context) (CrawlIndexer, error) {
	svc, err := a.Crawls(ctx)
	if err != nil {
		return CrawlIndexer{}, err
	}
	st, err := a.Store(ctx)
	if err != nil {
		return CrawlIndexer{}, err
	}
	ix, err := a.archiveIndexer(ctx)
	if err != nil {
		return CrawlIndexer{}, err
	}
	return CrawlIndexer{Crawls: svc, Archive: st, Indexer: ix}, nil
}

// archiveIndexer is this process's way to index archives now: serve's
// election with Bleve (which hands them to the holder when it is another
// process), else a command's indexer (Indexer).
func (a *App) archiveIndexer(ctx context.Context) (ArchiveIndexer, error) {
	if c := a.search().cluster; c != nil {
		return c, nil
	}
	return a.Indexer(ctx)
}

// serveSearch adds full-text search to serve: GET /api/search, POST
// /api/crawls/{id}/index and the background indexer, on the backend the
// settings select. serve's composition calls it once:
//
//	if err := a.serveSearch(ctx, srv, apiSrv); err != nil {
//		return nil, err
//	}
//
// With OpenSearch every serve indexes (writes are idempotent) and checks in
// as using that index; with Bleve the election chooses the one that does
// (searchcluster.go). PostgreSQL's notifications wake the indexer as
// archives are admitted.
func (a *App) serveSearch(ctx context.Context, srv *Server, apiSrv *api.Server) error {
	svc, err := a.Crawls(ctx)
	if err != nil {
		return err
	}
	st, err := a.Store(ctx)
	if err != nil {
		return err
	}
	if a.Settings.OpenSearchURL == "" {
		c, err := a.newSearchCluster(ctx)
		if err != nil {
			return err
		}
		a.search().cluster = c
		a.search().served.Store(true)
		// One serve indexes: the others keep no copy of what they put.
		a.keepRecentOnlyWhileIndexing()
		// The first try now: a serve that can hold the index says so as it
		// starts; then c.run keeps trying, or renewing.
		if err := c.tryTake(ctx); err != nil {
			a.Log.Warn("could not take the search index; retrying", "error", err.Error())
		}
		if !c.Holding() {
			a.Log.Info("another process holds the search index: searches here go to it, and this serve takes the index over if it stops", "takeoverWithin", (c.ttl + c.ttl/3).String())
		}
		a.mu.Lock()
		a.closers = append(a.closers, c.close)
		a.mu.Unlock()
		apiSrv.Search = c
		apiSrv.CrawlIndex = CrawlIndexer{Crawls: svc, Archive: st, Indexer: c}
		a.Log.Info("full-text search: the on-disk index of the serve holding it (this one's: "+a.searchDir()+")", "peer", c.address)
		srv.work(c.run)
		return a.serveAdmin(srv, c)
	}
	searcher, err := a.Searcher(ctx)
	if err != nil {
		return err
	}
	id := search.OpenSearchIdentity(a.Settings.OpenSearchURL, a.Settings.OpenSearchIndex)
	if err := a.checkInOpenSearch(ctx, st, id); err != nil {
		var split *search.SplitError
		if errors.As(err, &split) {
			return &RefusedError{Err: err}
		}
		return err
	}
	ix := search.NewIndexer(search.Fenced(st, st, "", id), blobObjects{a.Blob()}, searcher.Backend, a.Log)
	wake := make(chan struct{}, 1)
	ix.Wake = wake
	apiSrv.Search, apiSrv.CrawlIndex = searcher, CrawlIndexer{Crawls: svc, Archive: st, Indexer: ix}
	a.search().served.Store(true)
	a.Log.Info("full-text search: " + searcher.Backend.Name())
	srv.work(func(ctx context.Context) {
		go st.Listen(ctx, []string{chanSearchIndex}, func(string) { poke(wake) })
		go func() {
			ttl := a.searchLeaseTTL()
			t := time.NewTicker(ttl / 3)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				if err := a.checkInOpenSearch(ctx, st, id); err != nil && ctx.Err() == nil {
					a.Log.Error("could not check in as using the OpenSearch index", "error", err.Error())
				}
			}
		}()
		_ = ix.Run(ctx)
	})
	return nil
}
