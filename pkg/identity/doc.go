// Package identity answers one question for the HTTP API: who is calling?
//
// The answer is an [Identity] — a subject and the organizations it belongs
// to — or "no identity", which the API turns into
// 401 {"error":"unauthenticated"} without saying why. The shape is fixed
// because the authorization layer depends on it (the subject becomes
// capture_submissions.submitted_by, crawls.requested_by and the capture_job
// owner tuple; the organizations become contextual member tuples); how it is
// verified is swappable.
//
// Three resolvers exist, and [Select] picks one once at startup:
//
//   - [JWT]: a Bearer token (scheme in any case) verified against the
//     issuer's JWKS at <issuer>/.well-known/jwks.json (RS256 or ES256
//     only), with iss, aud and nbf checked and exp required, at most
//     [MaxTokenLifetime] away. Selected whenever CAPTURE_LEDGER_OIDC_ISSUER
//     is set, even when the dev headers are also enabled: a deployment
//     never falls back to the weaker mode.
//   - [Headers]: trusts X-Capture-ledger-Subject and
//     X-Capture-ledger-Organizations. Local development only, enabled by
//     CAPTURE_LEDGER_DEV_IDENTITY=1 exactly; `serve` then listens on
//     loopback only ([CheckDevListen]).
//   - [Deny]: nobody is authenticated. The default.
//
// Whatever the resolver, the subject and organizations must follow
// OpenFGA's id rules ([CheckIdentity]: no ':', '#', whitespace or control
// characters, not "*", bounded lengths, at most [MaxOrganizations]): an
// identity OpenFGA could not hold is no identity, so it is a 401 and never
// a 500 from the question it would make. docs/identity.md is the
// operator's version of this.
//
// A rejection is never an error a handler could leak: resolvers return
// (Identity{}, false). The JWT resolver logs each rejection at info as
// "JWT rejected" with a reason code (and the claim name for claim failures),
// never the token or any claim value.
//
// The package also holds the dev issuer ([Issuer]): an in-memory RS256 key
// that signs tokens for anyone who asks, served only on a loopback address
// (see [ListenLoopback]), and [StartupNotes], the startup warnings about the
// chosen mode.
package identity
