package config_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/config"
)

// TestListDefaultsAgree: the archive list's and the capture quota's bounds
// are written twice, as the settings' defaults and as the archive package's
// own (for callers that set none); they must not drift apart.
func TestListDefaultsAgree(t *testing.T) {
	for name, want := range map[string]int{
		"CAPTURE_LEDGER_LIST_CONCURRENCY":                   archive.DefaultGateBounds.Lists,
		"CAPTURE_LEDGER_LIST_CONCURRENCY_PER_CALLER":        archive.DefaultGateBounds.PerCaller,
		"CAPTURE_LEDGER_LIST_CHECK_CONCURRENCY":             archive.DefaultGateBounds.Checks,
		"CAPTURE_LEDGER_LIST_TIME_BUDGET_MS":                int(archive.DefaultTimeBudget / time.Millisecond),
		"CAPTURE_LEDGER_LIST_CHECK_BUDGET":                  archive.DefaultCheckBudget,
		"CAPTURE_LEDGER_CAPTURE_CONCURRENCY_PER_CALLER":     archive.DefaultCaptureBounds.PerCaller,
		"CAPTURE_LEDGER_CAPTURE_CONCURRENCY_PER_ORG":        archive.DefaultCaptureBounds.PerOrg,
		"CAPTURE_LEDGER_CAPTURE_URLS_PER_MINUTE_PER_CALLER": archive.DefaultCaptureBounds.URLsPerCaller,
		"CAPTURE_LEDGER_CAPTURE_URLS_PER_MINUTE_PER_ORG":    archive.DefaultCaptureBounds.URLsPerOrg,
	} {
		v, ok := config.Lookup(name)
		if got, err := strconv.Atoi(v.Default); !ok || err != nil || got != want {
			t.Errorf("%s defaults to %q in the settings, %d in pkg/archive", name, v.Default, want)
		}
	}
}
