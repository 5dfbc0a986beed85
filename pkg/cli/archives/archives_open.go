package archives

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
)

// ArchivesOpenOptions are the inputs of `ledgerctl archives open`.
type ArchivesOpenOptions struct {
	*ArchivesOptions
	Browser   bool
	ExpiresIn time.Duration
	Crawl     string
}

func newCmdArchivesOpen(f *cmdutil.Factory, parent *ArchivesOptions) *cobra.Command {
	opts := &ArchivesOpenOptions{ArchivesOptions: parent}
	cmd := &cobra.Command{
		Use:   "open (ARCHIVE_ID | --crawl CRAWL_ID) --as SUBJECT --org ORG [--browser]",
		Short: "Print (or open) a link to replay one archive, or a crawl as one collection",
		Long: `Runs the same function as POST /api/archives/{id}/replay (or, with --crawl,
POST /api/crawls/{id}/replay): checks that --as, member of --org, may view the
archive (can_view, fully consistent) — with --crawl, which of the crawl's
archives they may view — then signs a replay link for them and that identity
with CAPTURE_LEDGER_REPLAY_KEY — the key the running serve uses, so no server
is asked, but one must be running with that key for the link to open. Every
read the viewer makes with it asks OpenFGA again, so it stops working when
access is removed, and at the latest when it expires (--expires-in: 1h by
default, at most 12h).

Each link opens a replay session on an origin of its own,
http://<label>.replay.localhost:API_PORT on one machine (browsers resolve
*.localhost to loopback), or under CAPTURE_LEDGER_REPLAY_DOMAIN: archived
pages run there, apart from the API and from every other session.
--browser opens it with $BROWSER, else the system's opener (xdg-open, open);
when the opener cannot start or fails within a few seconds, the command
says so with the link and exits 1. See docs/replay.md.`,
		Example: "  ledgerctl archives open 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 --as alice --org acme\n" +
			"  ledgerctl archives open --crawl 5d1c1f7e-1c2b-4f0e-9a55-0d5c7d1e2f3a --as alice --org acme\n" +
			"  ledgerctl archives open 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 --as alice --org acme --browser\n" +
			"  ledgerctl archives open 0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71 --as alice --org acme --expires-in 15m --json",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 1 && opts.Crawl != "":
				return cmdutil.Usagef("give an ARCHIVE_ID or --crawl, not both")
			case len(args) == 0 && opts.Crawl == "":
				return cmdutil.Usagef("give the ARCHIVE_ID to open, or --crawl CRAWL_ID to open a crawl's archives")
			case len(args) == 1:
				return archivesOpenRun(cmd, opts, args[0])
			}
			return archivesOpenRun(cmd, opts, "")
		},
	}
	cmd.Flags().BoolVar(&opts.Browser, "browser", false, "open the link in a browser ($BROWSER, else xdg-open or open) instead of only printing it")
	cmd.Flags().DurationVar(&opts.ExpiresIn, "expires-in", replay.DefaultTTL, "how long the link works, between 1m and 12h")
	cmd.Flags().StringVar(&opts.Crawl, "crawl", "", "open the archives of this crawl (those --as may view, of its first CAPTURE_LEDGER_REPLAY_COLLECTION_LIMIT captures) as one collection")
	return cmd
}
func archivesOpenRun(cmd *cobra.Command, opts *ArchivesOpenOptions, rawID string) error {
	subject, orgs, err := opts.identity()
	if err != nil {
		return err
	}
	var id, crawlID uuid.UUID
	if rawID != "" {
		if id, err = uuid.Parse(rawID); err != nil || len(rawID) != 36 {
			return cmdutil.Usagef("ARCHIVE_ID must be a UUID, got %q", rawID)
		}
	} else if crawlID, err = uuid.Parse(opts.Crawl); err != nil || len(opts.Crawl) != 36 {
		return cmdutil.Usagef("--crawl must be a UUID, got %q", opts.Crawl)
	}
	if opts.ExpiresIn < replay.MinTTL || opts.ExpiresIn > replay.MaxTTL {
		return cmdutil.Usagef("--expires-in must be between %s and %s, got %s", replay.MinTTL, replay.MaxTTL, opts.ExpiresIn)
	}
	a, err := opts.f.App("DATABASE_URL", "CAPTURE_LEDGER_FGA_STORE_ID", "CAPTURE_LEDGER_FGA_MODEL_ID", replay.KeyVar)
	if err != nil {
		return err
	}
	s := a.Settings
	// The key serve signs with; offline there is no process to make one for.
	key, _, err := replay.ServeKey(s.ReplayKey, false)
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
	}
	origins, err := replay.ParseDomain(s.ReplayDomain, apiPort(s))
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
	}
	svc, err := a.Replay(cmd.Context(), key)
	if err != nil {
		return err
	}
	who := replay.Caller{Subject: subject, Organizations: orgs}
	var m replay.Session
	what, archiveID := "archive "+id.String(), ""
	if rawID != "" {
		archiveID = id.String()
		m, err = svc.Mint(cmd.Context(), who, archiveID, opts.ExpiresIn)
	} else {
		what = "crawl " + crawlID.String()
		m, err = svc.MintCrawl(cmd.Context(), who, crawlID.String(), opts.ExpiresIn)
	}
	if errors.Is(err, ledger.ErrNotFound) {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("%s: not found (absent, or %s may not view it)", what, subject)}
	}
	if err != nil {
		return err
	}
	link := replay.Link{URL: replay.ViewerURL(origins, m, replay.Source(origins, m, archiveID), ""), ExpiresAt: m.ExpiresAt.UTC()}
	if archiveID == "" {
		link.Archives, link.Limit = m.Archives, m.Limit
	}
	out, errw := opts.f.Streams.Out, opts.f.Streams.Err
	if opts.JSON {
		if err := json.NewEncoder(out).Encode(link); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(out, link.URL)
		fmt.Fprintf(errw, "works until %s for %s; every read asks again whether %s may view it\n", link.ExpiresAt.Format(time.RFC3339), subject, subject)
	}
	if link.Limit > 0 {
		fmt.Fprintf(errw, "the crawl has more captures than its collection lists (its first %d): this collection holds the %d of them that %s may view; `ledgerctl crawl export %s --out FILE` writes every one into one WACZ\n", link.Limit, link.Archives, subject, crawlID)
	}
	if opts.Browser {
		if err := openBrowser(opts.f, link.URL); err != nil {
			return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("could not open a browser (%w); open the link yourself: %s", err, link.URL)}
		}
	}
	return nil
}

// apiPort is the port serve listens on (7070 when the setting asks for
// any): the port of replay origins under *.localhost.
func apiPort(s config.Settings) int {
	if s.APIPort == 0 {
		return 7070
	}
	return s.APIPort
}

// openerGrace is how long openBrowser waits for the opener to fail: an
// opener that cannot start a browser (no display, no browser configured)
// exits within it; one still running after it is taken to have worked.
var openerGrace = 3 * time.Second

// openBrowser hands link to $BROWSER, or to the system's opener, and does
// not wait for the browser to be closed; an opener that exits with an error
// within openerGrace is a failure (its own message goes to stderr when that
// is the process's).
func openBrowser(f *cmdutil.Factory, link string) error {
	name, args := "xdg-open", []string{link}
	if b, ok := f.LookupEnv("BROWSER"); ok && b != "" {
		name = b
	} else if runtime.GOOS == "darwin" {
		name = "open"
	} else if runtime.GOOS == "windows" {
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler", link}
	}
	c := exec.Command(name, args...)
	if errw, ok := f.Streams.Err.(*os.File); ok {
		c.Stderr = errw
	}
	if err := c.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	case <-time.After(openerGrace):
	}
	return nil
}
