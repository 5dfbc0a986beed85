package cli

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/health"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
)

// ServeOptions are the inputs of `ledgerctl serve`.
type ServeOptions struct {
	f *Factory
	// DevIdentityOnNetwork is --insecure-dev-identity-on-network: serve the
	// dev header mode on a non-loopback address anyway.
	DevIdentityOnNetwork bool
}

func newCmdServe(f *Factory) *cobra.Command {
	opts := &ServeOptions{f: f}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the HTTP API, the picker and the background workers",
		Long: `Serves the archive API (presigned URLs, archive list, /api/me), the browser
picker at /, /healthz (alive) and /readyz (PostgreSQL, OpenFGA and S3
answer), and the crawl routes when a runner (the Windmill webhook) is
configured; drains the OpenFGA outbox on a ticker. Stops
gracefully on SIGINT/SIGTERM, finishing requests in flight.

With CAPTURE_LEDGER_DEV_IDENTITY=1 (and no CAPTURE_LEDGER_OIDC_ISSUER) anyone
who reaches the port can act as any user, so serve refuses to listen on any
address but 127.0.0.1, localhost or ::1 (exit 2) unless
--insecure-dev-identity-on-network is given.`,
		Example: "  ledgerctl serve\n  ledgerctl serve --host 127.0.0.1 --port 7070",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return serveRun(cmd.Context(), opts) },
	}
	config.BindFlags(cmd.Flags(), "CAPTURE_LEDGER_API_HOST", "CAPTURE_LEDGER_API_PORT", "CAPTURE_LEDGER_DRAIN_INTERVAL_MS")
	cmd.Flags().BoolVar(&opts.DevIdentityOnNetwork, identity.DevNetworkFlag, false, "with the dev header identity, listen on a non-loopback address anyway (anyone who reaches it can act as any user)")
	return cmd
}

func logLevel(s string) slog.Level {
	var l slog.Level
	_ = l.UnmarshalText([]byte(s))
	return l
}

func serveRun(ctx context.Context, opts *ServeOptions) error {
	f := opts.f
	f.verbose = true // the startup notes say where the configuration came from
	a, err := f.App(config.Required()...)
	if err != nil {
		return err
	}
	s := a.Settings
	log := slog.New(slog.NewJSONHandler(f.Streams.Err, &slog.HandlerOptions{Level: logLevel(s.LogLevel)}))
	a.Log = log

	resolver, mode := identity.Select(identity.Options{OIDCIssuer: s.OIDCIssuer, OIDCAudience: s.OIDCAudience, DevIdentity: devIdentityRaw(s), Logger: log})
	// Refused before anything is opened: nothing changes (exit 2).
	if err := identity.CheckDevListen(mode, s.APIHost, opts.DevIdentityOnNetwork); err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	access, err := a.Access(ctx)
	if err != nil {
		return err
	}
	subs, err := a.Submitters(ctx)
	if err != nil {
		return err
	}
	var crawls *crawl.Service
	if a.CrawlsEnabled() {
		if crawls, err = a.Crawls(ctx); err != nil {
			return err
		}
	} else {
		log.Info("CAPTURE_LEDGER_CRAWL_WEBHOOK_URL is not set — /api/crawls is not served")
	}
	view := api.ViewNone
	switch mode {
	case identity.ModeHeader:
		view = api.ViewNames
	case identity.ModeJWT:
		view = api.ViewToken
	}
	srv := &api.Server{
		Access: access, Identity: resolver, Submitters: subs, Log: log,
		Crawls: crawls, Readiness: &health.Checker{App: a},
		Picker: api.PickerConfig{View: view, Issuer: s.OIDCIssuer, Host: s.APIHost, Port: s.APIPort, ReplayOrigin: s.ReplayOrigin},
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(s.APIHost, strconv.Itoa(s.APIPort)))
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	for _, n := range identity.StartupNotes(identity.Startup{
		Mode: mode, Issuer: s.OIDCIssuer, DevIdentity: s.DevIdentity, Host: s.APIHost, Port: ln.Addr().(*net.TCPAddr).Port,
		Crawls: s.WebhookURL != "",
	}) {
		log.LogAttrs(ctx, n.Level, n.Message, n.Attrs...)
	}

	httpSrv := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(ln) }()

	drainCtx, stopDrain := context.WithCancel(ctx)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		drainLoop(drainCtx, a, s.DrainInterval, s.OutboxMaxAttempts, log)
	}()
	stalled := make(chan struct{})
	go func() {
		defer close(stalled)
		if crawls != nil {
			stallLoop(drainCtx, crawls, s.CrawlStallTimeout, log)
		}
	}()

	select {
	case err = <-errc:
	case <-ctx.Done():
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		err = httpSrv.Shutdown(sctx)
		cancel()
	}
	stopDrain()
	<-drained
	<-stalled
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// drainLoop delivers the outbox every interval until ctx ends. A failing
// drain is logged and retried on the next tick; it never stops the server.
func drainLoop(ctx context.Context, a interface {
	OutboxDeps(context.Context) (outbox.Store, outbox.Writer, error)
}, interval time.Duration, maxAttempts int, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		st, w, err := a.OutboxDeps(ctx)
		if err == nil {
			_, err = outbox.Drain(ctx, st, w, outbox.Options{MaxAttempts: maxAttempts, MaxRows: 5000, Log: log})
		}
		if err != nil && ctx.Err() == nil {
			log.Error("Scheduled outbox drain failed", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// stallLoop closes, once a minute, running crawls that made no progress for
// timeout: their runner died, and a running crawl blocks every other one.
func stallLoop(ctx context.Context, svc *crawl.Service, timeout time.Duration, log *slog.Logger) {
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

func devIdentityRaw(s config.Settings) string {
	if s.DevIdentity {
		return "1"
	}
	return ""
}
