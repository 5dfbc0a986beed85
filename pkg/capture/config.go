package capture

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// The environment variables FromEnv reads.
const (
	EnvTimeout      = "CAPTURE_LEDGER_CAPTURE_TIMEOUT_MS"
	EnvMaxBody      = "CAPTURE_LEDGER_CAPTURE_MAX_BODY_BYTES"
	EnvMaxPage      = "CAPTURE_LEDGER_CAPTURE_MAX_PAGE_BYTES"
	EnvMaxResources = "CAPTURE_LEDGER_CAPTURE_MAX_RESOURCES"
	EnvAllowPrivate = "CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE"
	EnvChromiumPath = "CAPTURE_LEDGER_CHROMIUM_PATH"
)

// The defaults of the limits. The byte caps are BrowserHive's own defaults
// (maxResponseBytes 20 MiB, maxTaskBytes 200 MiB).
const (
	DefaultTimeout      = 60 * time.Second
	DefaultMaxBodyBytes = 20 << 20
	DefaultMaxPageBytes = 200 << 20
	DefaultMaxResources = 500
)

// Config holds the limits and switches of a capture. The zero value is not
// ready to use: start from Defaults or FromEnv.
type Config struct {
	// Timeout bounds one capture from start to screenshot.
	Timeout time.Duration
	// MaxBodyBytes caps one response body as recorded; a longer body is cut
	// and the capture is incomplete.
	MaxBodyBytes int64
	// MaxPageBytes caps the bodies of one capture together; past it bodies
	// are cut (or not fetched) and the capture is incomplete.
	MaxPageBytes int64
	// MaxResources caps the responses recorded besides the page itself
	// (redirect hops of the page do not count).
	MaxResources int
	// AllowPrivate lets captures connect to loopback, private, link-local
	// and other non-public addresses. Off by default.
	AllowPrivate bool
	// ChromiumPath is the browser engine's Chromium; empty means the first
	// of chromium, chromium-browser, google-chrome found on PATH.
	ChromiumPath string

	// The rest is not read from the environment.

	// AllowPrefixes are address ranges allowed even when AllowPrivate is
	// off (an intranet an operator means to capture, or a test's server).
	AllowPrefixes []netip.Prefix
	// Resolve replaces the system resolver for host names (tests map
	// public-looking names to local addresses with it). Every address it
	// returns is still checked when dialed.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// UserAgent is sent by the http engine; the browser engine sends
	// Chromium's own. Empty means DefaultUserAgent.
	UserAgent string
	// Viewport is the browser window size; zero means 1280×800.
	ViewportWidth, ViewportHeight int
	// IdleTime is how long the network must stay quiet for the browser
	// engine to call the page settled (500 ms when zero).
	IdleTime time.Duration
	// SettleTimeout bounds each wait for network idle (10 s when zero).
	SettleTimeout time.Duration
	// ScrollTimeout is the browser's behaviours' time budget per page:
	// scrolling until the page stops growing, then fetching what the page
	// names for later (DefaultBehaviorTimeout when zero).
	ScrollTimeout time.Duration
	// ScrollMaxSteps is their step budget: viewports scrolled per page
	// (DefaultBehaviorSteps when zero).
	ScrollMaxSteps int
}

// The default budgets of the browser's behaviours per page. An infinite
// feed whose batches take 300 ms each gets about twenty batches.
const (
	DefaultBehaviorTimeout = 20 * time.Second
	DefaultBehaviorSteps   = 200
)

// DefaultUserAgent is the http engine's User-Agent.
const DefaultUserAgent = "Mozilla/5.0 (compatible; ledgerctl capture; +https://github.com/capture-ledger/ledgerctl)"

// Defaults returns the configuration used when no variable is set.
func Defaults() Config {
	return Config{
		Timeout:      DefaultTimeout,
		MaxBodyBytes: DefaultMaxBodyBytes,
		MaxPageBytes: DefaultMaxPageBytes,
		MaxResources: DefaultMaxResources,
	}
}

// ConfigError names a variable whose value cannot be used.
type ConfigError struct {
	Name, Value, Reason string
}

// Error reads `NAME="value": reason`.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s=%q: %s", e.Name, e.Value, e.Reason)
}

// FromEnv reads the capture variables through getenv (os.Getenv, or a
// resolved configuration's Get); an empty value counts as unset. Every bad
// value is reported, each as a *ConfigError naming its variable.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Defaults()
	var errs []error
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	positive := func(name string, max int64, unit string) (int64, bool) {
		raw := get(name)
		if raw == "" {
			return 0, false
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 1 || n > max {
			errs = append(errs, &ConfigError{Name: name, Value: raw, Reason: fmt.Sprintf("must be a whole number of %s between 1 and %d", unit, max)})
			return 0, false
		}
		return n, true
	}
	if n, ok := positive(EnvTimeout, int64((24 * time.Hour).Milliseconds()), "milliseconds"); ok {
		c.Timeout = time.Duration(n) * time.Millisecond
	}
	if n, ok := positive(EnvMaxBody, 1<<40, "bytes"); ok {
		c.MaxBodyBytes = n
	}
	if n, ok := positive(EnvMaxPage, 1<<40, "bytes"); ok {
		c.MaxPageBytes = n
	}
	if n, ok := positive(EnvMaxResources, 100_000, "responses"); ok {
		c.MaxResources = int(n)
	}
	switch raw := get(EnvAllowPrivate); raw {
	case "":
	case "1":
		c.AllowPrivate = true
	default:
		errs = append(errs, &ConfigError{Name: EnvAllowPrivate, Value: raw, Reason: `must be exactly "1" to allow private addresses, or unset`})
	}
	c.ChromiumPath = get(EnvChromiumPath)
	return c, errors.Join(errs...)
}

// withDefaults fills the fields a caller may leave zero.
func (c Config) withDefaults() Config {
	d := Defaults()
	if c.Timeout <= 0 {
		c.Timeout = d.Timeout
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = d.MaxBodyBytes
	}
	if c.MaxPageBytes <= 0 {
		c.MaxPageBytes = d.MaxPageBytes
	}
	if c.MaxResources <= 0 {
		c.MaxResources = d.MaxResources
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.ViewportWidth <= 0 || c.ViewportHeight <= 0 {
		c.ViewportWidth, c.ViewportHeight = 1280, 800
	}
	if c.IdleTime <= 0 {
		c.IdleTime = 500 * time.Millisecond
	}
	if c.SettleTimeout <= 0 {
		c.SettleTimeout = 10 * time.Second
	}
	if c.ScrollTimeout <= 0 {
		c.ScrollTimeout = DefaultBehaviorTimeout
	}
	if c.ScrollMaxSteps <= 0 {
		c.ScrollMaxSteps = DefaultBehaviorSteps
	}
	return c
}
