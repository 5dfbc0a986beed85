package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Config is the resolved configuration: flags > shell > .env.local > .env >
// defaults, where an empty value at any layer counts as unset.
type Config struct {
	v     *viper.Viper
	files []EnvFile
	dir   string
	// removed are the Removed settings found set.
	removed map[string]bool
}

// Load reads dir/.env then dir/.env.local, the process environment, and the
// flags in fs that are bound to variables (see BindFlags).
func Load(dir string, fs *pflag.FlagSet) (*Config, error) { return LoadEnv(dir, fs, os.LookupEnv) }

// LoadEnv is Load with the shell's environment read through lookup, so
// that callers (tests) can give each run its own environment.
func LoadEnv(dir string, fs *pflag.FlagSet, lookup func(string) (string, bool)) (*Config, error) {
	c := &Config{v: viper.New(), dir: dir}
	c.v.AllowEmptyEnv(false)
	merged := map[string]any{}
	for _, name := range []string{".env", ".env.local"} {
		f, ok, err := readEnvFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		c.files = append(c.files, f)
		for _, n := range f.Names {
			if val := f.Values[n]; val != "" {
				merged[n] = val
			} else {
				delete(merged, n) // a later empty line unsets, like a shell would
			}
		}
	}
	// Settings no longer read are refused where they are set, so nobody
	// believes they still work.
	for name := range Removed {
		if v, ok := lookup(name); (ok && v != "") || merged[name] != nil {
			if c.removed == nil {
				c.removed = map[string]bool{}
			}
			c.removed[name] = true
		}
	}
	// The shell beats the files; an empty value counts as unset.
	for _, va := range Variables {
		if v, ok := lookup(va.Name); ok && v != "" {
			merged[va.Name] = v
		}
	}
	if err := c.v.MergeConfigMap(merged); err != nil {
		return nil, err
	}
	for _, va := range Variables {
		if va.Default != "" {
			c.v.SetDefault(va.Name, va.Default)
		}
		if va.Flag != "" && fs != nil {
			if fl := fs.Lookup(va.Flag); fl != nil {
				if err := c.v.BindPFlag(va.Name, fl); err != nil {
					return nil, err
				}
			}
		}
	}
	return c, nil
}

// BindFlags adds to fs a flag for every variable that has one, with the
// variable named in the help so operators know both spellings.
func BindFlags(fs *pflag.FlagSet, names ...string) {
	for _, n := range names {
		va, ok := Lookup(n)
		if !ok || va.Flag == "" || fs.Lookup(va.Flag) != nil {
			continue
		}
		// pflag reads a `quoted` word in a usage as the flag's value name
		// ("--host ledgerctl serve"); the help keeps its meaning without them.
		fs.String(va.Flag, "", fmt.Sprintf("%s (env %s)", strings.ReplaceAll(va.Help, "`", ""), va.Name))
	}
}

// Removed are settings this version no longer reads, each with what to do
// instead: set, they stop every command (Settings).
var Removed = map[string]string{
	"CAPTURE_LEDGER_REPLAY_ORIGIN": "is no longer read: archives replay on an origin of their own per session, under CAPTURE_LEDGER_REPLAY_DOMAIN (docs/replay.md); remove it",
}

// Get returns the resolved value of name, "" when unset.
func (c *Config) Get(name string) string {
	s := strings.TrimSpace(c.v.GetString(name))
	return s
}

// Dir is the folder the env files were looked for in.
func (c *Config) Dir() string { return c.dir }

// Note says which env files were read and which names .env.local overrides,
// never a value.
func (c *Config) Note() string {
	if len(c.files) == 0 {
		return "config: no env file was read — every value comes from the shell"
	}
	var parts []string
	for _, f := range c.files {
		word := "names"
		if len(f.Names) == 1 {
			word = "name"
		}
		parts = append(parts, fmt.Sprintf("%s (%d %s)", f.Path, len(f.Names), word))
	}
	note := "config: " + strings.Join(parts, ", ")
	if len(c.files) == 2 {
		var wins []string
		for _, n := range c.files[1].Names {
			if _, ok := c.files[0].Values[n]; ok {
				wins = append(wins, n)
			}
		}
		if len(wins) > 0 {
			note += " — .env.local wins for " + strings.Join(wins, ", ") + " (a value set in the shell beats the files)"
		}
	}
	return note
}

