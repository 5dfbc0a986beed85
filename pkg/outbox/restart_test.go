package outbox_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/authz/authztest"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// stopAfter forwards to the real writer, but stops the OpenFGA server just
// before call number n, so that call and the ones after it find it gone.
type stopAfter struct {
	outbox.Writer
	n     int32
	calls atomic.Int32
	stop  func()
}

func (s *stopAfter) WriteIdempotent(ctx context.Context, w, d []ledger.Tuple) error {
	if s.calls.Add(1) == s.n {
		s.stop()
	}
	return s.Writer.WriteIdempotent(ctx, w, d)
}

// TestDrainAcrossAnOpenFGARestart queues rows (some of whose tuples are
// already in OpenFGA, one of which is malformed), stops OpenFGA partway
// through the drain, restarts it, drains again, and then compares OpenFGA's
// stored tuples with what was intended, exactly.
func TestDrainAcrossAnOpenFGARestart(t *testing.T) {
	t.Parallel()
	// 2,000 rows, OpenFGA stopped at its 30th write: about half delivered
	// before the stop, as at the 10,000-row scale of
	// BenchmarkDrainTenThousandAcrossAnOpenFGARestart.
	drainAcrossRestart(t, 2000, 30)
}

// BenchmarkDrainTenThousandAcrossAnOpenFGARestart is the same property at
// 10,000 rows (OpenFGA stopped at its 150th write); it runs once whatever
// b.N is, and is a benchmark only because it is slow.
func BenchmarkDrainTenThousandAcrossAnOpenFGARestart(b *testing.B) {
	drainAcrossRestart(b, 10000, 150)
}

func drainAcrossRestart(t testing.TB, n int, stopAt int32) {
	ctx := context.Background()
	env := apptest.New(t)
	conn := connect(t, env.DSN)

	fgaDB := testenv.EmptyDatabase(t)
	if err := authz.PreparePostgres(ctx, fgaDB); err != nil {
		t.Fatal(err)
	}
	srv := authztest.StartServerWith(t, authztest.ServerOptions{DatastoreURI: fgaDB})
	remote, err := authz.NewRemote(authz.RemoteOptions{URL: srv.URL, Token: srv.Key})
	if err != nil {
		t.Fatal(err)
	}
	storeID, err := remote.FindOrCreateStore(ctx, "drain-test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remote.WriteModel(ctx, fga.Model); err != nil {
		t.Fatal(err)
	}

	want := map[ledger.Tuple]bool{}
	var already []authz.Tuple
	payloads := make([][]byte, 0, n)
	for i := 0; i < n; i++ {
		if i == n/2 {
			payloads = append(payloads, []byte(`{"writes":[{"user":"user:x","relation":"owner"}]}`)) // malformed
			continue
		}
		raw := admission(i)
		payloads = append(payloads, raw)
		p, _ := ledger.ParseOutboxPayload(raw)
		for _, tu := range p.Writes {
			want[tu] = true
		}
		if i%10 == 0 { // already in OpenFGA before the drain
			already = append(already, toAuthz(p.Writes)...)
		}
	}
	for len(already) > 0 { // in writes of at most 100 tuples, OpenFGA's limit
		k := min(len(already), 100)
		if err := remote.Write(ctx, already[:k], nil); err != nil {
			t.Fatal(err)
		}
		already = already[k:]
	}
	queue(t, conn, payloads...)

	st, _, err := env.App.OutboxDeps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := &stopAfter{Writer: app.OutboxWriter{Client: remote}, n: stopAt, stop: srv.Stop}
	first, err := outbox.Drain(ctx, st, w, outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if first.Unreachable == "" || first.Delivered == 0 || first.Delivered >= n-1 {
		t.Fatalf("first drain should stop partway, unreachable: %+v", first)
	}
	// The rows left behind are untouched: pending, never attempted.
	var pending, attempted int
	_ = conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE attempts > 0) FROM fga_outbox WHERE processed_at IS NULL AND dead_at IS NULL`).Scan(&pending, &attempted)
	if pending == 0 || attempted != 0 {
		t.Fatalf("after the stop: %d pending, %d of them attempted (want untouched)", pending, attempted)
	}

	srv.Start()
	second, err := outbox.Drain(ctx, st, app.OutboxWriter{Client: remote}, outbox.Options{})
	if err != nil || second.Unreachable != "" {
		t.Fatalf("second drain: %+v %v", second, err)
	}
	if got := first.Delivered + second.Delivered; got != n-1 {
		t.Errorf("delivered %d good rows, want %d", got, n-1)
	}
	if first.Dead+second.Dead != 1 {
		t.Errorf("dead-lettered %d rows, want the malformed one", first.Dead+second.Dead)
	}
	var delivered, dead int
	var deadErr string
	_ = conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE processed_at IS NOT NULL), count(*) FILTER (WHERE dead_at IS NOT NULL), coalesce(max(last_error) FILTER (WHERE dead_at IS NOT NULL), '') FROM fga_outbox`).Scan(&delivered, &dead, &deadErr)
	if delivered != n-1 || dead != 1 || deadErr == "" {
		t.Errorf("outbox: %d delivered, %d dead (%q)", delivered, dead, deadErr)
	}

	// OpenFGA holds exactly the intended tuples: none missing, none extra.
	fgaConn, err := pgx.Connect(ctx, fgaDB)
	if err != nil {
		t.Fatal(err)
	}
	defer fgaConn.Close(ctx)
	rows, err := fgaConn.Query(ctx, `SELECT _user, relation, object_type || ':' || object_id FROM tuple WHERE store = $1`, storeID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[ledger.Tuple]bool{}
	for rows.Next() {
		var tu ledger.Tuple
		if err := rows.Scan(&tu.User, &tu.Relation, &tu.Object); err != nil {
			t.Fatal(err)
		}
		got[tu] = true
	}
	if len(got) != len(want) {
		t.Errorf("OpenFGA holds %d tuples, want %d", len(got), len(want))
	}
	for tu := range want {
		if !got[tu] {
			t.Errorf("missing %v", tu)
			break
		}
	}
	b, _ := json.Marshal(first)
	t.Logf("first drain %s; second drain delivered %d", b, second.Delivered)
}

func toAuthz(ts []ledger.Tuple) []authz.Tuple {
	out := make([]authz.Tuple, len(ts))
	for i, t := range ts {
		out[i] = authz.Tuple{User: t.User, Relation: t.Relation, Object: t.Object}
	}
	return out
}
