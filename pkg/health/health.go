// Package health runs the checks behind `/readyz` and `ledgerctl doctor`:
// whether PostgreSQL, OpenFGA and S3 answer (the readiness of serve), and,
// for the doctor, whether each can do what serve needs of it (a write read
// back, an object put and deleted, a permission check answered), whether
// the pinned model is the store's latest, the schema
// is migrated, the outbox has dead letters and this machine's clock agrees
// with PostgreSQL's. Run is the one function that runs them: concurrently,
// each bounded by a short timeout.
//
// It is its own package rather than a file of pkg/app because it is a
// use-case of the adapters app wires (and carries their fix hints), used by
// both the HTTP API and the CLI; app stays the wiring only.
package health

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
)

// Status is a check's verdict.
type Status string

// The verdicts. Skip is a check that was not run because the dependency it
// needs failed.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Names of the checks.
const (
	Postgres   = "postgres"
	OpenFGA    = "openfga"
	S3         = "s3"
	Model      = "fga-model"
	Migrations = "migrations"
	Outbox     = "outbox"
	Clock      = "clock"
)

// DefaultTimeout bounds each check.
const DefaultTimeout = 2 * time.Second

// SkewLimit is the clock difference with PostgreSQL above which the clock
// check warns.
const SkewLimit = 5 * time.Second

// Result is one check's outcome.
type Result struct {
	Check  string `json:"check"`
	Status Status `json:"status"`
	// Detail says what was found, for an operator (hosts and ids, never a
	// password or a presigned URL).
	Detail string `json:"detail"`
	// Hint is a concrete command or setting that fixes a warn or fail.
	Hint string `json:"hint,omitempty"`
	// Reason is the short phrase /readyz shows for a failure: fixed words,
	// never an address, a key or an error text.
	Reason string `json:"-"`
	// Unreachable says the dependency did not answer (an error matching
	// ledger.ErrUnreachable, or the timeout).
	Unreachable bool `json:"unreachable,omitempty"`
}

// Probe is one check: Run answers within the context's deadline.
type Probe struct {
	Name string
	// Needs names a probe that must not fail for this one to run; when it
	// fails this one is reported Skip.
	Needs string
	Run   func(ctx context.Context) Result
}

// Run runs probes concurrently, each bounded by timeout: first those that
// need nothing, then the others whose need did not fail. Results come back
// in the probes' order. A probe that overruns its timeout fails as
// unreachable ("no answer within 2s") without being waited for.
func Run(ctx context.Context, timeout time.Duration, probes []Probe) []Result {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	out := make([]Result, len(probes))
	failed := map[string]bool{}
	for _, wave := range []bool{false, true} {
		var wg sync.WaitGroup
		for i, p := range probes {
			if (p.Needs != "") != wave {
				continue
			}
			if p.Needs != "" && failed[p.Needs] {
				out[i] = Result{Check: p.Name, Status: Skip, Detail: "not checked: " + p.Needs + " failed"}
				continue
			}
			wg.Add(1)
			go func(i int, p Probe) {
				defer wg.Done()
				out[i] = runOne(ctx, timeout, p)
			}(i, p)
		}
		wg.Wait()
		for i, p := range probes {
			if (p.Needs != "") == wave && out[i].Status == Fail {
				failed[p.Name] = true
			}
		}
	}
	return out
}

func runOne(ctx context.Context, timeout time.Duration, p Probe) Result {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan Result, 1)
	go func() { done <- p.Run(cctx) }()
	var r Result
	select {
	case r = <-done:
	case <-cctx.Done():
		r = Result{Status: Fail, Detail: fmt.Sprintf("no answer within %s", timeout)}
	}
	r.Check = p.Name
	if r.Status == Fail && errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		r.Unreachable = true
		r.Reason = "timeout"
		if !strings.Contains(r.Detail, "within") {
			r.Detail = fmt.Sprintf("no answer within %s: %s", timeout, r.Detail)
		}
	}
	if r.Status == Fail && r.Reason == "" {
		r.Reason = "failed"
	}
	return r
}

