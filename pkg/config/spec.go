// Package config owns every setting ledgerctl reads: the table of variables,
// their defaults and validation, and the env files (.env, then .env.local)
// they may come from. Values resolve once, flags > shell > .env.local > .env >
// defaults, and a bad or missing value stops start-up naming the variable.
package config

// Source says where a required value is expected to come from, so the
// "missing" error can tell the operator how to get it.
type Source int

const (
	// FromTemplate values are copied from .env.example into .env by a person.
	FromTemplate Source = iota
	// FromDeploy values are written into .env.local by `ledgerctl fga deploy`.
	FromDeploy
)

// Var describes one environment variable ledgerctl reads.
type Var struct {
	Name    string // the environment variable, e.g. CAPTURE_LEDGER_S3_BUCKET
	Default string // "" means no default
	Flag    string // a persistent flag bound to it, "" for none
	Help    string // one line, for .env.example, flag help and docs
	// Example is what .env.example shows for a value a person must fill in.
	Example string
	Source  Source
	// Secret values are never printed (docs show them as a placeholder).
	Secret bool
	// Required by `ledgerctl serve` and the commands that reach S3 and OpenFGA.
	Required bool
}

// Variables is the full list, in the order .env.example and the docs show it.
var Variables = []Var{
	{Name: "DATABASE_URL", Required: true, Flag: "database-url", Help: "PostgreSQL URL of the ledger database", Example: "postgres://capture_ledger:capture_ledger@127.0.0.1:5432/capture_ledger?sslmode=disable", Secret: true},

	{Name: "CAPTURE_LEDGER_S3_ENDPOINT", Required: true, Help: "S3 API endpoint holding the WACZ archives", Example: "http://127.0.0.1:8333"},
	{Name: "CAPTURE_LEDGER_S3_BUCKET", Required: true, Help: "bucket the capture server writes into (the ledger reads only this bucket)", Example: "browserhive"},
	{Name: "CAPTURE_LEDGER_S3_ACCESS_KEY_ID", Required: true, Help: "S3 access key", Example: "capture-ledger"},
	{Name: "CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY", Required: true, Help: "S3 secret key", Example: "capture-ledger-secret", Secret: true},
	{Name: "CAPTURE_LEDGER_S3_REGION", Default: "us-east-1", Help: "S3 region used for signing"},
	{Name: "CAPTURE_LEDGER_S3_FORCE_PATH_STYLE", Default: "false", Help: "path-style addressing; true only if exactly \"true\""},

	{Name: "CAPTURE_LEDGER_FGA_STORE_ID", Required: true, Help: "OpenFGA store id (written to .env.local by `ledgerctl fga deploy`)", Source: FromDeploy},
	{Name: "CAPTURE_LEDGER_FGA_MODEL_ID", Required: true, Help: "OpenFGA authorization model id, pinned on purpose (written by `ledgerctl fga deploy`)", Source: FromDeploy},
	{Name: "CAPTURE_LEDGER_FGA_STORE_NAME", Default: "capture-ledger", Help: "store name `ledgerctl fga deploy` finds or creates (a deploy with the default name copies the tuples of a store named wacz-validator, the old default, into it once)"},
	{Name: "CAPTURE_LEDGER_FGA_API_URL", Help: "remote OpenFGA HTTP API; unset runs OpenFGA embedded in-process"},
	{Name: "CAPTURE_LEDGER_FGA_API_TOKEN", Help: "preshared key for the remote OpenFGA API", Secret: true},
	{Name: "CAPTURE_LEDGER_FGA_DATASTORE_URI", Help: "PostgreSQL URL of the embedded OpenFGA datastore (default: a database named <ledger db>_fga next to DATABASE_URL)", Secret: true},

	{Name: "CAPTURE_LEDGER_DEV_IDENTITY", Help: "exactly \"1\" trusts the X-Capture-ledger-Subject/-Organizations headers (local development only)"},
	{Name: "CAPTURE_LEDGER_OIDC_ISSUER", Help: "OIDC issuer whose JWTs identify callers; set, it wins over the dev headers"},
	{Name: "CAPTURE_LEDGER_OIDC_AUDIENCE", Default: "capture-ledger", Help: "audience the JWTs must carry"},
	{Name: "CAPTURE_LEDGER_DEV_ISSUER_PORT", Default: "9099", Help: "port of `ledgerctl dev issuer` (127.0.0.1 only)"},

	{Name: "CAPTURE_LEDGER_API_HOST", Default: "127.0.0.1", Flag: "host", Help: "address `ledgerctl serve` listens on"},
	{Name: "CAPTURE_LEDGER_API_PORT", Default: "7070", Flag: "port", Help: "port `ledgerctl serve` listens on (1-65535)"},
	{Name: "CAPTURE_LEDGER_DRAIN_INTERVAL_MS", Default: "5000", Flag: "drain-interval-ms", Help: "how often `serve` drains the OpenFGA outbox, in milliseconds"},
	{Name: "CAPTURE_LEDGER_OUTBOX_MAX_ATTEMPTS", Default: "10", Help: "failed deliveries before an outbox row is dead-lettered"},
	{Name: "CAPTURE_LEDGER_LIST_TIME_BUDGET_MS", Default: "2000", Help: "work one archive list request may do before it answers truncated with a cursor to resume, in milliseconds"},
	{Name: "CAPTURE_LEDGER_LIST_CHECK_BUDGET", Default: "5000", Help: "archives one list request may ask OpenFGA about before it answers truncated with a cursor to resume"},
	{Name: "CAPTURE_LEDGER_LIST_CONCURRENCY", Default: "4", Help: "archive lists `serve` runs at once; past it a list is answered 503 with Retry-After"},
	{Name: "CAPTURE_LEDGER_LIST_CONCURRENCY_PER_CALLER", Default: "2", Help: "archive lists one caller may run at once; past it a list is answered 503 with Retry-After"},
	{Name: "CAPTURE_LEDGER_LIST_CHECK_CONCURRENCY", Default: "2", Help: "can_view checks all archive lists together have in flight (1-100): the share of OpenFGA lists may take, so URL minting keeps its speed"},

	{Name: "CAPTURE_LEDGER_CAPTURE_FORMATS", Default: "wacz", Help: "comma list of png,webp,html,links,mhtml,wacz"},
	{Name: "CAPTURE_LEDGER_CAPTURE_SIGNING", Help: "\"1\" asks for signed WACZ (needs wacz in the formats)"},

	{Name: "CAPTURE_LEDGER_CRAWL_WEBHOOK_URL", Help: "Windmill flow webhook; set with _TOKEN to run crawls (without a runner the crawl routes are not served)"},
	{Name: "CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN", Help: "bearer token for the crawl webhook", Secret: true},
	{Name: "CAPTURE_LEDGER_CRAWL_WEBHOOK_TIMEOUT_MS", Default: "10000", Help: "timeout of one webhook call, in milliseconds"},
	{Name: "CAPTURE_LEDGER_CRAWL_STALL_TIMEOUT_MS", Default: "1800000", Help: "a running crawl with no progress for this long is closed failed, in milliseconds"},

	{Name: "REPLAY_ORIGIN", Default: "http://127.0.0.1:8899", Help: "WACZ replay viewer the picker links to"},
	{Name: "LOG_LEVEL", Default: "info", Help: "serve log level: debug, info, warn or error"},
}

// Lookup returns the variable called name.
func Lookup(name string) (Var, bool) {
	for _, v := range Variables {
		if v.Name == name {
			return v, true
		}
	}
	return Var{}, false
}

// Required lists the names of the required variables.
func Required() []string {
	var out []string
	for _, v := range Variables {
		if v.Required {
			out = append(out, v.Name)
		}
	}
	return out
}
