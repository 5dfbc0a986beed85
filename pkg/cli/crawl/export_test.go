package crawl

import "github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"

// Names the tests of package crawl_test reach that the package does not export.
var FlagOf = flagOf
var NewCmdCrawlPoliteness = newCmdCrawlPoliteness
var RunCrawlHere = runCrawlHere

// NewCrawlOptions are the options of a crawl command run by f as as, for orgs.
func NewCrawlOptions(f *cmdutil.Factory, as string, orgs []string) *CrawlOptions {
	return &CrawlOptions{f: f, As: as, Orgs: orgs}
}

var RenderProgress = renderProgress
var WhySentence = whySentence

// Words are the crawl commands' words, for the tests.
var Words = words
