package serve

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// ServeOptions are the inputs of `ledgerctl serve`.
type ServeOptions struct {
	f *cmdutil.Factory
	// DevIdentityOnNetwork is --insecure-dev-identity-on-network: serve the
	// dev header mode on a non-loopback address anyway.
	DevIdentityOnNetwork bool
	// CheckPort is --check-port: only check that the API port is free.
	CheckPort bool
	// PrintURL is --print-url: only print the console's URL.
	PrintURL bool
}

func NewCmdServe(f *cmdutil.Factory) *cobra.Command {
	opts := &ServeOptions{f: f}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the HTTP API, the web console and the background workers",
		Long: `Serves the archive API (presigned URLs, archive list, /api/me), the web
console at / (docs/console.md), /healthz (alive) and /readyz (PostgreSQL, OpenFGA and S3
answer), and the crawl routes; POST /api/archives/{id}/replay,
/api/crawls/{id}/replay and /api/replay, whose links open the archive viewer
(ReplayWeb.page) with its token-bound reads on an origin of each replay
session's own, <label>.replay.localhost on the same port or under
CAPTURE_LEDGER_REPLAY_DOMAIN (docs/replay.md; CAPTURE_LEDGER_REPLAY_KEY is
required unless CAPTURE_LEDGER_DEV_IDENTITY=1); with the dev identity it
answers only loopback names (421 otherwise); drains the OpenFGA outbox as
rows are added (PostgreSQL notifies it) and on a ticker for retries. Stops
gracefully on SIGINT/SIGTERM, finishing requests in flight.

Crawls: without CAPTURE_LEDGER_CRAWL_WEBHOOK_URL, serve runs them itself with
the embedded runner (robots.txt, per-host pacing), capturing with the
built-in capturer, or through BrowserHive when
CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS is set; a crawl a stopped serve left
running resumes when serve starts again. When the browser engine finds no
Chromium (and BrowserHive is not set) serve warns and does not serve the
crawl routes. With the webhook set, the Windmill flow runs crawls and reports
each level back to POST /api/crawls/{id}/pages.

With CAPTURE_LEDGER_DEV_IDENTITY=1 (and no CAPTURE_LEDGER_OIDC_ISSUER) anyone
who reaches the port can act as any user, so serve refuses to listen on any
address but 127.0.0.1, localhost or ::1 (exit 2) unless
--insecure-dev-identity-on-network is given.

The API port is checked before any dependency is opened: a port another
program holds is exit 2, naming CAPTURE_LEDGER_API_PORT and a free port.
--check-port does only that check (make run runs it before it starts the
stack); --print-url only prints the console's URL as serve would listen
(http://HOST:PORT/ from the settings: flags, shell, .env.local, .env), which
make run shows.

Logs go to stderr: one readable line each on a terminal (coloured unless
NO_COLOR is set), JSON otherwise; --log-format (CAPTURE_LEDGER_LOG_FORMAT)
picks one.`,
		Example: "  ledgerctl serve\n  ledgerctl serve --host 127.0.0.1 --port 7070",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return serveRun(cmd.Context(), opts) },
	}
	config.BindFlags(cmd.Flags(), "CAPTURE_LEDGER_API_HOST", "CAPTURE_LEDGER_API_PORT", "CAPTURE_LEDGER_DRAIN_INTERVAL_MS", "CAPTURE_LEDGER_LOG_FORMAT")
	cmd.Flags().BoolVar(&opts.DevIdentityOnNetwork, identity.DevNetworkFlag, false, "with the dev header identity, listen on a non-loopback address anyway (anyone who reaches it can act as any user)")
	cmd.Flags().BoolVar(&opts.CheckPort, "check-port", false, "only check that the API port is free (exit 2 naming a free one when it is taken), needing no other setting")
	cmd.Flags().BoolVar(&opts.PrintURL, "print-url", false, "only print the console's URL as serve would listen (http://HOST:PORT/), needing no other setting")
	return cmd
}

func serveRun(ctx context.Context, opts *ServeOptions) error {
	f := opts.f
	if opts.CheckPort {
		return checkPortOnly(f)
	}
	if opts.PrintURL {
		s, err := f.Settings()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f.Streams.Out, "http://%s/\n", net.JoinHostPort(s.APIHost, strconv.Itoa(s.APIPort)))
		return err
	}
	f.Verbose = true // the startup notes say where the configuration came from
	a, err := f.App(config.Required()...)
	if err != nil {
		return err
	}
	log := f.Logger(a.Settings.LogFormat, a.Settings.LogLevel)
	a.Log = log
	if err := CheckAPIPort(a.Settings.APIHost, a.Settings.APIPort); err != nil {
		return err
	}

	srv, _, err := ListenServer(ctx, a, log, app.ServeOptions{DevIdentityOnNetwork: opts.DevIdentityOnNetwork, Version: cmdutil.Version})
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}

// ListenServer builds what serve runs, listens, and logs the startup
// notes. Unsafe settings are an *app.RefusedError (exit 2), found before
// anything is opened.
func ListenServer(ctx context.Context, a *app.App, log *slog.Logger, o app.ServeOptions) (*app.Server, *net.TCPAddr, error) {
	srv, err := a.Server(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	addr, err := srv.Listen()
	if err != nil {
		if perr := portError(a.Settings.APIHost, a.Settings.APIPort, err); perr != nil {
			return nil, nil, perr
		}
		return nil, nil, &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: err}
	}
	for _, n := range srv.StartupNotes(addr) {
		log.LogAttrs(ctx, n.Level, n.Message, n.Attrs...)
	}
	return srv, addr, nil
}
