package app

import (
	"context"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/health"
)

// Readiness is what serve's /readyz asks: the health checks of PostgreSQL,
// OpenFGA and S3 on this app's adapters, in the API's own result type.
func (a *App) Readiness() api.Readiness { return readiness{&health.Checker{App: a}} }

type readiness struct{ c *health.Checker }

func (r readiness) Ready(ctx context.Context) []api.ReadyCheck {
	rs := r.c.Ready(ctx)
	out := make([]api.ReadyCheck, len(rs))
	for i, res := range rs {
		out[i] = api.ReadyCheck{Name: res.Check, Failed: res.Status == health.Fail, Reason: res.Reason, Detail: res.Detail}
	}
	return out
}
