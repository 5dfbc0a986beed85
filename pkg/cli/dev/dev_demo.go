package dev

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	crawlcmd "github.com/capture-ledger/ledgerctl/pkg/cli/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/cli/fga"
	"github.com/capture-ledger/ledgerctl/pkg/cli/serve"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// demoFiles is the bundled demo site: one folder per host.
//
//go:embed demo
var demoFiles embed.FS

// demoHosts are the demo site's hosts: <name>.demo.localhost, one port.
var demoHosts = []string{"www", "blog", "ads"}

// DevDemoOptions are the inputs of `ledgerctl dev demo`.
type DevDemoOptions struct {
	f   *cmdutil.Factory
	As  string
	Org string
}

func newCmdDevDemo(f *cmdutil.Factory) *cobra.Command {
	opts := &DevDemoOptions{f: f}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Serve a bundled demo site, crawl it, and run serve (what make run does)",
		Long: `Shows the product working on one machine. In this one process it:

  1. serves a small bundled site on one port of 127.0.0.1, three hosts
     named under demo.localhost (names that reach loopback without DNS):
     www (English and Japanese pages; robots.txt with Disallow: /private/
     and Crawl-delay: 1), blog (Japanese) and ads;
  2. grants --as the submitter relation on --org in OpenFGA;
  3. closes a crawl an earlier demo left running in --org, and starts a
     crawl of www with mixed rules: skip the ads host, capture the blog's
     pages without following their links, follow www (max depth 2);
  4. prints the console URL and the crawl status --watch command, then runs
     what ledgerctl serve runs (its embedded runner crawls the site) until
     Ctrl-C, which also stops the site; when the crawl ends it prints the
     console URL again, below the log lines.

The API port (CAPTURE_LEDGER_API_PORT) is checked first: taken, the demo
stops before it opens anything (exit 2), naming a free port. Logs are
readable lines on a terminal, JSON otherwise (--log-format, as for serve).

Captures must be allowed to reach loopback: CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE=1
is required (make run sets it for this command only). When the browser engine
finds no Chromium the demo captures with the http engine instead.`,
		Example: "  CAPTURE_LEDGER_DEV_IDENTITY=1 CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE=1 ledgerctl dev demo\n" +
			"  ledgerctl dev demo --as alice --org demo",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return devDemoRun(cmd.Context(), opts) },
	}
	cmd.Flags().StringVar(&opts.As, "as", "", "the dev user granted submitter, who starts the crawl (default: your login name, else dev)")
	cmd.Flags().StringVar(&opts.Org, "org", "demo", "the demo organization")
	config.BindFlags(cmd.Flags(), "CAPTURE_LEDGER_LOG_FORMAT")
	return cmd
}

// demoUser is the login name when it is a usable subject, else "dev".
func demoUser() string {
	if u, err := user.Current(); err == nil {
		if identity.CheckIdentity(identity.Identity{Subject: u.Username, Organizations: []string{}}) == nil && u.Username != "" {
			return u.Username
		}
	}
	return "dev"
}

