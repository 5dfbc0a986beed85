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
	{Name: "CAPTURE_LEDGER_OIDC_CLIENT_ID", Help: "the console's OIDC client id (the ID token's audience); set with CAPTURE_LEDGER_OIDC_ISSUER, the console offers Sign in (authorization code with PKCE; a session cookie) instead of a token field"},
	{Name: "CAPTURE_LEDGER_OIDC_CLIENT_SECRET", Help: "the console's OIDC client secret, for an issuer that wants one (a public client with PKCE needs none)", Secret: true},
	{Name: "CAPTURE_LEDGER_OIDC_REDIRECT_URL", Help: "where the issuer sends the browser back after sign-in (register it with the issuer); unset: CAPTURE_LEDGER_API_URL, else http://CAPTURE_LEDGER_API_HOST:CAPTURE_LEDGER_API_PORT, followed by /auth/callback"},
	{Name: "CAPTURE_LEDGER_DEV_ISSUER_PORT", Default: "9099", Help: "port of `ledgerctl dev issuer` (127.0.0.1 only)"},

	{Name: "CAPTURE_LEDGER_API_HOST", Default: "127.0.0.1", Flag: "host", Help: "address `ledgerctl serve` listens on"},
	{Name: "CAPTURE_LEDGER_API_PORT", Default: "7070", Flag: "port", Help: "port `ledgerctl serve` listens on (1-65535); given to `make run` or `make stack-up` (make run CAPTURE_LEDGER_API_PORT=7071), it is written to .env.local for later commands"},
	{Name: "CAPTURE_LEDGER_DRAIN_INTERVAL_MS", Default: "5000", Flag: "drain-interval-ms", Help: "how often `serve` drains the OpenFGA outbox besides draining it as soon as rows are added (retries that come due, a notification missed), in milliseconds"},
	{Name: "CAPTURE_LEDGER_OUTBOX_MAX_ATTEMPTS", Default: "10", Help: "failed deliveries before an outbox row is dead-lettered"},
	{Name: "CAPTURE_LEDGER_LIST_SOURCE", Default: "candidates", Help: "archives the list and search ask OpenFGA about: candidates (those the ledger recorded a tuple for the caller's organizations, the caller as owner, or an active share to either: cost follows what the caller sees) or scan (every archive: also finds archives whose tuples were written to OpenFGA by hand)"},
	{Name: "CAPTURE_LEDGER_LIST_TIME_BUDGET_MS", Default: "2000", Help: "work one archive list request may do before it answers truncated with a cursor to resume, in milliseconds"},
	{Name: "CAPTURE_LEDGER_LIST_CHECK_BUDGET", Default: "5000", Help: "archives one list request may ask OpenFGA about before it answers truncated with a cursor to resume"},
	{Name: "CAPTURE_LEDGER_LIST_CONCURRENCY", Default: "4", Help: "archive lists and searches `serve` runs at once; past it one is answered 503 with Retry-After"},
	{Name: "CAPTURE_LEDGER_LIST_CONCURRENCY_PER_CALLER", Default: "2", Help: "archive lists and searches one caller may run at once; past it one is answered 429 with Retry-After"},
	{Name: "CAPTURE_LEDGER_LIST_CONCURRENCY_PER_ORG", Default: "3", Help: "archive lists and searches the callers of one organization may run at once together (a caller of several takes a place of each); past it one is answered 429 with Retry-After"},
	{Name: "CAPTURE_LEDGER_EXPORT_CONCURRENCY", Default: "2", Help: "crawl downloads (a crawl's archives as one WACZ, from the console or GET /api/crawls/{id}/wacz) `serve` writes at once; past it one is answered 503 with Retry-After"},
	{Name: "CAPTURE_LEDGER_EXPORT_CONCURRENCY_PER_CALLER", Default: "1", Help: "crawl downloads one caller may have running at once; past it one is answered 429 with Retry-After"},
	{Name: "CAPTURE_LEDGER_EXPORT_CONCURRENCY_PER_ORG", Default: "1", Help: "crawl downloads the callers of one organization may have running at once together (a caller of several takes a place of each); past it one is answered 429 with Retry-After"},
	{Name: "CAPTURE_LEDGER_LIST_CHECK_CONCURRENCY", Default: "2", Help: "can_view checks all archive lists together have in flight (1-100): the share of OpenFGA lists may take, so URL minting keeps its speed"},

	{Name: "CAPTURE_LEDGER_CAPTURE_FORMATS", Default: "wacz", Help: "comma list of png,webp,html,links,mhtml,wacz (BrowserHive writes each; the built-in capturer writes wacz, and links where a crawl follows them)"},
	{Name: "CAPTURE_LEDGER_CAPTURE_SIGNING", Help: "\"1\" asks BrowserHive for signed WACZ (needs wacz in the formats, and BrowserHive or the Windmill flow: the built-in capturer does not sign, so direct captures are refused while it is set)"},
	{Name: "CAPTURE_LEDGER_CAPTURE_ENGINE", Default: "browser", Help: "engine of the built-in capturer: browser (headless Chromium), http (no JavaScript) or auto (http, then the browser for a page that needs JavaScript)"},
	{Name: "CAPTURE_LEDGER_CAPTURE_TIMEOUT_MS", Default: "60000", Help: "the longest one built-in capture may take, in milliseconds"},
	{Name: "CAPTURE_LEDGER_CAPTURE_MAX_BODY_BYTES", Default: "20971520", Help: "the most bytes one response body is recorded with; past it the archive is marked incomplete"},
	{Name: "CAPTURE_LEDGER_CAPTURE_MAX_PAGE_BYTES", Default: "209715200", Help: "the most bytes of bodies one capture records in all; past it the archive is marked incomplete"},
	{Name: "CAPTURE_LEDGER_CAPTURE_MAX_RESOURCES", Default: "500", Help: "the most responses one capture records besides the page itself"},
	{Name: "CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE", Help: "exactly \"1\" lets captures reach loopback, private and link-local addresses (local test sites only; refused by default)"},
	{Name: "CAPTURE_LEDGER_CAPTURE_CONCURRENCY_PER_CALLER", Default: "2", Help: "captures (POST /api/captures, `ledgerctl capture`) one caller runs at once; past it a capture is answered 429 with Retry-After"},
	{Name: "CAPTURE_LEDGER_CAPTURE_CONCURRENCY_PER_ORG", Default: "4", Help: "captures one organization runs at once, direct captures and the embedded crawl runner's pages together (crawl pages wait, and leave one place to direct captures); past it a capture is answered 429 with Retry-After"},
	{Name: "CAPTURE_LEDGER_CAPTURE_URLS_PER_MINUTE_PER_CALLER", Default: "60", Help: "URLs one caller's captures may ask for per minute; past it a capture is answered 429 with Retry-After"},
	{Name: "CAPTURE_LEDGER_CAPTURE_URLS_PER_MINUTE_PER_ORG", Default: "120", Help: "URLs one organization's captures and crawl pages may take per minute (crawl pages wait); past it a capture is answered 429 with Retry-After"},
	{Name: "CAPTURE_LEDGER_CHROMIUM_PATH", Help: "Chromium the browser engine runs; unset: chromium, chromium-browser or google-chrome on PATH"},

	{Name: "CAPTURE_LEDGER_CRAWL_WEBHOOK_URL", Help: "Windmill flow webhook; set with _TOKEN, crawls run on the flow; unset, serve's embedded runner runs them (docs/crawling.md)"},
	{Name: "CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN", Help: "bearer token for the crawl webhook", Secret: true},
	{Name: "CAPTURE_LEDGER_CRAWL_WEBHOOK_TIMEOUT_MS", Default: "10000", Help: "timeout of one webhook call, in milliseconds"},
	{Name: "CAPTURE_LEDGER_CRAWL_STALL_TIMEOUT_MS", Default: "1800000", Help: "a running crawl with no progress for this long is closed failed, in milliseconds"},
	{Name: "CAPTURE_LEDGER_CRAWL_RESCAN_MS", Default: "15000", Help: "how often the embedded crawl runner of every serve looks for running crawls no process runs (a stopped or killed serve's) and resumes them, in milliseconds"},
	{Name: "CAPTURE_LEDGER_CRAWL_DELAY_MAX_MS", Default: "60000", Help: "the embedded crawl runner's cap on a robots.txt Crawl-delay, in milliseconds (a longer one is cut to it and reported as the cap; it never shortens perHostDelayMs)"},
	{Name: "CAPTURE_LEDGER_CRAWL_BACKOFF_MAX_MS", Default: "120000", Help: "the embedded crawl runner's cap on the wait after a 429 or 503 (Retry-After), in milliseconds"},
	{Name: "CAPTURE_LEDGER_CRAWLS_PER_ORG", Default: "3", Help: "crawls one organization may run at once; past it POST /api/crawls answers 409 (other organizations' crawls do not count)"},
	{Name: "CAPTURE_LEDGER_HOST_CAPTURES_AT_ONCE", Default: "1", Help: "captures of one host that may run at once across every crawl, direct capture and serve process (a lease per host in PostgreSQL)"},
	{Name: "CAPTURE_LEDGER_HOST_DELAY_MS", Default: "0", Help: "the least time between the end of one capture of a host and the start of the next, for every crawl and direct capture, in milliseconds (a crawl's perHostDelayMs, robots.txt's Crawl-delay or a back-off can make it longer)"},
	{Name: "CAPTURE_LEDGER_HOST_LEASE_TTL_MS", Default: "30000", Help: "how long a host's lease outlives a process that stopped renewing it (killed mid-capture): the host is free again, counted as busy until then, in milliseconds"},
	{Name: "CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS", Help: "comma list of BrowserHive base URLs (http(s)://host:port); set, the embedded crawl runner captures through them (POST /captures) instead of the built-in capturer"},
	{Name: "CAPTURE_LEDGER_BROWSERHIVE_DEADLINE_MS", Default: "145000", Help: "how long one BrowserHive capture call may take, waits for a free endpoint included, in milliseconds"},

	{Name: "CAPTURE_LEDGER_API_URL", Help: "URL browsers reach `serve` at (scheme://host[:port]); with the dev identity its host name is one more that serve answers for (besides 127.0.0.1, localhost and [::1])"},

	{Name: "CAPTURE_LEDGER_REPLAY_KEY", Help: "HMAC-SHA256 key of replay links, at least 32 bytes (`make run` writes a random one to .env.local); serve refuses to start without it unless CAPTURE_LEDGER_DEV_IDENTITY=1, which uses a key that lasts as long as the process", Secret: true},
	{Name: "CAPTURE_LEDGER_REPLAY_DOMAIN", Default: "replay.localhost", Help: "domain under which every replay session gets an origin of its own, <label>.DOMAIN, served by `serve` (a wildcard DNS name and certificate in production); optionally with http(s):// and :port — without them, http and serve's port for *.localhost, https otherwise"},
	{Name: "CAPTURE_LEDGER_REPLAY_VIEWER_DIR", Default: ".state/replay/replaywebpage-2.5.3", Help: "folder holding ReplayWeb.page's ui.js and sw.js, which serve offers on replay origins (`make replay-viewer` puts them there)"},
	{Name: "CAPTURE_LEDGER_REPLAY_READS", Default: "512", Help: "archive reads (a replay's range reads, downloads) `serve` streams from S3 at once; past it one is answered 503 with Retry-After"},
	{Name: "CAPTURE_LEDGER_REPLAY_READS_PER_CALLER", Default: "64", Help: "archive reads one person may have streaming at once; past it one is answered 429 with Retry-After"},
	{Name: "CAPTURE_LEDGER_REPLAY_READS_PER_ORG", Default: "128", Help: "archive reads the people of one organization may have streaming at once together; past it one is answered 429 with Retry-After"},
	{Name: "CAPTURE_LEDGER_REPLAY_COLLECTION_LIMIT", Default: "1000", Help: "how many of a crawl's captures its replay collection lists (its first, oldest first; 1 to 10000): ReplayWeb.page loads the index of each; past it the replay link says so, and the crawl's download as one WACZ holds every capture"},
	{Name: "CAPTURE_LEDGER_SEARCH_DIR", Default: ".ledgerctl/search", Help: "directory of the on-disk (Bleve) full-text index, used when CAPTURE_LEDGER_OPENSEARCH_URL is unset; one process at a time holds it open"},
	{Name: "CAPTURE_LEDGER_OPENSEARCH_URL", Help: "OpenSearch cluster for full-text search; set, it replaces the on-disk index (credentials may go in the URL)", Secret: true},
	{Name: "CAPTURE_LEDGER_OPENSEARCH_INDEX", Default: "capture-pages", Help: "OpenSearch index holding the pages"},
	{Name: "CAPTURE_LEDGER_SEARCH_LEASE_TTL_MS", Default: "10000", Help: "with the on-disk (Bleve) index, one serve per database holds the index (a lease in PostgreSQL, renewed every third of this); when it stops, another takes over at once, when it dies, within this plus a third, in milliseconds"},
	{Name: "CAPTURE_LEDGER_SEARCH_PEER_LISTEN", Default: "127.0.0.1:0", Help: "host:port where a serve holding the on-disk (Bleve) index answers the searches the other serves of the database forward to it (with a secret kept in PostgreSQL); port 0 takes a free one; serves on other machines need an address they can reach"},

	{Name: "LOG_LEVEL", Default: "info", Help: "serve log level: debug, info, warn or error"},
	{Name: "CAPTURE_LEDGER_LOG_FORMAT", Flag: "log-format", Help: "how `serve` and `dev demo` write log lines: text (one readable line each, coloured on a terminal unless NO_COLOR is set) or json (one JSON object each); unset, text when stderr is a terminal, else json"},
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
