package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
	"github.com/capture-ledger/ledgerctl/pkg/visible"
	"github.com/capture-ledger/ledgerctl/pkg/web"
)

// ServeOptions are what `serve` is told beyond the settings.
type ServeOptions struct {
	// DevIdentityOnNetwork serves the dev header identity on a non-loopback
	// address anyway (--insecure-dev-identity-on-network).
	DevIdentityOnNetwork bool
	// Version is the binary's version, named in the WACZ files it writes.
	Version string
}

// RefusedError is serve refusing its settings as given (the dev identity
// on a network address, no replay key outside dev mode), found before
// anything is opened or bound: nothing changed.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }

func (e *RefusedError) Unwrap() error { return e.Err }

// ShutdownTimeout bounds how long serve waits for requests in flight when
// it stops.
const ShutdownTimeout = 15 * time.Second

// Server is `ledgerctl serve` built from the settings: the HTTP API, the
// web console and the replay viewer on one handler, and the background workers
// (the outbox drain, the stalled-crawl closer).
type Server struct {
	// Mode is how callers are identified.
	Mode identity.Mode
	// Crawls says the crawl routes are served (a runner is configured).
	Crawls bool
	// ReplayKeyEphemeral says replay links are signed with a key made for
	// this process (dev identity without CAPTURE_LEDGER_REPLAY_KEY).
	ReplayKeyEphemeral bool

	// signIn, when set, is the startup line about the console's sign-in.
	signIn  string
	app     *App
	api     *api.Server
	ln      net.Listener
	workers []func(ctx context.Context)
}

// Server builds serve: the identity resolver the settings select, the
// archive, crawl and replay use-cases, /readyz, and the workers. It refuses
// unsafe settings (a *RefusedError) before opening anything; then it opens
// PostgreSQL and OpenFGA (an unreachable one is an error matching
// ledger.ErrUnreachable). Log with a.Log: serve is the one command that
// logs.
func (a *App) Server(ctx context.Context, o ServeOptions) (*Server, error) {
	s := a.Settings
	log := a.Log
	resolver, mode := identity.Select(identity.Options{OIDCIssuer: s.OIDCIssuer, OIDCAudience: s.OIDCAudience, DevIdentity: devIdentityRaw(s.DevIdentity), Logger: log})
	if err := identity.CheckDevListen(mode, s.APIHost, o.DevIdentityOnNetwork); err != nil {
		return nil, &RefusedError{Err: err}
	}
	// Replay (docs/replay.md): a key is required outside dev mode, and
	// sessions get origins of their own under the replay domain.
	replayKey, replayKeyEphemeral, err := replay.ServeKey(s.ReplayKey, s.DevIdentity)
	if err != nil {
		return nil, &RefusedError{Err: err}
	}
	origins, err := replay.ParseDomain(s.ReplayDomain, s.APIPort)
	if err != nil {
		return nil, &RefusedError{Err: err}
	}
	if u, err := url.Parse(s.APIURL); err == nil && s.APIURL != "" {
		if _, under, _ := origins.Match(u.Host); under {
			return nil, &RefusedError{Err: fmt.Errorf("CAPTURE_LEDGER_API_URL (%s) is a name under CAPTURE_LEDGER_REPLAY_DOMAIN (%s): serve would answer it as a replay origin; give replay a domain of its own", s.APIURL, origins.Domain)}
		}
	}

	access, err := a.Access(ctx)
	if err != nil {
		return nil, err
	}
	subs, err := a.Submitters(ctx)
	if err != nil {
		return nil, err
	}
	srv := &Server{Mode: mode, ReplayKeyEphemeral: replayKeyEphemeral, app: a}
	apiSrv := &api.Server{
		Access: access, Identity: resolver, Submitters: subs, Log: log,
		Readiness: a.Readiness(),
		// Unset bounds take the crawl downloads' defaults, not a list's.
		Exports: visible.NewGate(visible.GateBounds{Lists: s.ExportConcurrency, PerCaller: s.ExportPerCaller, PerOrg: s.ExportPerOrg, Checks: 1}.Or(api.DefaultExportBounds)),
	}
	if mode == identity.ModeHeader {
		apiSrv.AllowedHosts = DevHosts(s.APIHost, s.APIURL)
	}
	if err := a.serveCrawls(ctx, srv, apiSrv, "ledgerctl "+o.Version); err != nil {
		return nil, err
	}
	replaySvc, err := a.Replay(ctx, replayKey)
	if err != nil {
		return nil, err
	}
	apiSrv.Replay = &api.Replay{Service: replaySvc, ViewerDir: s.ReplayViewerDir, Origins: origins,
		KeepCookies: slices.ContainsFunc(DevHosts(s.APIHost, s.APIURL), origins.SharesCookiesWith)}
	if err := a.serveCaptures(ctx, apiSrv, "ledgerctl "+o.Version); err != nil {
		return nil, err
	}
	if err := a.serveShares(ctx, srv, apiSrv, time.Minute); err != nil {
		return nil, err
	}
	if apiSrv.Details, err = a.Details(ctx); err != nil {
		return nil, err
	}
	if err := a.serveSearch(ctx, srv, apiSrv); err != nil {
		return nil, err
	}
	srv.work(func(ctx context.Context) { drainLoop(ctx, a, s.DrainInterval, log) })
	console := &web.Console{Log: log}
	who := consoleWho(mode)
	if mode == identity.ModeJWT && s.OIDCClientID != "" {
		// Sign-in: Bearer tokens keep working; a browser without one is
		// resolved by its session cookie, and every state-changing
		// request it makes is CSRF-checked.
		store, err := a.SessionStore(ctx)
		if err != nil {
			return nil, err
		}
		sessions := &identity.SessionResolver{Bearer: resolver, Store: store, Cookies: identity.Cookies{PublicURL: s.APIURL}}
		apiSrv.Identity = sessions
		console.Auth = web.NewAuth(web.AuthConfig{Issuer: s.OIDCIssuer, ClientID: s.OIDCClientID, ClientSecret: s.OIDCClientSecret,
			RedirectURL: s.RedirectURL(), Sessions: sessions})
		apiSrv.CSRF = console.Auth.Guard
		who = web.WhoSignIn
		srv.signIn = "console sign-in: OIDC client " + s.OIDCClientID + " of " + s.OIDCIssuer + ", back at " + s.RedirectURL() + " (open the console at that host: cookies belong to a host name)"
	}
	console.Config = web.Config{
		Who: who, Issuer: s.OIDCIssuer, Host: s.APIHost, Port: s.APIPort,
		Why: access.Source == archive.SourceCandidates,
		Features: web.Features{Crawls: apiSrv.Crawls != nil, Search: apiSrv.Search != nil, Replay: apiSrv.Replay != nil,
			Captures: apiSrv.Captures != nil, Shares: apiSrv.Shares != nil, Delete: apiSrv.Deleter != nil},
	}
	apiSrv.Pages = console
	srv.api = apiSrv
	return srv, nil
}

