package outbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
)

// counting wraps the real writer and counts every tuple it is asked to
// write, to prove concurrent drainers never deliver a row twice.
type counting struct {
	outbox.Writer
	mu    sync.Mutex
	calls int
	seen  map[ledger.Tuple]int
}

func (c *counting) WriteIdempotent(ctx context.Context, w, d []ledger.Tuple) error {
	c.mu.Lock()
	c.calls++
	for _, t := range w {
		c.seen[t]++
	}
	c.mu.Unlock()
	return c.Writer.WriteIdempotent(ctx, w, d)
}

// queue inserts one outbox row per payload.
func queue(t testing.TB, conn *pgx.Conn, payloads ...[]byte) {
	t.Helper()
	rows := make([][]any, len(payloads))
	for i, p := range payloads {
		rows[i] = []any{p}
	}
	if _, err := conn.CopyFrom(context.Background(), pgx.Identifier{"fga_outbox"}, []string{"payload"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
}

func admission(i int) []byte {
	by := "owner" + fmt.Sprint(i%7)
	b, _ := json.Marshal(ledger.AdmissionTuples(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), fmt.Sprintf("10000000-0000-4000-8000-%012d", i), "acme", &by))
	return b
}

func connect(t testing.TB, dsn string) *pgx.Conn {
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestConcurrentDrainersDeliverEachRowOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t)
	conn := connect(t, env.DSN)
	const n = 1500
	payloads := make([][]byte, n)
	for i := range payloads {
		payloads[i] = admission(i)
	}
	queue(t, conn, payloads...)
	st, w, err := env.App.OutboxDeps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := &counting{Writer: w, seen: map[ledger.Tuple]int{}}
	var wg sync.WaitGroup
	results := make([]outbox.Result, 3)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, err := outbox.Drain(ctx, st, c, outbox.Options{Batch: 100})
			if err != nil {
				t.Error(err)
			}
			results[i] = r
		}(i)
	}
	wg.Wait()
	total := 0
	for _, r := range results {
		total += r.Delivered
	}
	if total != n {
		t.Fatalf("delivered %d rows in all, want %d (%+v)", total, n, results)
	}
	for tu, k := range c.seen {
		// capture_job→archive tuples are unique per row; org→job and owner
		// tuples are unique per task too, so every tuple is sent once.
		if k != 1 {
			t.Fatalf("tuple %v sent %d times", tu, k)
		}
	}
	ok, err := env.FGA.ReadTuple(ctx, authz.Tuple{User: "capture_job:10000000-0000-4000-8000-000000000042", Relation: "parent", Object: "archive:00000000-0000-4000-8000-000000000042"})
	if err != nil || !ok {
		t.Errorf("tuple not in OpenFGA: %v", err)
	}
	var pending int
	_ = conn.QueryRow(ctx, `SELECT count(*) FROM fga_outbox WHERE processed_at IS NULL`).Scan(&pending)
	if pending != 0 {
		t.Errorf("%d rows still pending", pending)
	}
}

func TestFailuresBackOffThenDeadLetter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t)
	conn := connect(t, env.DSN)
	// A relation the model does not have: OpenFGA refuses it every time.
	queue(t, conn, []byte(`{"writes":[{"user":"user:x","relation":"frobnicator","object":"archive:a"}]}`), admission(1))
	st, w, _ := env.App.OutboxDeps(ctx)
	opts := outbox.Options{MaxAttempts: 3, BaseBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}
	r, err := outbox.Drain(ctx, st, w, opts)
	if err != nil || r.Delivered != 1 || r.Failed != 1 || r.Dead != 0 {
		t.Fatalf("first drain: %+v %v", r, err)
	}
	var attempts int
	var next time.Time
	var lastErr string
	_ = conn.QueryRow(ctx, `SELECT attempts, next_attempt_at, last_error FROM fga_outbox WHERE id = 1`).Scan(&attempts, &next, &lastErr)
	if attempts != 1 || lastErr == "" {
		t.Errorf("after one failure: attempts %d, error %q", attempts, lastErr)
	}
	for i := 0; i < 2; i++ {
		time.Sleep(10 * time.Millisecond)
		if r, err = outbox.Drain(ctx, st, w, opts); err != nil {
			t.Fatal(err)
		}
	}
	if r.Dead != 1 {
		t.Errorf("third failure: %+v, want dead", r)
	}
	dead, err := st.(*postgres.Store).DeadOutbox(ctx, 10)
	if err != nil || len(dead) != 1 || dead[0].Attempts != 3 || dead[0].LastError == "" {
		t.Fatalf("dead rows %+v %v", dead, err)
	}
	// A dead row is never retried.
	if r, _ := outbox.Drain(ctx, st, w, opts); r != (outbox.Result{}) {
		t.Errorf("dead row retried: %+v", r)
	}
}

func TestBackoffGrows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		attempts int
		want     time.Duration
	}{{0, 5 * time.Second}, {1, 10 * time.Second}, {3, 40 * time.Second}, {20, time.Hour}} {
		if got := outbox.Backoff(tc.attempts, 5*time.Second, time.Hour); got != tc.want {
			t.Errorf("Backoff(%d) = %v, want %v", tc.attempts, got, tc.want)
		}
	}
}

func TestDeletesAreNotMergedWithEarlierWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t)
	conn := connect(t, env.DSN)
	grant := []byte(`{"writes":[{"user":"user:eve","relation":"submitter","object":"organization:acme"}]}`)
	revoke := []byte(`{"deletes":[{"user":"user:eve","relation":"submitter","object":"organization:acme"}]}`)
	queue(t, conn, grant, admission(2), revoke, admission(3))
	st, w, _ := env.App.OutboxDeps(ctx)
	// The grant was closed when the revoke was queued (the newer intent for
	// the same tuple supersedes it): three rows are sent, four are done.
	if r, err := outbox.Drain(ctx, st, w, outbox.Options{}); err != nil || r.Delivered != 3 {
		t.Fatalf("%+v %v", r, err)
	}
	var pending int
	_ = conn.QueryRow(ctx, `SELECT count(*) FROM fga_outbox WHERE processed_at IS NULL`).Scan(&pending)
	if pending != 0 {
		t.Errorf("%d rows still pending", pending)
	}
	// Order kept: granted, then revoked.
	if ok, _ := env.FGA.ReadTuple(ctx, authz.Tuple{User: "user:eve", Relation: "submitter", Object: "organization:acme"}); ok {
		t.Error("the revoke was applied before the grant")
	}
}
