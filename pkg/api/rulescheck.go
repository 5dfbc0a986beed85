package api

import (
	"context"
	"net/http"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// rulesCheck answers GET /api/crawl-rules/check: ?seed=…&rule=action:pattern,
// both repeatable, and ?url=… to decide, read into rules.Try (the function
// `ledgerctl rules check` calls too). A rule that is not action:pattern, or
// too many rules, is a 400 naming the query parameter (querystring/rule/N).
func (s *Server) rulesCheck() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (rules.DryRun, error) {
			q := r.URL.Query()
			ans, err := rules.Try(rules.CheckRequest{Seeds: q["seed"], Rules: q["rule"], URLs: q["url"]})
			return ans, inQuery(err)
		},
		func(_ context.Context, _ identity.Identity, ans rules.DryRun) (any, error) { return ans, nil })
}
