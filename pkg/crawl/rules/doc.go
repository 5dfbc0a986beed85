// Package rules owns the crawl's decisions about URLs, and nothing else: it
// performs no I/O.
//
// It holds:
//   - the one URL parser used for seeds, discovered links, rule patterns and
//     capture targets (ParseURL): absolute http(s) only, fragment dropped,
//     WHATWG-style serialisation, the query never reordered;
//   - crawl rules (Rule, ParseJSON, ParseSpec, Default): an ordered list of
//     {follow|capture|skip: pattern} objects whose patterns are a scope word
//     (same-origin, same-host, same-site, any), a lowercase hostname, or a
//     normalised http(s) URL prefix;
//   - their evaluation against a crawl's seeds (Set): first match wins, a link
//     no rule matches is dropped as rule 0, a page is judged by both its
//     requested and its final URL, rel="nofollow" is honoured and links are
//     de-duplicated per report (Set.FilterLinks);
//   - the three checks that refuse a rule list before a crawl starts, in this
//     order: invalid patterns, rules that can never match, seeds the rules do
//     not follow (Validate, Check), with the exact 400 bodies of the API;
//   - the per-level tallies written to crawl_decisions (Tally);
//   - the page budget of a level (PlanNextLevel).
//
// Everything here is deterministic for a given input and a given version of
// golang.org/x/net/publicsuffix (which includes the private section of the
// Public Suffix List, so foo.github.io and bar.github.io are different sites).
package rules