// MissingError names every required variable that has no value, grouped by
// where the value is expected to come from.
type MissingError struct{ Names []string }

func (e *MissingError) Error() string {
	var tmpl, deploy []string
	for _, n := range e.Names {
		if va, _ := Lookup(n); va.Source == FromDeploy {
			deploy = append(deploy, n)
		} else {
			tmpl = append(tmpl, n)
		}
	}
	var b strings.Builder
	b.WriteString("missing required configuration:")
	if len(tmpl) > 0 {
		fmt.Fprintf(&b, "\n  %s — copy the template (cp -n .env.example .env) and fill them in, or set them in the shell", strings.Join(tmpl, ", "))
	}
	if len(deploy) > 0 {
		fmt.Fprintf(&b, "\n  %s — run `ledgerctl fga deploy` (it writes them to .env.local)", strings.Join(deploy, ", "))
	}
	return b.String()
}

// Require fails with one MissingError naming all of names that are unset.
func (c *Config) Require(names ...string) error {
	var missing []string
	for _, n := range names {
		if c.Get(n) == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return &MissingError{Names: missing}
	}
	return nil
}

// ErrBuiltinUnsigned is why CAPTURE_LEDGER_CAPTURE_SIGNING=1 stops what
// would capture with the built-in capturer: it writes no signature, and a
// signature asked for is never silently left out (BrowserHive fails a
// capture it cannot sign).
var ErrBuiltinUnsigned = errors.New("CAPTURE_LEDGER_CAPTURE_SIGNING=1 asks for signed WACZ files and the built-in capturer does not sign")

// InvalidError names a variable whose value cannot be used.
type InvalidError struct {
	Name, Value, Reason string
}

func (e *InvalidError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s", e.Name, e.Reason)
	}
	return fmt.Sprintf("%s=%q: %s", e.Name, e.Value, e.Reason)
}

// RedirectURL is where the issuer sends the console's browser back after
// sign-in: CAPTURE_LEDGER_OIDC_REDIRECT_URL, else the API URL (or
// http://host:port) followed by /auth/callback.
func (s Settings) RedirectURL() string {
	if s.OIDCRedirectURL != "" {
		return s.OIDCRedirectURL
	}
	if s.APIURL != "" {
		return s.APIURL + "/auth/callback"
	}
	host := s.APIHost
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(s.APIPort)) + "/auth/callback"
}

// Formats are the capture formats BrowserHive knows, in the order it lists them.
var Formats = []string{"png", "webp", "html", "links", "mhtml", "wacz"}

