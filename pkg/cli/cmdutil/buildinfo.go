package cmdutil

// The version, the commit and its date, set by the release build through
// -ldflags "-X …" (Makefile, .goreleaser.yaml); `ledgerctl version` prints
// them, and serve, capture and crawl run name the version as their user
// agent.
var (
	Version = "dev"
	Commit  = ""
	Date    = ""
)
