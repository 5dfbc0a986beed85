// Package dev is `ledgerctl dev`: the private PostgreSQL and versitygw stack
// (stack up/down), the demo (a bundled site crawled and served, under demo/),
// and the dev OIDC issuer and its tokens.
package dev