// Settings is the typed, validated configuration.
type Settings struct {
	DatabaseURL string

	// Full-text search: the on-disk index's directory, or an OpenSearch
	// cluster (set, it is used instead) and its index.
	SearchDir, OpenSearchURL, OpenSearchIndex string
	// SearchLeaseTTL is how long the Bleve index's holder's lease lasts
	// unrenewed; SearchPeerListen where the holder answers forwarded
	// searches.
	SearchLeaseTTL   time.Duration
	SearchPeerListen string

	S3Endpoint, S3Bucket, S3AccessKeyID, S3SecretAccessKey, S3Region string
	S3ForcePathStyle                                                 bool

	FGAStoreID, FGAModelID, FGAStoreName, FGAAPIURL, FGAAPIToken, FGADatastoreURI string

	DevIdentity                    bool
	OIDCIssuer, OIDCAudience       string
	DevIssuerPort                  int
	APIHost                        string
	APIPort                        int
	DrainInterval                  time.Duration
	OutboxMaxAttempts              int
	ListTimeBudget                 time.Duration
	ListCheckBudget                int
	ListConcurrency, ListPerCaller int
	ListPerOrg                     int
	// ExportConcurrency, ExportPerCaller and ExportPerOrg bound the crawl
	// downloads `serve` writes at once: in all, per caller, per
	// organization.
	ExportConcurrency        int
	ExportPerCaller          int
	ExportPerOrg             int
	ListChecks               int
	CaptureFormats           map[string]bool
	CaptureSigning           bool
	WebhookURL, WebhookToken string
	WebhookTimeout           time.Duration
	CrawlStallTimeout        time.Duration
	// CrawlRescan is how often the embedded runner looks for running
	// crawls no process runs (a stopped or killed serve's) and resumes
	// them.
	CrawlRescan time.Duration
	// The embedded crawl runner: the caps on Crawl-delay and on a 429/503
	// back-off, and the BrowserHive endpoints it captures through (none:
	// the built-in capturer) with the deadline of one call.
	CrawlDelayMax, CrawlBackoffMax time.Duration
	// CrawlsPerOrg bounds one organization's running crawls; HostAtOnce
	// the captures of one host at once, HostDelay the least gap between
	// them, HostLeaseTTL how long a dead process's lease holds a host.
	CrawlsPerOrg, HostAtOnce int
	HostDelay, HostLeaseTTL  time.Duration
	BrowserHiveEndpoints     []string
	BrowserHiveDeadline      time.Duration
	// ReplayDomain is CAPTURE_LEDGER_REPLAY_DOMAIN as given; the commands
	// that build replay links check it (replay.ParseDomain) before they
	// touch anything.
	ReplayDomain string
	LogLevel     string
	// LogFormat is CAPTURE_LEDGER_LOG_FORMAT: "text", "json", or "" (text
	// on a terminal, else json).
	LogFormat string
	// APIURL is CAPTURE_LEDGER_API_URL without a trailing slash.
	APIURL                     string
	ReplayKey, ReplayViewerDir string
	// ReplayReads, ReplayReadsPerCaller and ReplayReadsPerOrg bound the
	// object reads in flight (replay.ReadBounds); 0 takes the defaults.
	ReplayReads, ReplayReadsPerCaller, ReplayReadsPerOrg int
	// ReplayCollectionLimit is how many of a crawl's captures its replay
	// collection lists.
	ReplayCollectionLimit int
	// CaptureEngine is the built-in capturer's engine (browser, http or auto).
	CaptureEngine string
	// ListSource is where the archive list takes its rows: candidates (the
	// archives the ledger recorded a grantee of for the caller) or scan.
	ListSource string
	// Lookup returns the resolved value of any variable (flags > shell >
	// .env.local > .env > defaults), for the packages that parse their own
	// (the capturer's limits: capture.FromEnv).
	Lookup func(name string) string

	// The capture quota (archive.CaptureBounds): captures at once and URLs
	// per minute, per caller and per organization.
	CapturePerCaller, CapturePerOrg         int
	CaptureURLsPerCaller, CaptureURLsPerOrg int

	// The console's OIDC client (sign-in): its id, secret and redirect
	// URL (empty: the default, RedirectURL).
	OIDCClientID, OIDCClientSecret, OIDCRedirectURL string
}

