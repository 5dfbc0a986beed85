package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
)

// ArchivesOpenOptions are the inputs of `ledgerctl archives open`.
type ArchivesOpenOptions struct {
	*ArchivesOptions
	Browser   bool
	ExpiresIn time.Duration
}

func newCmdArchivesOpen(f *Factory, parent *ArchivesOptions) *cobra.Command {
	opts := &ArchivesOpenOptions{ArchivesOptions: parent}
	cmd := &cobra.Command{
		Use:   "open ARCHIVE_ID --as SUBJECT --org ORG [--browser]",
		Short: "Print (or open) a link to replay one archive in the viewer",
		Long: `Runs the same function as POST /api/archives/{id}/replay: checks that --as,
member of --org, may view the archive (can_view, fully consistent), then signs
a replay link for that archive and that identity with CAPTURE_LEDGER_REPLAY_KEY
— the key the running serve uses, so no server is asked, but one must be
running with that key for the link to open. Every read the viewer makes with
it asks OpenFGA again, so it stops working when access is removed, and at the
latest when it expires (--expires-in: 1h by default, at most 12h).

The link points at CAPTURE_LEDGER_API_URL (default http://API_HOST:API_PORT,
0.0.0.0 and :: read as 127.0.0.1): serve's own viewer at /replay/, or the
ReplayWeb.page deployment at CAPTURE_LEDGER_REPLAY_ORIGIN when it is set.
--browser opens it with $BROWSER, else the system's opener (xdg-open, open).
See docs/replay.md.`,
		Example: "  ledgerctl archives open 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 --as alice --org acme\n" +
			"  ledgerctl archives open 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 --as alice --org acme --browser\n" +
			"  ledgerctl archives open 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 --as alice --org acme --expires-in 15m --json",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return archivesOpenRun(cmd, opts, args[0]) },
	}
	cmd.Flags().BoolVar(&opts.Browser, "browser", false, "open the link in a browser ($BROWSER, else xdg-open or open) instead of only printing it")
	cmd.Flags().DurationVar(&opts.ExpiresIn, "expires-in", replay.DefaultTTL, "how long the link works, between 1m and 12h")
	return cmd
}

func archivesOpenRun(cmd *cobra.Command, opts *ArchivesOpenOptions, rawID string) error {
	subject, orgs, err := opts.identity()
	if err != nil {
		return err
	}
	id, err := uuid.Parse(rawID)
	if err != nil || len(rawID) != 36 {
		return usagef("ARCHIVE_ID must be a UUID, got %q", rawID)
	}
	if opts.ExpiresIn < replay.MinTTL || opts.ExpiresIn > replay.MaxTTL {
		return usagef("--expires-in must be between %s and %s, got %s", replay.MinTTL, replay.MaxTTL, opts.ExpiresIn)
	}
	a, err := opts.f.App("DATABASE_URL", "CAPTURE_LEDGER_FGA_STORE_ID", "CAPTURE_LEDGER_FGA_MODEL_ID", replay.KeyVar)
	if err != nil {
		return err
	}
	s := a.Settings
	// The key serve signs with; offline there is no process to make one for.
	key, _, err := replay.ServeKey(s.ReplayKey, false)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	svc, err := a.Replay(cmd.Context(), key)
	if err != nil {
		return err
	}
	m, err := svc.Mint(cmd.Context(), subject, orgs, id.String(), opts.ExpiresIn)
	if errors.Is(err, ledger.ErrNotFound) {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("archive %s: not found (absent, or %s may not view it)", id, subject)}
	}
	if err != nil {
		return err
	}
	link := replay.Link{URL: replay.ViewerURL(apiBaseURL(s), s.ReplayOrigin, id.String(), m.Token, ""), ExpiresAt: m.ExpiresAt.UTC()}
	out, errw := opts.f.Streams.Out, opts.f.Streams.Err
	if opts.JSON {
		if err := json.NewEncoder(out).Encode(link); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(out, link.URL)
		fmt.Fprintf(errw, "works until %s for %s; every read asks again whether %s may view it\n", link.ExpiresAt.Format(time.RFC3339), subject, subject)
	}
	if opts.Browser {
		if err := openBrowser(opts.f, link.URL); err != nil {
			return &ExitError{Code: ExitFailure, Err: fmt.Errorf("open a browser: %w (the link is printed above)", err)}
		}
	}
	return nil
}

// apiBaseURL is where browsers reach serve: CAPTURE_LEDGER_API_URL, else
// the address serve listens on (an unspecified one read as loopback).
func apiBaseURL(s config.Settings) string {
	if s.APIURL != "" {
		return s.APIURL
	}
	host := s.APIHost
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	port := s.APIPort
	if port == 0 {
		port = 7070
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// openBrowser hands link to $BROWSER, or to the system's opener, and does
// not wait for the browser to be closed.
func openBrowser(f *Factory, link string) error {
	name, args := "xdg-open", []string{link}
	if b, ok := f.lookupEnv("BROWSER"); ok && b != "" {
		name = b
	} else if runtime.GOOS == "darwin" {
		name = "open"
	} else if runtime.GOOS == "windows" {
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler", link}
	}
	c := exec.Command(name, args...)
	if err := c.Start(); err != nil {
		return err
	}
	go func() { _ = c.Wait() }()
	return nil
}