func devDemoRun(ctx context.Context, opts *DevDemoOptions) error {
	f := opts.f
	if opts.As == "" {
		opts.As = demoUser()
	}
	if err := identity.CheckIdentity(identity.Identity{Subject: opts.As, Organizations: []string{opts.Org}}); err != nil {
		return cmdutil.Usagef("--as/--org: %v", err)
	}
	f.Verbose = true
	a, err := f.App(config.Required()...)
	if err != nil {
		return err
	}
	log := f.Logger(a.Settings.LogFormat, a.Settings.LogLevel)
	a.Log = log
	if err := serve.CheckAPIPort(a.Settings.APIHost, a.Settings.APIPort); err != nil {
		return err
	}
	if a.Windmill() {
		return cmdutil.Usagef("the demo runs its crawl on the embedded runner: unset CAPTURE_LEDGER_CRAWL_WEBHOOK_URL")
	}
	ccfg, err := a.CaptureConfig()
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	if !ccfg.AllowPrivate {
		return cmdutil.Usagef("the demo site is on loopback (127.0.0.1): set %s=1 for this command (make run does)", capture.EnvAllowPrivate)
	}
	if len(a.Settings.BrowserHiveEndpoints) == 0 && a.Settings.CaptureEngine != capture.EngineHTTP {
		if _, err := capture.FindChromium(ccfg.ChromiumPath); err != nil {
			fmt.Fprintf(f.Streams.Err, "no Chromium (%v): the demo captures with the http engine\n", err)
			a.Settings.CaptureEngine = capture.EngineHTTP
		}
	}

	// The site first: the crawl's seeds name its port.
	site, err := startDemoSite()
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: err}
	}
	defer site.close()

	srv, addr, err := serve.ListenServer(ctx, a, log, app.ServeOptions{Version: cmdutil.Version})
	if err != nil {
		return err
	}

	fz, err := a.Authz(ctx)
	if err != nil {
		return fga.Error(err)
	}
	granted, err := authz.Grant(ctx, fz, "submitter", opts.As, opts.Org)
	if err != nil {
		return fga.Error(err)
	}
	// A crawl another organization runs blocks the demo's (one crawl at a
	// time): say so and serve anyway.
	id, startErr := startDemoCrawl(ctx, a, crawl.Caller{Subject: opts.As, Orgs: []string{opts.Org}}, site)

	out := f.Streams.Out
	fmt.Fprintln(out)
	fmt.Fprintf(out, "Demo site   www  %s/  (English and Japanese; robots.txt: Disallow /private/, Crawl-delay 1)\n", site.base["www"])
	fmt.Fprintf(out, "            blog %s/  (Japanese; captured, its links not followed)\n", site.base["blog"])
	fmt.Fprintf(out, "            ads  %s/  (skipped by the crawl's first rule)\n", site.base["ads"])
	fmt.Fprintf(out, "Granted     %s\n", granted.Sentence(f.Lang()))
	if startErr == nil {
		fmt.Fprintf(out, "Crawl       %s started (skip ads, capture blog, follow www; depth 2)\n", id)
	} else {
		fmt.Fprintf(out, "Crawl       not started: %v\n", startErr)
	}
	console := fmt.Sprintf("http://%s/", net.JoinHostPort(a.Settings.APIHost, fmt.Sprint(addr.Port)))
	banner := func() {
		if a.Settings.OIDCClientID != "" && a.Settings.OIDCIssuer != "" {
			fmt.Fprintf(out, "Console     %s  (Sign in, then at the issuer's page type subject %s and organization %s)\n", console, opts.As, opts.Org)
		} else if a.Settings.DevIdentity {
			fmt.Fprintf(out, "Console     %s  (type subject %s and organization %s: the crawl shows as it runs, its archives as each level is captured)\n", console, opts.As, opts.Org)
		} else {
			fmt.Fprintf(out, "Console     %s\n", console)
		}
		if startErr == nil {
			fmt.Fprintf(out, "Watch       %s crawl status %s --as %s --org %s --watch\n", selfCommand(), id, opts.As, opts.Org)
		}
		fmt.Fprintln(out, "Ctrl-C stops serve and the demo site.")
		fmt.Fprintln(out)
	}
	banner()
	if startErr == nil {
		// The crawl's log lines push the banner up: say it again, below
		// them, once the crawl ends.
		rctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		defer func() { stop(); <-done }()
		go func() {
			defer close(done)
			v, ok := awaitDemoCrawl(rctx, a, crawl.Caller{Subject: opts.As, Orgs: []string{opts.Org}}, id, 2*time.Second)
			if !ok {
				return
			}
			fmt.Fprintln(out)
			fmt.Fprintf(out, "Crawl       %s %s: %d page(s) captured of %d discovered\n", id, v.State, v.PagesCaptured, v.PagesDiscovered)
			banner()
		}()
	}
	return srv.Run(ctx)
}

// awaitDemoCrawl polls the crawl every interval until it is no longer
// running (false when ctx ends first).
func awaitDemoCrawl(ctx context.Context, a *app.App, c crawl.Caller, id string, every time.Duration) (crawl.CrawlView, bool) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return crawl.CrawlView{}, false
		case <-t.C:
		}
		svc, err := a.Crawls(ctx)
		if err != nil {
			continue
		}
		v, err := svc.Get(ctx, c, id)
		if err == nil && v.State != crawl.StateRunning {
			return v, true
		}
	}
}

// selfCommand is how to run this binary again from the working directory:
// ./bin/ledgerctl under make run, else ledgerctl.
func selfCommand() string {
	if arg := os.Args[0]; filepath.Base(arg) == "ledgerctl" && strings.Contains(arg, "/") {
		return arg
	}
	return "ledgerctl"
}