// Settings parses and validates every value that is set, returning all the
// problems at once.
func (c *Config) Settings() (Settings, error) {
	var errs []error
	bad := func(name, reason string) {
		errs = append(errs, &InvalidError{Name: name, Value: c.Get(name), Reason: reason})
	}
	intIn := func(name string, lo, hi int) int {
		raw := c.Get(name)
		if raw == "" {
			return 0
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < lo || n > hi {
			bad(name, fmt.Sprintf("must be an integer between %d and %d", lo, hi))
			return 0
		}
		return n
	}
	ms := func(name string, lo, hi int) time.Duration {
		return time.Duration(intIn(name, lo, hi)) * time.Millisecond
	}
	httpURL := func(name string) string {
		raw := c.Get(name)
		if raw == "" {
			return ""
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(name, "must be an http(s) URL")
		}
		return strings.TrimRight(raw, "/")
	}

	s := Settings{
		DatabaseURL:          c.Get("DATABASE_URL"),
		S3Endpoint:           httpURL("CAPTURE_LEDGER_S3_ENDPOINT"),
		S3Bucket:             c.Get("CAPTURE_LEDGER_S3_BUCKET"),
		S3AccessKeyID:        c.Get("CAPTURE_LEDGER_S3_ACCESS_KEY_ID"),
		S3SecretAccessKey:    c.Get("CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY"),
		S3Region:             c.Get("CAPTURE_LEDGER_S3_REGION"),
		S3ForcePathStyle:     c.Get("CAPTURE_LEDGER_S3_FORCE_PATH_STYLE") == "true",
		FGAStoreID:           c.Get("CAPTURE_LEDGER_FGA_STORE_ID"),
		FGAModelID:           c.Get("CAPTURE_LEDGER_FGA_MODEL_ID"),
		FGAStoreName:         c.Get("CAPTURE_LEDGER_FGA_STORE_NAME"),
		FGAAPIURL:            httpURL("CAPTURE_LEDGER_FGA_API_URL"),
		FGAAPIToken:          c.Get("CAPTURE_LEDGER_FGA_API_TOKEN"),
		FGADatastoreURI:      c.Get("CAPTURE_LEDGER_FGA_DATASTORE_URI"),
		DevIdentity:          c.Get("CAPTURE_LEDGER_DEV_IDENTITY") == "1",
		OIDCIssuer:           httpURL("CAPTURE_LEDGER_OIDC_ISSUER"),
		OIDCAudience:         c.Get("CAPTURE_LEDGER_OIDC_AUDIENCE"),
		OIDCClientID:         c.Get("CAPTURE_LEDGER_OIDC_CLIENT_ID"),
		OIDCClientSecret:     c.Get("CAPTURE_LEDGER_OIDC_CLIENT_SECRET"),
		OIDCRedirectURL:      httpURL("CAPTURE_LEDGER_OIDC_REDIRECT_URL"),
		DevIssuerPort:        intIn("CAPTURE_LEDGER_DEV_ISSUER_PORT", 1, 65535),
		APIHost:              c.Get("CAPTURE_LEDGER_API_HOST"),
		APIPort:              intIn("CAPTURE_LEDGER_API_PORT", 1, 65535),
		DrainInterval:        ms("CAPTURE_LEDGER_DRAIN_INTERVAL_MS", 100, 3_600_000),
		OutboxMaxAttempts:    intIn("CAPTURE_LEDGER_OUTBOX_MAX_ATTEMPTS", 1, 1000),
		ListTimeBudget:       ms("CAPTURE_LEDGER_LIST_TIME_BUDGET_MS", 100, 50_000),
		ListCheckBudget:      intIn("CAPTURE_LEDGER_LIST_CHECK_BUDGET", 100, 1_000_000),
		ListConcurrency:      intIn("CAPTURE_LEDGER_LIST_CONCURRENCY", 1, 10_000),
		ListPerCaller:        intIn("CAPTURE_LEDGER_LIST_CONCURRENCY_PER_CALLER", 1, 10_000),
		ListPerOrg:           intIn("CAPTURE_LEDGER_LIST_CONCURRENCY_PER_ORG", 1, 10_000),
		ListChecks:           intIn("CAPTURE_LEDGER_LIST_CHECK_CONCURRENCY", 1, 100),
		ExportConcurrency:    intIn("CAPTURE_LEDGER_EXPORT_CONCURRENCY", 1, 1000),
		ExportPerCaller:      intIn("CAPTURE_LEDGER_EXPORT_CONCURRENCY_PER_CALLER", 1, 1000),
		ExportPerOrg:         intIn("CAPTURE_LEDGER_EXPORT_CONCURRENCY_PER_ORG", 1, 1000),
		CaptureSigning:       c.Get("CAPTURE_LEDGER_CAPTURE_SIGNING") == "1",
		WebhookURL:           httpURL("CAPTURE_LEDGER_CRAWL_WEBHOOK_URL"),
		WebhookToken:         c.Get("CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN"),
		WebhookTimeout:       ms("CAPTURE_LEDGER_CRAWL_WEBHOOK_TIMEOUT_MS", 100, 600_000),
		CrawlStallTimeout:    ms("CAPTURE_LEDGER_CRAWL_STALL_TIMEOUT_MS", 1000, 7*24*3_600_000),
		CrawlDelayMax:        ms("CAPTURE_LEDGER_CRAWL_DELAY_MAX_MS", 1000, 24*3_600_000),
		CrawlBackoffMax:      ms("CAPTURE_LEDGER_CRAWL_BACKOFF_MAX_MS", 1000, 24*3_600_000),
		BrowserHiveDeadline:  ms("CAPTURE_LEDGER_BROWSERHIVE_DEADLINE_MS", 1000, 3_600_000),
		ReplayDomain:         c.Get("CAPTURE_LEDGER_REPLAY_DOMAIN"),
		LogLevel:             strings.ToLower(c.Get("LOG_LEVEL")),
		LogFormat:            strings.ToLower(c.Get("CAPTURE_LEDGER_LOG_FORMAT")),
		APIURL:               httpURL("CAPTURE_LEDGER_API_URL"),
		ReplayKey:            c.Get("CAPTURE_LEDGER_REPLAY_KEY"),
		ReplayViewerDir:      c.Get("CAPTURE_LEDGER_REPLAY_VIEWER_DIR"),
		ReplayReads:          intIn("CAPTURE_LEDGER_REPLAY_READS", 1, 100_000),
		ReplayReadsPerCaller: intIn("CAPTURE_LEDGER_REPLAY_READS_PER_CALLER", 1, 100_000),
		ReplayReadsPerOrg:    intIn("CAPTURE_LEDGER_REPLAY_READS_PER_ORG", 1, 100_000),
		CaptureEngine:        c.Get("CAPTURE_LEDGER_CAPTURE_ENGINE"),
		ListSource:           c.Get("CAPTURE_LEDGER_LIST_SOURCE"),
		Lookup:               c.Get,
	}
	s.ReplayCollectionLimit = intIn("CAPTURE_LEDGER_REPLAY_COLLECTION_LIMIT", 1, 10_000)
	s.CapturePerCaller = intIn("CAPTURE_LEDGER_CAPTURE_CONCURRENCY_PER_CALLER", 1, 10_000)
	s.CapturePerOrg = intIn("CAPTURE_LEDGER_CAPTURE_CONCURRENCY_PER_ORG", 1, 10_000)
	s.CrawlsPerOrg = intIn("CAPTURE_LEDGER_CRAWLS_PER_ORG", 1, 1000)
	s.HostAtOnce = intIn("CAPTURE_LEDGER_HOST_CAPTURES_AT_ONCE", 1, 100)
	s.HostDelay = ms("CAPTURE_LEDGER_HOST_DELAY_MS", 0, 3_600_000)
	s.HostLeaseTTL = ms("CAPTURE_LEDGER_HOST_LEASE_TTL_MS", 1000, 3_600_000)
	s.CrawlRescan = ms("CAPTURE_LEDGER_CRAWL_RESCAN_MS", 100, 3_600_000)
	s.CaptureURLsPerCaller = intIn("CAPTURE_LEDGER_CAPTURE_URLS_PER_MINUTE_PER_CALLER", 1, 1_000_000)
	s.CaptureURLsPerOrg = intIn("CAPTURE_LEDGER_CAPTURE_URLS_PER_MINUTE_PER_ORG", 1, 1_000_000)
	if s.OIDCClientID != "" && s.OIDCIssuer == "" {
		bad("CAPTURE_LEDGER_OIDC_CLIENT_ID", "needs CAPTURE_LEDGER_OIDC_ISSUER: sign-in asks that issuer")
	}
	if id := s.OIDCClientID; id != "" && (len(id) > 256 || strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r == 0x7f })) {
		bad("CAPTURE_LEDGER_OIDC_CLIENT_ID", "must be at most 256 characters without spaces or control characters")
	}
	if e := c.Get("CAPTURE_LEDGER_LIST_SOURCE"); e != "candidates" && e != "scan" {
		bad("CAPTURE_LEDGER_LIST_SOURCE", "must be candidates or scan")
	}
	if e := c.Get("CAPTURE_LEDGER_CAPTURE_ENGINE"); e != "browser" && e != "http" && e != "auto" {
		bad("CAPTURE_LEDGER_CAPTURE_ENGINE", "must be browser, http or auto")
	}
	for name, why := range Removed {
		if c.removed[name] {
			bad(name, why)
		}
	}
	for _, name := range []string{"CAPTURE_LEDGER_API_URL"} {
		// An origin, or a base the API's paths are appended to: no path,
		// query or fragment for them to collide with.
		if u, err := url.Parse(c.Get(name)); err == nil && (strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil) {
			bad(name, "must be scheme://host[:port] with nothing after it")
		}
	}
	if n := len(s.ReplayKey); n > 0 && n < 32 {
		// The value is a secret: named, never printed.
		errs = append(errs, &InvalidError{Name: "CAPTURE_LEDGER_REPLAY_KEY", Reason: fmt.Sprintf("is %d bytes; it must be at least 32 (openssl rand -base64 48)", n)})
	}
	s.SearchDir, s.OpenSearchIndex = c.Get("CAPTURE_LEDGER_SEARCH_DIR"), c.Get("CAPTURE_LEDGER_OPENSEARCH_INDEX")
	s.SearchLeaseTTL = ms("CAPTURE_LEDGER_SEARCH_LEASE_TTL_MS", 1000, 600_000)
	s.SearchPeerListen = c.Get("CAPTURE_LEDGER_SEARCH_PEER_LISTEN")
	if h, p, err := net.SplitHostPort(s.SearchPeerListen); err != nil || h == "" || p == "" {
		bad("CAPTURE_LEDGER_SEARCH_PEER_LISTEN", "must be host:port (127.0.0.1:0 by default)")
	} else if ip := net.ParseIP(h); ip != nil && ip.IsUnspecified() {
		bad("CAPTURE_LEDGER_SEARCH_PEER_LISTEN", "must name an address the other serves can reach, not "+h)
	}
	if raw := c.Get("CAPTURE_LEDGER_OPENSEARCH_URL"); raw != "" {
		// The URL may carry credentials: named, never printed.
		if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, &InvalidError{Name: "CAPTURE_LEDGER_OPENSEARCH_URL", Reason: "must be an http(s) URL"})
		}
		s.OpenSearchURL = strings.TrimRight(raw, "/")
	}
	for _, ep := range splitList(c.Get("CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS")) {
		u, err := url.Parse(ep)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			bad("CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS", fmt.Sprintf("must be a comma list of http(s)://host[:port] URLs; %q is not one", ep))
			continue
		}
		s.BrowserHiveEndpoints = append(s.BrowserHiveEndpoints, strings.TrimRight(ep, "/"))
	}
	if raw := c.Get("CAPTURE_LEDGER_DEV_IDENTITY"); raw != "" && raw != "1" {
		bad("CAPTURE_LEDGER_DEV_IDENTITY", `must be exactly "1" to enable the dev headers, or unset`)
	}
	if raw := c.Get("CAPTURE_LEDGER_CAPTURE_SIGNING"); raw != "" && raw != "1" {
		bad("CAPTURE_LEDGER_CAPTURE_SIGNING", `must be exactly "1" to require signing, or unset`)
	}
	if raw := c.Get("CAPTURE_LEDGER_S3_FORCE_PATH_STYLE"); raw != "true" && raw != "false" {
		bad("CAPTURE_LEDGER_S3_FORCE_PATH_STYLE", `must be "true" or "false"`)
	}
	if s.APIHost != "" && s.APIHost != "localhost" && net.ParseIP(s.APIHost) == nil {
		bad("CAPTURE_LEDGER_API_HOST", "must be an IP address or localhost")
	}
	switch s.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("LOG_LEVEL", "must be debug, info, warn or error")
	}
	switch s.LogFormat {
	case "", "text", "json":
	default:
		bad("CAPTURE_LEDGER_LOG_FORMAT", "must be text or json (or unset: text on a terminal, else json)")
	}
	formats, err := ParseFormats(c.Get("CAPTURE_LEDGER_CAPTURE_FORMATS"))
	if err != nil {
		errs = append(errs, err)
	}
	s.CaptureFormats = formats
	if s.CaptureSigning && formats != nil && !formats["wacz"] {
		errs = append(errs, &InvalidError{Name: "CAPTURE_LEDGER_CAPTURE_SIGNING", Reason: "CAPTURE_LEDGER_CAPTURE_SIGNING requires wacz in CAPTURE_LEDGER_CAPTURE_FORMATS"})
	}
	if s.CaptureSigning && len(s.BrowserHiveEndpoints) == 0 && s.WebhookURL == "" {
		errs = append(errs, &InvalidError{Name: "CAPTURE_LEDGER_CAPTURE_SIGNING", Reason: ErrBuiltinUnsigned.Error() +
			": signed crawls need BrowserHive (CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS) or the Windmill flow (CAPTURE_LEDGER_CRAWL_WEBHOOK_URL); unset it to capture unsigned"})
	}
	if (s.WebhookURL == "") != (s.WebhookToken == "") {
		errs = append(errs, &InvalidError{Name: "CAPTURE_LEDGER_CRAWL_WEBHOOK_URL", Reason: "CAPTURE_LEDGER_CRAWL_WEBHOOK_URL and CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN must be set together (one without the other cannot dispatch a crawl)"})
	}
	if s.FGADatastoreURI == "" && s.DatabaseURL != "" {
		s.FGADatastoreURI = SiblingDatabase(s.DatabaseURL, "_fga")
	}
	return s, errors.Join(errs...)
}