// DevHosts are the host names serve answers for with the dev identity:
// loopback's, the API host when it is a name or address of its own, and
// the API URL's host.
func DevHosts(apiHost, apiURL string) []string {
	hosts := []string{"127.0.0.1", "localhost", "::1"}
	add := func(h string) {
		h = strings.ToLower(strings.Trim(h, "[]"))
		if h == "" || h == "0.0.0.0" || h == "::" || slices.Contains(hosts, h) {
			return
		}
		hosts = append(hosts, h)
	}
	add(apiHost)
	if u, err := url.Parse(apiURL); err == nil && apiURL != "" {
		add(u.Hostname())
	}
	return hosts
}

// work adds a background worker: it runs from Run until serve stops.
func (s *Server) work(fn func(ctx context.Context)) { s.workers = append(s.workers, fn) }

// consoleWho is the identity form the console shows, for the identity
// mode.
func consoleWho(mode identity.Mode) web.Who {
	switch mode {
	case identity.ModeHeader:
		return web.WhoNames
	case identity.ModeJWT:
		return web.WhoToken
	}
	return web.WhoNone
}

func devIdentityRaw(dev bool) string {
	if dev {
		return "1"
	}
	return ""
}

// Routes lists the route patterns serve answers on the API's origin.
func (s *Server) Routes() []string { return s.api.Routes() }

// Handler is the routed HTTP handler (the API, the console, /healthz,
// /readyz, the replay viewer).
func (s *Server) Handler() http.Handler { return s.api.Handler() }