// startDemoCrawl closes a crawl an earlier demo left running in the
// caller's organization (its site's port is gone) and starts the demo's.
func startDemoCrawl(ctx context.Context, a *app.App, c crawl.Caller, site *demoSite) (string, error) {
	svc, err := a.Crawls(ctx)
	if err != nil {
		return "", err
	}
	running, err := svc.List(ctx, c, crawl.StateRunning, nil)
	if err != nil {
		return "", crawlcmd.Error(err, false, "")
	}
	reason := "replaced by a new ledgerctl dev demo"
	for _, cr := range running.Crawls {
		if cr.OrgID == c.Orgs[0] {
			if _, err := svc.Fail(ctx, c, cr.CrawlID, crawl.FailRequest{Reason: &reason}); err != nil {
				return "", crawlcmd.Error(err, false, crawlcmd.NoCrawl(c, cr.CrawlID))
			}
		}
	}
	depth, pages, delay, par := 2, 30, 500, 4
	req := crawl.StartRequest{
		Seeds: []string{site.base["www"] + "/"},
		Rules: []rules.Rule{
			{Action: rules.Skip, Pattern: site.base["ads"] + "/"},
			{Action: rules.Capture, Pattern: site.base["blog"] + "/"},
			{Action: rules.Follow, Pattern: site.base["www"] + "/"},
		},
		MaxDepth: &depth, MaxPages: &pages, PerHostDelayMs: &delay, HostParallelism: &par,
	}
	id, err := svc.Start(ctx, c, req)
	if err != nil {
		return "", crawlcmd.Error(err, false, crawlcmd.MayNotStart(c))
	}
	return id, nil
}

// demoSite is the bundled site: one listener on 127.0.0.1, each host a name
// under demo.localhost (names that resolve to loopback without DNS, in
// Chromium and in the capturer), told apart by the Host header.
type demoSite struct {
	base   map[string]string // host name → http://<name>.demo.localhost:port
	server *http.Server
}

// demoDomain is the demo hosts' parent name.
const demoDomain = "demo.localhost"

// startDemoSite listens on a free port of 127.0.0.1 and serves each host's
// folder of demoFiles to requests for its name, the other hosts' addresses
// filled in.
func startDemoSite() (*demoSite, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo site: %w", err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	s := &demoSite{base: map[string]string{}}
	hosts := map[string]http.Handler{}
	for _, h := range demoHosts {
		s.base[h] = "http://" + h + "." + demoDomain + ":" + port
	}
	vars := map[string]string{"WWW": s.base["www"], "Blog": s.base["blog"], "Ads": s.base["ads"]}
	for _, h := range demoHosts {
		sub, err := fs.Sub(demoFiles, "demo/"+h)
		if err != nil {
			_ = ln.Close()
			return nil, err
		}
		hosts[h+"."+demoDomain] = demoHandler(sub, vars)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.Host
		if h, _, err := net.SplitHostPort(r.Host); err == nil {
			name = h
		}
		if hh, ok := hosts[strings.ToLower(strings.TrimSuffix(name, "."))]; ok {
			hh.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	})}
	s.server = srv
	go func() { _ = srv.Serve(ln) }()
	return s, nil
}

func (s *demoSite) close() { _ = s.server.Close() }

// demoHandler serves one host's files: /x is x.html (or x), / is
// index.html; HTML pages are templates given vars.
func demoHandler(files fs.FS, vars map[string]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.Trim(path.Clean("/"+r.URL.Path), "/")
		var body []byte
		var err error
		for _, try := range []string{name + ".html", name, path.Join(name, "index.html")} {
			if try == "" || try == ".html" {
				continue
			}
			if body, err = fs.ReadFile(files, try); err == nil {
				name = try
				break
			}
		}
		if err != nil {
			http.NotFound(w, r)
			return
		}
		ctype := mime.TypeByExtension(path.Ext(name))
		if path.Ext(name) == ".html" {
			t, perr := template.New(name).Parse(string(body))
			var b bytes.Buffer
			if perr == nil {
				perr = t.Execute(&b, vars)
			}
			if perr != nil {
				http.Error(w, perr.Error(), http.StatusInternalServerError)
				return
			}
			body, ctype = b.Bytes(), "text/html; charset=utf-8"
		}
		if ctype == "" || strings.HasPrefix(ctype, "text/plain") {
			ctype = "text/plain; charset=utf-8"
		}
		w.Header().Set("Content-Type", ctype)
		_, _ = w.Write(body)
	})
}
