// Package crawl holds the crawl use-cases: starting a crawl (from seeds or
// from the organization's capture targets), reading and listing crawls,
// closing them (by the runner, or when they stall), admitting a level
// report, answering what the rules decided, and the operator's capture
// targets. The HTTP handlers and the CLI call the same functions.
//
// What to capture next and when to stop is decided here, whatever runs the
// loop (the Windmill flow through windmill.Dispatcher, or an embedded
// runner through the Dispatcher interface): the rules and the budget come
// from package rules, the rows live in PostgreSQL (Store), and manifests and
// links files are read only from the configured bucket (Objects).
//
// The operations take typed requests (StartRequest, LevelReport,
// FailRequest, DomainQuery) and return typed results and errors; reading a
// request off the wire, and wording a refusal, is the edge's work (package
// api answers Fastify-style bodies, the CLI names flags).
//
// Errors: ledger.ErrNotFound is "absent or not allowed"; a refused request
// matches ErrInvalid (a *ledger.FieldError naming the field, a
// *RequestError, a *BadTargetsError) and one that conflicts with a crawl's
// state matches ErrConflict (*ActiveCrawlError, *NotRunningError,
// *LevelConflictError), each carrying its data; anything else is internal.
// Refused requests change nothing.
package crawl