// Listen binds CAPTURE_LEDGER_API_HOST:CAPTURE_LEDGER_API_PORT (port 0
// takes a free one) and returns the address bound.
func (s *Server) Listen() (*net.TCPAddr, error) {
	st := s.app.Settings
	ln, err := net.Listen("tcp", net.JoinHostPort(st.APIHost, strconv.Itoa(st.APIPort)))
	if err != nil {
		return nil, err
	}
	s.ln = ln
	addr := ln.Addr().(*net.TCPAddr)
	// Replay origins under *.localhost are served on serve's own port:
	// the one just bound when the setting asked for any.
	if r := s.api.Replay; r != nil && r.Origins.Port == "" && replay.IsLocalhost(r.Origins.Domain) {
		r.Origins.Port = strconv.Itoa(addr.Port)
	}
	return addr, nil
}

// StartupNotes are the lines serve logs once it listens at addr: how
// callers are identified and where, then what each feature wants the
// operator to know.
func (s *Server) StartupNotes(addr *net.TCPAddr) []identity.Note {
	st := s.app.Settings
	notes := identity.StartupNotes(identity.Startup{
		Mode: s.Mode, Issuer: st.OIDCIssuer, DevIdentity: st.DevIdentity, Host: st.APIHost, Port: addr.Port,
		Crawls: s.Crawls, LevelReports: s.Crawls && st.WebhookURL != "",
	})
	if s.signIn != "" {
		notes = append(notes, identity.Note{Level: slog.LevelInfo, Message: s.signIn})
	}
	if r := s.api.Replay; r != nil {
		notes = append(notes, identity.Note{Level: slog.LevelInfo, Message: "replay sessions are served on origins of their own: " + r.Origins.Origin("<label>")})
		if r.KeepCookies {
			notes = append(notes, identity.Note{Level: slog.LevelWarn, Message: "the API's origin and the replay origins (" + r.Origins.Domain + ") are one site: a replayed page can set cookies the API and every other replay session receive, and replay cannot clear them without signing people out of the console; give CAPTURE_LEDGER_REPLAY_DOMAIN a registrable domain of its own (docs/replay.md)"})
		}
	}
	for _, n := range replay.StartupNotes(s.ReplayKeyEphemeral, st.ReplayViewerDir) {
		notes = append(notes, identity.Note{Level: slog.LevelWarn, Message: n})
	}
	return notes
}

// Run serves HTTP on the bound address (Listen, which Run calls when it was
// not) and runs the workers until ctx ends; then it stops taking requests,
// finishes those in flight (up to ShutdownTimeout), stops the workers and
// waits for them. A server that stops for another reason returns why.
func (s *Server) Run(ctx context.Context) error {
	if s.ln == nil {
		if _, err := s.Listen(); err != nil {
			return err
		}
	}
	log := s.app.Log
	httpSrv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(s.ln) }()

	wctx, stopWorkers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, fn := range s.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(wctx)
		}()
	}

	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		err = httpSrv.Shutdown(sctx)
		cancel()
	}
	stopWorkers()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// drainLoop delivers the outbox as rows are added and every interval until
// ctx ends. A failing drain is logged and retried on the next tick or wake;
// it never stops the server.
func drainLoop(ctx context.Context, a *App, interval time.Duration, log *slog.Logger) {
	// New rows wake it at once (migration 000022's notification, sent by
	// every process that writes the outbox); the interval is for retries
	// that come due and for a notification missed.
	wake := make(chan struct{}, 1)
	if st, err := a.Store(ctx); err == nil {
		go st.Listen(ctx, []string{chanOutbox}, func(string) { poke(wake) })
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		_, err := a.Drain(ctx, outbox.Options{MaxRows: 5000, Log: log})
		if err != nil && ctx.Err() == nil {
			log.Error("Scheduled outbox drain failed", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
	}
}

// chanOutbox is the notification of new (or requeued) outbox rows.
const chanOutbox = "ledger_outbox"

// stallCloser closes running crawls that made no progress for a while.
type stallCloser interface {
	CloseStalled(ctx context.Context, timeout time.Duration) ([]string, error)
}

// stallLoop closes, once a minute, running crawls that made no progress for
// timeout: their runner died, and a running crawl blocks every other one.
func stallLoop(ctx context.Context, svc stallCloser, timeout time.Duration, log *slog.Logger) {
	t := time.NewTicker(min(time.Minute, timeout/2))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ids, err := svc.CloseStalled(ctx, timeout)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("closing stalled crawls failed", "error", err.Error())
		case len(ids) > 0:
			log.Warn("closed stalled crawls as failed", "crawlIds", ids, "noProgressFor", timeout.String())
		}
	}
}
