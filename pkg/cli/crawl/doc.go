// Package crawl is `ledgerctl crawl` (start, status, list, decisions, stop,
// fail, run, politeness) and `ledgerctl targets`, the capture targets a crawl
// may start from.
package crawl
