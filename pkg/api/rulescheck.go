package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// RulesCheck reads GET /api/crawl-rules/check's query (?seed=…&rule=action:pattern,
// both repeatable, and ?url=… to decide) and runs rules.Try, the function
// `ledgerctl rules check` calls too. A rule that is not action:pattern, or
// too many rules, is a 400 naming the query parameter.
func RulesCheck(q url.Values) (rules.DryRun, error) {
	ans, err := rules.Try(q["seed"], q["rule"], q["url"])
	var spec *rules.SpecError
	var many *rules.TooManyRulesError
	switch {
	case errors.As(err, &spec):
		return rules.DryRun{}, &BadRequest{Message: fmt.Sprintf("querystring/rule/%d %v", spec.Index, spec.Err)}
	case errors.As(err, &many):
		return rules.DryRun{}, &BadRequest{Message: "querystring/rule " + many.Error()}
	}
	return ans, err
}

func (s *Server) rulesCheck() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (rules.DryRun, error) { return RulesCheck(r.URL.Query()) },
		func(_ context.Context, _ identity.Identity, ans rules.DryRun) (any, error) { return ans, nil })
}
