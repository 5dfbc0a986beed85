package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// BenchmarkRecordSources: recording the grantees of 500 archives just
// inserted in the same transaction (each job's organization and owner), as
// a level's admission does, next to the same call told of no new archive —
// which marks each one to be indexed again, writing its row a second time
// (what the admission did before). Alternating, each in a transaction
// rolled back; only the call is timed.
func BenchmarkRecordSources(b *testing.B) {
	ctx := context.Background()
	pool, err := postgres.Open(ctx, testenv.Database(b), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	const n = 500
	alice := "alice"
	once := func(fresh bool) time.Duration {
		tx, err := pool.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		tasks := make([]string, n)
		for i := range tasks {
			tasks[i] = uuid.NewString()
		}
		rows, err := tx.Query(ctx, `INSERT INTO archives (task_id, bucket, object_key, source_url, captured_at)
			SELECT t, 'b', t::text || '.wacz', 'https://e/' || t::text, now() FROM unnest($1::uuid[]) t RETURNING id::text, task_id::text`, tasks)
		if err != nil {
			b.Fatal(err)
		}
		type row struct{ ID, Task string }
		ins, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
		if err != nil || len(ins) != n {
			b.Fatal(len(ins), err)
		}
		payloads, ids := make([]ledger.OutboxPayload, n), make([]string, n)
		for i, r := range ins {
			payloads[i], ids[i] = ledger.AdmissionTuples(r.ID, r.Task, "acme", &alice), r.ID
		}
		if !fresh {
			ids = []string{}
		}
		start := time.Now()
		if err := postgres.RecordSources(ctx, tx, payloads, ids); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		var sources int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM archive_sources`).Scan(&sources); err != nil || sources != 2*n {
			b.Fatalf("%d sources recorded, want %d (%v)", sources, 2*n, err)
		}
		return took
	}
	once(true) // the statements' first parse, outside the timing
	once(false)
	b.ResetTimer()
	var with, without time.Duration
	for i := range b.N {
		for k := range 2 {
			if (i+k)%2 == 0 {
				with += once(true)
			} else {
				without += once(false)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(with.Microseconds())/float64(b.N*n), "µs/archive")
	b.ReportMetric(float64(without.Microseconds())/float64(b.N*n), "rewritten-µs/archive")
	b.ReportMetric(without.Seconds()/with.Seconds(), "rewritten/now-x")
}