// Ready reports whether no result failed.
func Ready(rs []Result) bool {
	for _, r := range rs {
		if r.Status == Fail {
			return false
		}
	}
	return true
}

// Adapters opens what the checks look at (app.App does): health is a
// use-case of the adapters app wires, and app builds serve's /readyz from
// it, so it names only what it uses rather than importing app.
type Adapters interface {
	Config() config.Settings
	Store(ctx context.Context) (*postgres.Store, error)
	Authz(ctx context.Context) (authz.Client, error)
	Blob() *blob.Client
}

// Checker runs the checks against an App's adapters.
type Checker struct {
	App Adapters
	// Timeout bounds each check (DefaultTimeout when zero).
	Timeout time.Duration
	// Now is this machine's clock (time.Now when nil).
	Now func() time.Time
}

// Ready runs the dependency checks of /readyz: PostgreSQL, OpenFGA, S3.
func (c *Checker) Ready(ctx context.Context) []Result {
	return Run(ctx, c.Timeout, c.Dependencies())
}

// Doctor runs the dependency checks and, on what answered, whether each
// can do what serve needs (a PostgreSQL write read back and rolled back, a
// put/get/delete of an S3 probe object, a check against the pinned model),
// then the model, migrations, outbox and clock checks.
func (c *Checker) Doctor(ctx context.Context) []Result {
	bc := c.App.Blob()
	return Run(ctx, c.Timeout, append(c.Dependencies(),
		Probe{Name: PostgresWrite, Needs: Postgres, Run: c.postgresWrite},
		Probe{Name: S3Write, Needs: S3, Run: func(ctx context.Context) Result { return c.s3Write(ctx, bc) }},
		Probe{Name: FGACheck, Needs: OpenFGA, Run: c.fgaCheck},
		Probe{Name: Model, Needs: OpenFGA, Run: c.model},
		Probe{Name: Migrations, Needs: Postgres, Run: c.migrations},
		Probe{Name: Outbox, Needs: Postgres, Run: c.outbox},
		Probe{Name: Clock, Needs: Postgres, Run: c.clock},
	))
}

// Dependencies are the three probes of /readyz.
func (c *Checker) Dependencies() []Probe {
	bc := c.App.Blob() // built here: it takes the App's lock, which an opening dependency may hold
	return []Probe{
		{Name: Postgres, Run: c.postgres},
		{Name: OpenFGA, Run: c.openfga},
		{Name: S3, Run: func(ctx context.Context) Result { return c.s3(ctx, bc) }},
	}
}

