package app

import (
	"context"
	"sync"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/search"
)

// searchState is the App's search backend, opened once: a Bleve index
// directory can be open in one place of one process only.
type searchState struct {
	mu      sync.Mutex
	backend search.Backend
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

// SearchBackend opens the full-text index on first use: OpenSearch when
// CAPTURE_LEDGER_OPENSEARCH_URL is set, else the Bleve index in
// CAPTURE_LEDGER_SEARCH_DIR (search.ErrIndexBusy while another process,
// such as a running serve, holds it).
func (a *App) SearchBackend(ctx context.Context) (search.Backend, error) {
	st := a.search()
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
		dir := a.Settings.SearchDir
		if dir == "" {
			dir = ".ledgerctl/search"
		}
		b, err = search.OpenBleve(dir)
	}
	if err != nil {
		return nil, err
	}
	st.backend = b
	a.mu.Lock()
	a.closers = append(a.closers, func() {
		a.searchState = nil // Close holds a.mu
		_ = b.Close()
	})
	a.mu.Unlock()
	return b, nil
}

// SetSearchBackend installs an already-open backend (tests).
func (a *App) SetSearchBackend(b search.Backend) {
	st := a.search()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.backend = b
}

// blobObjects opens bucket objects for the indexer's ranged reads.
type blobObjects struct{ c *blob.Client }

func (o blobObjects) OpenObject(ctx context.Context, bucket, key string) (search.Object, error) {
	return o.c.OpenReaderAt(ctx, bucket, key)
}

// Indexer is the search indexer over the ledger, the bucket and the
// backend. `serve` runs it in the background:
//
//	ix, err := a.Indexer(ctx)
//	go ix.Run(ctx)
func (a *App) Indexer(ctx context.Context) (*search.Indexer, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	b, err := a.SearchBackend(ctx)
	if err != nil {
		return nil, err
	}
	return search.NewIndexer(st, blobObjects{a.Blob()}, b, a.Log), nil
}

// Searcher is the search use-case, filtered through OpenFGA with the
// archive list's budgets.
func (a *App) Searcher(ctx context.Context) (*search.Searcher, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	perms, err := a.Permissions(ctx)
	if err != nil {
		return nil, err
	}
	b, err := a.SearchBackend(ctx)
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

// CrawlIndexer indexes a crawl's archives for a caller allowed to touch the
// crawl (POST /api/crawls/{id}/index).
type CrawlIndexer struct {
	Crawls  *crawl.Service
	Archive interface {
		CrawlArchiveIDs(ctx context.Context, crawlID string) ([]string, error)
	}
	Indexer *search.Indexer
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

// CrawlIndexer wires IndexCrawl.
func (a *App) CrawlIndexer(ctx context.Context) (CrawlIndexer, error) {
	svc, err := a.Crawls(ctx)
	if err != nil {
		return CrawlIndexer{}, err
	}
	st, err := a.Store(ctx)
	if err != nil {
		return CrawlIndexer{}, err
	}
	ix, err := a.Indexer(ctx)
	if err != nil {
		return CrawlIndexer{}, err
	}
	return CrawlIndexer{Crawls: svc, Archive: st, Indexer: ix}, nil
}

// serveSearch adds full-text search to serve: GET /api/search, POST
// /api/crawls/{id}/index and the background indexer, on the backend the
// settings select. serve's composition calls it once:
//
//	if err := a.serveSearch(ctx, srv, apiSrv); err != nil {
//		return nil, err
//	}
func (a *App) serveSearch(ctx context.Context, srv *Server, apiSrv *api.Server) error {
	searcher, err := a.Searcher(ctx)
	if err != nil {
		return err
	}
	crawls, err := a.CrawlIndexer(ctx)
	if err != nil {
		return err
	}
	apiSrv.Search, apiSrv.CrawlIndex = searcher, crawls
	a.Log.Info("full-text search: " + searcher.Backend.Name())
	if !searcher.Backend.Filters() {
		a.Log.Warn("the search index was built before pages carried their grantees: searches narrow after the index (slower, and their time depends on what others' archives contain) until it is rebuilt: stop serve, remove the index directory, run `ledgerctl search reindex`", "index", searcher.Backend.Name())
	}
	srv.work(func(ctx context.Context) { _ = crawls.Indexer.Run(ctx) })
	return a.serveAdmin(srv, searcher)
}