// ParseFormats reads the CAPTURE_LEDGER_CAPTURE_FORMATS list: trimmed,
// lowercased, empties dropped; unknown names and an empty list are errors.
func ParseFormats(raw string) (map[string]bool, error) {
	const name = "CAPTURE_LEDGER_CAPTURE_FORMATS"
	got := map[string]bool{}
	var unknown []string
	for _, f := range splitList(strings.ToLower(raw)) {
		known := false
		for _, k := range Formats {
			known = known || k == f
		}
		if !known {
			unknown = append(unknown, f)
			continue
		}
		got[f] = true
	}
	if len(unknown) > 0 {
		return nil, &InvalidError{Name: name, Reason: fmt.Sprintf("%s has unknown formats: %s (known: %s)", name, strings.Join(unknown, ", "), strings.Join(Formats, ", "))}
	}
	if len(got) == 0 {
		return nil, &InvalidError{Name: name, Reason: name + " is empty: at least one capture format is required"}
	}
	return got, nil
}

func splitList(raw string) []string {
	var out []string
	for _, p := range strings.Split(raw, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// SiblingDatabase returns dbURL with its database name suffixed, e.g. the
// embedded OpenFGA datastore next to the ledger database.
func SiblingDatabase(dbURL, suffix string) string {
	u, err := url.Parse(dbURL)
	if err != nil || u.Path == "" || u.Path == "/" {
		return ""
	}
	u.Path += suffix
	return u.String()
}