func (c *Checker) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// failed builds a failing result from err: unreachable when err matches
// ledger.ErrUnreachable (reason "unreachable"), else reason.
func failed(err error, reason, hint, unreachableHint string) Result {
	r := Result{Status: Fail, Detail: oneLine(err.Error()), Reason: reason, Hint: hint}
	if errors.Is(err, ledger.ErrUnreachable) {
		r.Unreachable, r.Reason, r.Hint = true, "unreachable", unreachableHint
	}
	return r
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (c *Checker) postgres(ctx context.Context) Result {
	st, err := c.App.Store(ctx)
	if err == nil {
		var one int
		err = st.Pool.QueryRow(ctx, "SELECT 1").Scan(&one)
		if err != nil && ctx.Err() == nil {
			err = &postgres.UnreachableError{Host: postgres.HostOf(c.App.Config().DatabaseURL), Err: err}
		}
	}
	if err != nil {
		return failed(err, "error", "check DATABASE_URL", "is the stack up? `make stack-up` (local), or check DATABASE_URL")
	}
	return Result{Status: OK, Detail: "SELECT 1 answered at " + postgres.HostOf(c.App.Config().DatabaseURL)}
}

func (c *Checker) openfga(ctx context.Context) Result {
	s := c.App.Config()
	where := authz.Where(s)
	unreachableHint := "is the stack up? `make stack-up`; the embedded OpenFGA keeps its tuples in CAPTURE_LEDGER_FGA_DATASTORE_URI"
	if s.FGAAPIURL != "" {
		unreachableHint = "check CAPTURE_LEDGER_FGA_API_URL and that the OpenFGA server is running"
	}
	cl, err := c.App.Authz(ctx)
	if err != nil {
		return failed(err, "error", "`ledgerctl fga deploy` (creates and migrates the embedded datastore)", unreachableHint)
	}
	storeID, modelID := cl.Target()
	m, err := cl.ReadModel(ctx)
	if err == nil {
		// A read of the datastore itself: the model may come from a cache.
		_, err = cl.ReadTuple(ctx, authz.Tuple{User: authz.User("readyz"), Relation: "member", Object: authz.Organization("readyz")})
	}
	if err != nil {
		if authz.KindOf(err) == authz.KindNotFound || authz.KindOf(err) == authz.KindInvalid {
			return Result{Status: Fail, Reason: "model not found",
				Detail: fmt.Sprintf("%s: model %s not found in store %s: %s", where, modelID, storeID, oneLine(err.Error())),
				Hint:   "`ledgerctl fga deploy` (writes the model and pins CAPTURE_LEDGER_FGA_STORE_ID and _MODEL_ID in .env.local)"}
		}
		return failed(err, "error", "see the detail; `ledgerctl fga deploy` re-pins the store and model", unreachableHint)
	}
	return Result{Status: OK, Detail: fmt.Sprintf("%s: store %s, model %s", where, storeID, m.ID)}
}

func (c *Checker) s3(ctx context.Context, bc *blob.Client) Result {
	bucket := c.App.Config().S3Bucket
	err := bc.HeadBucket(ctx, bucket)
	switch {
	case err == nil:
		return Result{Status: OK, Detail: fmt.Sprintf("bucket %s at %s", bucket, bc.Endpoint())}
	case errors.Is(err, blob.ErrNotFound):
		return Result{Status: Fail, Reason: "bucket not found", Detail: fmt.Sprintf("bucket %s does not exist at %s", bucket, bc.Endpoint()),
			Hint: "create it (`make stack-up` does, locally) or fix CAPTURE_LEDGER_S3_BUCKET"}
	case errors.Is(err, blob.ErrRejected):
		return Result{Status: Fail, Reason: "refused", Detail: fmt.Sprintf("S3 at %s refused HEAD of bucket %s (credentials or permissions)", bc.Endpoint(), bucket),
			Hint: "check CAPTURE_LEDGER_S3_ACCESS_KEY_ID, _SECRET_ACCESS_KEY and the bucket's policy"}
	}
	return failed(err, "error", "check CAPTURE_LEDGER_S3_ENDPOINT", "is the stack up? `make stack-up` (local), or check CAPTURE_LEDGER_S3_ENDPOINT")
}

// model compares the pinned model with the store's latest and with the
// model this binary carries.
func (c *Checker) model(ctx context.Context) Result {
	pinned, err := c.App.Authz(ctx)
	if err != nil {
		return failed(err, "error", "`ledgerctl fga deploy`", "is the stack up? `make stack-up`")
	}
	pm, err := pinned.ReadModel(ctx)
	if err != nil {
		return failed(err, "error", "`ledgerctl fga deploy`", "is the stack up? `make stack-up`")
	}
	s := c.App.Config()
	s.FGAModelID = "" // bound to the store only: ReadModel answers its latest
	latestClient, err := authz.Open(ctx, s, authz.OpenOptions{})
	if err != nil {
		return failed(err, "error", "`ledgerctl fga deploy`", "is the stack up? `make stack-up`")
	}
	defer latestClient.Close()
	latest, err := latestClient.ReadModel(ctx)
	if err != nil {
		return failed(err, "error", "`ledgerctl fga deploy`", "is the stack up? `make stack-up`")
	}
	switch {
	case latest.ID != pm.ID:
		return Result{Status: Warn, Detail: fmt.Sprintf("pinned model %s exists, but the store's latest is %s", pm.ID, latest.ID),
			Hint: "`ledgerctl fga deploy` to pin the latest (then restart serve), or keep the pin on purpose"}
	case !authz.SameModel(pm.DSL, fga.Model):
		return Result{Status: Warn, Detail: fmt.Sprintf("pinned model %s differs from the model this ledgerctl carries (fga/model.fga)", pm.ID),
			Hint: "`ledgerctl fga deploy` (then restart serve)"}
	}
	return Result{Status: OK, Detail: fmt.Sprintf("model %s is the store's latest and matches fga/model.fga", pm.ID)}
}

func (c *Checker) migrations(ctx context.Context) Result {
	m, err := postgres.NewMigrator(ctx, c.App.Config().DatabaseURL)
	if err != nil {
		return failed(err, "error", "check DATABASE_URL", "is the stack up? `make stack-up`")
	}
	defer m.Close()
	st, err := m.Status()
	if err != nil {
		return failed(err, "error", "`ledgerctl migrate status`", "is the stack up? `make stack-up`")
	}
	switch {
	case st.Dirty:
		return Result{Status: Fail, Reason: "dirty", Detail: fmt.Sprintf("schema is dirty at version %d: a migration failed halfway", st.Current),
			Hint: "repair it by hand, then `ledgerctl migrate force VERSION` and `ledgerctl migrate up`"}
	case st.Pending() > 0:
		return Result{Status: Fail, Reason: "pending", Detail: fmt.Sprintf("%d migration(s) pending: at version %d, latest %d", st.Pending(), st.Current, st.Latest),
			Hint: "`ledgerctl migrate up`"}
	case st.Current > st.Latest:
		return Result{Status: Warn, Detail: fmt.Sprintf("schema at version %d is newer than this ledgerctl's latest (%d)", st.Current, st.Latest),
			Hint: "upgrade ledgerctl (`ledgerctl version` shows this one)"}
	}
	return Result{Status: OK, Detail: fmt.Sprintf("schema at version %d (latest), clean", st.Current)}
}

func (c *Checker) outbox(ctx context.Context) Result {
	st, err := c.App.Store(ctx)
	if err != nil {
		return failed(err, "error", "check DATABASE_URL", "is the stack up? `make stack-up`")
	}
	n, err := st.CountOutbox(ctx)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" {
			return Result{Status: Fail, Reason: "no schema", Detail: "the fga_outbox table does not exist", Hint: "`ledgerctl migrate up`"}
		}
		return failed(err, "error", "`ledgerctl drain --status`", "is the stack up? `make stack-up`")
	}
	detail := fmt.Sprintf("pending %d, dead %d", n.Pending, n.Dead)
	if n.Dead > 0 {
		return Result{Status: Warn, Detail: detail + ": dead-lettered tuples never reached OpenFGA",
			Hint: "`ledgerctl drain --status` (then `ledgerctl drain --requeue` once the cause is fixed)"}
	}
	return Result{Status: OK, Detail: detail}
}

// clock compares PostgreSQL's now() with this machine's clock at the middle
// of the round trip.
func (c *Checker) clock(ctx context.Context) Result {
	st, err := c.App.Store(ctx)
	if err != nil {
		return failed(err, "error", "check DATABASE_URL", "is the stack up? `make stack-up`")
	}
	start := c.now()
	var db time.Time
	if err := st.Pool.QueryRow(ctx, "SELECT now()").Scan(&db); err != nil {
		return failed(err, "error", "check DATABASE_URL", "is the stack up? `make stack-up`")
	}
	end := c.now()
	local := start.Add(end.Sub(start) / 2)
	skew := db.Sub(local)
	abs := skew
	if abs < 0 {
		abs = -abs
	}
	detail := fmt.Sprintf("PostgreSQL's clock is %s %s this machine's", abs.Round(time.Millisecond), map[bool]string{true: "ahead of", false: "behind"}[skew >= 0])
	if abs > SkewLimit {
		return Result{Status: Warn, Detail: detail + fmt.Sprintf(" (more than %s: grant expiry and crawl stall times disagree)", SkewLimit),
			Hint: "sync the clocks: `timedatectl set-ntp true` (or your NTP client) here and on the database host"}
	}
	return Result{Status: OK, Detail: detail}
}
