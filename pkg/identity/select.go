package identity

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"
)

// Mode is how the API identifies callers; chosen once at startup.
type Mode string

// The three modes.
const (
	ModeJWT    Mode = "jwt"    // Bearer JWT verified against the issuer's JWKS
	ModeHeader Mode = "header" // dev headers, trusted as sent
	ModeDeny   Mode = "none"   // nobody: every request is 401
)

// Label is how the mode is named in the startup line: "JWT (<issuer>)",
// "dev header" or "none".
func (m Mode) Label(issuer string) string {
	switch m {
	case ModeJWT:
		return "JWT (" + issuer + ")"
	case ModeHeader:
		return "dev header"
	}
	return "none"
}

// Options are the identity settings read from the environment.
type Options struct {
	// OIDCIssuer is CAPTURE_LEDGER_OIDC_ISSUER. Non-empty selects JWT mode.
	OIDCIssuer string
	// OIDCAudience is CAPTURE_LEDGER_OIDC_AUDIENCE. Empty means
	// DefaultAudience.
	OIDCAudience string
	// DevIdentity is CAPTURE_LEDGER_DEV_IDENTITY. Exactly "1" selects header
	// mode when no issuer is set ("true" does not count).
	DevIdentity string
	// Logger, HTTPClient and Now are passed to the JWT resolver.
	Logger     *slog.Logger
	HTTPClient *http.Client
	Now        func() time.Time
}

// Select picks the resolver: an issuer selects JWT, and the dev headers are
// then ignored even when DevIdentity is "1" (a deployment never falls back
// to the weaker mode); otherwise DevIdentity "1" selects the headers;
// otherwise every request is refused.
func Select(cfg Options) (Resolver, Mode) {
	switch {
	case cfg.OIDCIssuer != "":
		return NewJWT(JWTConfig{
			Issuer:     cfg.OIDCIssuer,
			Audience:   cfg.OIDCAudience,
			Logger:     cfg.Logger,
			HTTPClient: cfg.HTTPClient,
			Now:        cfg.Now,
		}), ModeJWT
	case cfg.DevIdentity == "1":
		return Headers{}, ModeHeader
	}
	return Deny{}, ModeDeny
}

