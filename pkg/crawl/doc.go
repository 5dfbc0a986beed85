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
// Errors: ledger.ErrNotFound is "absent or not allowed" (404); errors that
// match ErrInvalid (400) or ErrConflict (409) carry their exact JSON body
// (Body()); anything else is internal. Refused requests change nothing.
package crawl
