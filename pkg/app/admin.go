package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/search"
)

// The admin socket lets commands on serve's machine use what serve holds:
// a Bleve index is open in one process only, so while serve runs,
// `ledgerctl search QUERY` asks serve through this socket instead of
// opening the index. It is a Unix socket next to the index directory
// (AdminSocketPath), readable and writable by serve's user only (mode 0600,
// created inside a private directory and renamed into place, so it is never
// open to others). What it answers, the command could do itself with the
// same settings: search as a given person, OpenFGA deciding. It carries no
// token; being serve's user is the credential.

// AdminSocketPath is where serve opens its admin socket: admin.sock in the
// directory holding CAPTURE_LEDGER_SEARCH_DIR (.ledgerctl/admin.sock by
// default).
func AdminSocketPath(searchDir string) string {
	if searchDir == "" {
		searchDir = ".ledgerctl/search"
	}
	return filepath.Join(filepath.Dir(filepath.Clean(searchDir)), "admin.sock")
}

// maxSocketPath is the longest Unix socket path every platform takes.
const maxSocketPath = 100

// listenAdmin opens the admin socket at path: refused when another serve
// answers on it, a stale socket file is replaced.
func listenAdmin(path string) (net.Listener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("admin socket %s: the path is longer than %d bytes (Unix sockets allow no more); move CAPTURE_LEDGER_SEARCH_DIR", path, maxSocketPath)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("admin socket %s: another serve answers on it (one serve per search index directory)", path)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("admin socket %s: a file that is not a socket is in the way", path)
		}
		_ = os.Remove(path) // stale: its serve is gone
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	private, err := os.MkdirTemp(dir, ".admin-")
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	defer os.RemoveAll(private)
	tmp := filepath.Join(private, "s")
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	return &adminListener{Listener: ln, path: path}, nil
}

// adminListener removes its socket file when closed.
type adminListener struct {
	net.Listener
	path string
}

func (l *adminListener) Close() error {
	err := l.Listener.Close()
	_ = os.Remove(l.path)
	return err
}

// adminHandler answers GET /search?as=&org=&q=&limit=&cursor=&crawl=&host=&from=&to=
// with the body GET /api/search answers, for the person named by as and
// org; a bad request is 400 {"error": "<field> <reason>"}.
func adminHandler(searcher api.Searcher) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		subject, orgs := q.Get("as"), q["org"]
		delete(q, "as")
		delete(q, "org")
		answer := func(code int, body any) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_ = json.NewEncoder(w).Encode(body)
		}
		if subject == "" {
			answer(http.StatusBadRequest, map[string]string{"error": "as is required"})
			return
		}
		// The same identity rules as every other caller: a hostile name is
		// refused, naming it, before anything is asked.
		if err := ledger.CheckSubject(subject); err != nil {
			answer(http.StatusBadRequest, map[string]string{"error": "as: " + err.Error()})
			return
		}
		for _, o := range orgs {
			if err := ledger.CheckOrganization(o); err != nil {
				answer(http.StatusBadRequest, map[string]string{"error": "org: " + err.Error()})
				return
			}
		}
		req, err := api.ParseSearchRequest(q)
		var bad *api.BadRequest
		if errors.As(err, &bad) {
			answer(http.StatusBadRequest, map[string]string{"error": bad.Message})
			return
		}
		if err == nil {
			var page search.Page
			page, err = searcher.Search(r.Context(), subject, orgs, req)
			if errors.Is(err, search.ErrBadCursor) {
				answer(http.StatusBadRequest, map[string]string{"error": "querystring/cursor " + err.Error()})
				return
			}
			if err == nil {
				answer(http.StatusOK, page)
				return
			}
		}
		answer(http.StatusInternalServerError, map[string]string{"error": err.Error()})
	})
	return mux
}

// serveAdmin opens the admin socket for serve (Bleve only: OpenSearch is
// shared by every process already) and serves it until serve stops.
func (a *App) serveAdmin(srv *Server, searcher api.Searcher) error {
	if a.Settings.OpenSearchURL != "" {
		return nil
	}
	ln, err := listenAdmin(AdminSocketPath(a.Settings.SearchDir))
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: adminHandler(searcher), ReadHeaderTimeout: 10 * time.Second}
	a.mu.Lock()
	a.closers = append(a.closers, func() { _ = hs.Close(); _ = ln.Close() })
	a.mu.Unlock()
	srv.work(func(ctx context.Context) {
		go func() { <-ctx.Done(); _ = hs.Close() }()
		_ = hs.Serve(ln)
	})
	a.Log.Info("admin socket: `ledgerctl search` on this machine goes through serve", "socket", AdminSocketPath(a.Settings.SearchDir))
	return nil
}

// AdminError is a search the admin socket refused as asked (a 400): the
// message names the field.
type AdminError struct{ Message string }

func (e *AdminError) Error() string { return e.Message }

// AdminSearch runs a search through a running serve's admin socket at
// path, as subject with orgs; params are GET /api/search's (q, limit,
// cursor and the filters).
func AdminSearch(ctx context.Context, path, subject string, orgs []string, params url.Values) (search.Page, error) {
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}}
	defer client.CloseIdleConnections()
	q := url.Values{}
	for k, v := range params {
		q[k] = v
	}
	q.Set("as", subject)
	q["org"] = orgs
	req, err := http.NewRequestWithContext(ctx, "GET", "http://admin/search?"+q.Encode(), nil)
	if err != nil {
		return search.Page{}, err
	}
	res, err := client.Do(req)
	if err != nil {
		return search.Page{}, fmt.Errorf("serve's admin socket %s: %w", path, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.NewDecoder(res.Body).Decode(&e)
		if res.StatusCode == http.StatusBadRequest {
			return search.Page{}, &AdminError{Message: e.Error}
		}
		return search.Page{}, fmt.Errorf("serve's admin socket: %s (%s)", e.Error, strconv.Itoa(res.StatusCode))
	}
	var page search.Page
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil {
		return search.Page{}, fmt.Errorf("serve's admin socket: %w", err)
	}
	return page, nil
}