// IsLoopback reports whether host is one of the loopback names the API and
// the dev issuer treat as local: 127.0.0.1, localhost or ::1.
func IsLoopback(host string) bool {
	switch host {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}

// DevNetworkFlag is the `ledgerctl serve` flag that lets the dev header
// mode listen on a non-loopback address.
const DevNetworkFlag = "insecure-dev-identity-on-network"

// CheckDevListen refuses to serve the dev header mode on a host that is not
// loopback ([IsLoopback]): whoever reaches the port could act as any user.
// allowNetwork (the --insecure-dev-identity-on-network flag) lifts the
// refusal; other modes are never refused.
func CheckDevListen(mode Mode, host string, allowNetwork bool) error {
	if mode != ModeHeader || IsLoopback(host) || allowNetwork {
		return nil
	}
	return fmt.Errorf("CAPTURE_LEDGER_DEV_IDENTITY=1 trusts the X-Capture-ledger-Subject header, so serve listens on loopback only (127.0.0.1, localhost or ::1), not %q: anyone who can reach that address could act as any user. "+
		"Set CAPTURE_LEDGER_API_HOST=127.0.0.1, or set CAPTURE_LEDGER_OIDC_ISSUER (JWT), or pass --%s if you really mean it", host, DevNetworkFlag)
}

// Note is one startup line.
type Note struct {
	Level   slog.Level
	Message string
	// Attrs are structured fields; only the final "listening" note has them.
	Attrs []slog.Attr
}

// Startup describes the server being started, for [StartupNotes].
type Startup struct {
	Mode   Mode
	Issuer string // the OIDC issuer, for the JWT label
	// DevIdentity is true when CAPTURE_LEDGER_DEV_IDENTITY is "1".
	DevIdentity bool
	Host        string
	Port        int
	// Crawls is true when the crawl routes are served (a runner, embedded
	// or the Windmill flow, is configured and can capture).
	Crawls bool
	// LevelReports is true when crawl level reports arrive over HTTP from
	// containers (the Windmill webhook is configured).
	LevelReports bool
}

// Crawl level report states of the startup line.
const (
	CrawlReportsOff     = "off"
	CrawlReportsBlocked = "blocked"
	CrawlReportsReady   = "ready"
)

// StartupNotes returns the startup lines about identity, in order; the last
// one is always the info line "Archive API listening on …".
func StartupNotes(s Startup) []Note {
	var notes []Note
	warn := func(msg string) { notes = append(notes, Note{Level: slog.LevelWarn, Message: msg}) }
	hostPort := s.Host + ":" + strconv.Itoa(s.Port)
	label := s.Mode.Label(s.Issuer)

	switch s.Mode {
	case ModeHeader:
		warn("CAPTURE_LEDGER_DEV_IDENTITY=1 — callers are trusted on the X-Capture-ledger-Subject header. Never enable this outside local development.")
	case ModeDeny:
		warn("No identity is configured — every request is refused (401). Set CAPTURE_LEDGER_OIDC_ISSUER (JWT) or CAPTURE_LEDGER_DEV_IDENTITY=1 (dev header)")
	case ModeJWT:
		if s.DevIdentity {
			notes = append(notes, Note{Level: slog.LevelInfo, Message: "CAPTURE_LEDGER_DEV_IDENTITY=1 is ignored — CAPTURE_LEDGER_OIDC_ISSUER takes precedence"})
		}
	}
	loopback := IsLoopback(s.Host)
	if s.Mode == ModeHeader && !loopback {
		// Only reachable with --insecure-dev-identity-on-network
		// (CheckDevListen refuses otherwise).
		warn("The dev header is trusted on " + hostPort + " (--" + DevNetworkFlag + ") — anyone who can reach this port can act as any user. Set CAPTURE_LEDGER_API_HOST=127.0.0.1, or keep CAPTURE_LEDGER_OIDC_ISSUER (the console takes a token)")
	}
	blocked := false
	if s.LevelReports && loopback {
		msg := "Containers cannot reach this API: it listens on " + s.Host + ", and crawl level reports come from containers. Set CAPTURE_LEDGER_API_HOST=0.0.0.0"
		if s.Mode == ModeHeader {
			msg += " (with the dev header, serve then also needs --" + DevNetworkFlag + ")"
		}
		warn(msg)
		blocked = true
	}
	switch {
	case s.LevelReports && s.Mode == ModeHeader:
		// Level reports go through the same resolver as every request: the
		// dev header, not the flow's token.
		warn("Crawl level reports are identified by the X-Capture-ledger-Subject header, not by the flow's Bearer JWT: a report is accepted when the header names the crawl's requester, or a submitter of its organization listed in X-Capture-ledger-Organizations; a report with only a Bearer JWT is refused (401). Set CAPTURE_LEDGER_OIDC_ISSUER")
		blocked = true
	case s.LevelReports && s.Mode == ModeDeny:
		warn("Crawl level reports will be refused (401): the flow reports with a Bearer JWT, but identity is " + label + ". Set CAPTURE_LEDGER_OIDC_ISSUER")
		blocked = true
	}
	reports := CrawlReportsReady
	switch {
	case !s.LevelReports:
		reports = CrawlReportsOff
	case blocked:
		reports = CrawlReportsBlocked
	}
	attrs := []slog.Attr{
		slog.String("host", s.Host),
		slog.Int("port", s.Port),
		slog.String("identity", string(s.Mode)),
	}
	if s.Mode == ModeJWT {
		attrs = append(attrs, slog.String("issuer", s.Issuer))
	}
	attrs = append(attrs,
		slog.Bool("crawls", s.Crawls),
		slog.String("crawlLevelReports", reports),
	)
	notes = append(notes, Note{
		Level:   slog.LevelInfo,
		Message: "Archive API listening on " + hostPort + " — identity: " + label + "; crawl level reports: " + reports,
		Attrs:   attrs,
	})
	return notes
}
