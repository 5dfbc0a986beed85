package dev

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// DevIssuerOptions are the inputs of `ledgerctl dev issuer` and `dev token`.
type DevIssuerOptions struct {
	f         *cmdutil.Factory
	Subject   string
	Orgs      []string
	ExpiresIn string
	Ready     func(addr string)
}

func newCmdDevIssuer(f *cmdutil.Factory) *cobra.Command {
	opts := &DevIssuerOptions{f: f}
	return &cobra.Command{
		Use:   "issuer",
		Short: "Run a local OIDC token issuer on 127.0.0.1 (development only)",
		Long: `Serves /.well-known/openid-configuration, /.well-known/jwks.json, /authorize and
POST /token on 127.0.0.1:CAPTURE_LEDGER_DEV_ISSUER_PORT with an RS256 key
generated in memory at every start. It mints a token for anyone who asks (a
JSON POST /token), and answers the console's sign-in (the authorization-code
flow with PKCE: /authorize shows a page where any subject and organizations
may be typed, for loopback redirect URIs only): never run it outside local
development. Point serve at it with CAPTURE_LEDGER_OIDC_ISSUER (and
CAPTURE_LEDGER_OIDC_CLIENT_ID for the console's sign-in).`,
		Example: "  ledgerctl dev issuer\n  CAPTURE_LEDGER_DEV_ISSUER_PORT=9199 ledgerctl dev issuer",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return devIssuerRun(cmd.Context(), opts) },
	}
}

func issuerURL(issuer string, port int) string {
	if issuer != "" {
		return issuer
	}
	return identity.DefaultIssuerURL(port)
}

func devIssuerRun(ctx context.Context, opts *DevIssuerOptions) error {
	s, err := opts.f.Settings()
	if err != nil {
		return err
	}
	iss, err := identity.NewIssuer(issuerURL(s.OIDCIssuer, s.DevIssuerPort), s.OIDCAudience)
	if err != nil {
		return err
	}
	ln, err := identity.ListenLoopback("127.0.0.1", s.DevIssuerPort)
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: err}
	}
	fmt.Fprintln(opts.f.Streams.Err, identity.IssuerWarning)
	fmt.Fprintf(opts.f.Streams.Err, "issuer %s (audience %s) listening on %s\n", iss.Issuer(), iss.Audience(), ln.Addr())
	srv := &http.Server{Handler: iss.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if opts.Ready != nil {
		opts.Ready(ln.Addr().String())
	}
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = srv.Shutdown(sctx)
		cancel()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func newCmdDevToken(f *cmdutil.Factory) *cobra.Command {
	opts := &DevIssuerOptions{f: f}
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Ask the running dev issuer for a token and print it",
		Example: "  ledgerctl dev token --subject alice --org acme\n" +
			"  curl -H \"Authorization: Bearer $(ledgerctl dev token --subject alice --org acme)\" http://127.0.0.1:7070/api/archives",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(opts.Subject) == "" {
				return cmdutil.Usagef("--subject is required")
			}
			// What the issuer would refuse is said here, naming the flag,
			// whether or not it runs.
			if err := identity.CheckSubject(opts.Subject); err != nil {
				return cmdutil.Usagef("--subject: %v", err)
			}
			for _, o := range opts.Orgs {
				if err := identity.CheckOrganization(o); err != nil {
					return cmdutil.Usagef("--org: %v", err)
				}
			}
			if ttl, err := identity.ParseTimeSpan(opts.ExpiresIn); err != nil || ttl > identity.MaxTokenLifetime {
				most := strings.TrimSuffix(strings.TrimSuffix(identity.MaxTokenLifetime.String(), "0s"), "0m")
				return cmdutil.Usagef("--expires-in must be a time span such as 30m or 1h, at most %s, got %q", most, opts.ExpiresIn)
			}
			return devTokenRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Subject, "subject", "", "the token's sub (required)")
	cmd.Flags().StringSliceVar(&opts.Orgs, "org", nil, "an organization for the organizations claim (repeatable)")
	cmd.Flags().StringVar(&opts.ExpiresIn, "expires-in", "1h", "lifetime, e.g. 30m, 1h, 24h (at most 24 hours)")
	return cmd
}

func devTokenRun(ctx context.Context, opts *DevIssuerOptions) error {
	s, err := opts.f.Settings()
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.f.Streams.Err, identity.IssuerWarning)
	base := strings.TrimRight(issuerURL(s.OIDCIssuer, s.DevIssuerPort), "/")
	orgs := opts.Orgs
	if orgs == nil {
		orgs = []string{}
	}
	body, _ := json.Marshal(map[string]any{"subject": opts.Subject, "organizations": orgs, "expiresIn": opts.ExpiresIn})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/token", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitUnreachable, Err: fmt.Errorf("the dev issuer at %s is not reachable — start it with `ledgerctl dev issuer`", base)}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: fmt.Errorf("the dev issuer refused: %d %s", resp.StatusCode, strings.TrimSpace(string(data)))}
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(data, &tok); err != nil || tok.AccessToken == "" {
		return fmt.Errorf("the dev issuer answered without a token")
	}
	fmt.Fprintln(opts.f.Streams.Out, tok.AccessToken)
	return nil
}
