package outbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// BenchmarkDrainVsDirectWrite measures, in the same run, the drain's
// throughput and its limit: the same number of tuples written straight to
// OpenFGA (embedded, Postgres datastore) in batches of 100, with no outbox.
//
//	go test ./pkg/outbox -run '^$' -bench DrainVsDirectWrite -benchtime 5x
func BenchmarkDrainVsDirectWrite(b *testing.B) {
	ctx := context.Background()
	env := apptest.New(b)
	conn := connect(b, env.DSN)
	fgaDB := testenv.EmptyDatabase(b)
	if err := authz.PreparePostgres(ctx, fgaDB); err != nil {
		b.Fatal(err)
	}
	client, err := authz.NewPostgres(ctx, fgaDB, authz.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	if _, err := client.FindOrCreateStore(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	if _, err := client.WriteModel(ctx, fga.Model); err != nil {
		b.Fatal(err)
	}
	st, _, err := env.App.OutboxDeps(ctx)
	if err != nil {
		b.Fatal(err)
	}
	w := app.OutboxWriter{Client: client}

	const rows = 3000 // 9,000 tuples per iteration
	payload := func(i int) ledger.OutboxPayload {
		by := fmt.Sprintf("user%d", i%50)
		return ledger.AdmissionTuples(fmt.Sprintf("a%09d-0000-4000-8000-000000000000", i), fmt.Sprintf("b%09d-0000-4000-8000-000000000000", i), "acme", &by)
	}
	var drainDur, directDur time.Duration
	tuples := 0
	next := 0
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		raws := make([][]byte, rows)
		for i := range raws {
			raws[i], _ = json.Marshal(payload(next + i))
		}
		queue(b, conn, raws...)
		b.StartTimer()

		t0 := time.Now()
		res, err := outbox.Drain(ctx, st, w, outbox.Options{})
		drainDur += time.Since(t0)
		if err != nil || res.Delivered != rows {
			b.Fatalf("drain: %+v %v", res, err)
		}
		next += rows

		// The limit: fresh tuples of the same shape and number, in batches of 100.
		var batch []authz.Tuple
		t1 := time.Now()
		for i := 0; i < rows; i++ {
			batch = append(batch, toAuthz(payload(next+i).Writes)...)
			if len(batch) >= 99 || i == rows-1 {
				if err := client.Write(ctx, batch, nil); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		directDur += time.Since(t1)
		next += rows
		tuples += 3 * rows
	}
	drainRate := float64(tuples) / drainDur.Seconds()
	directRate := float64(tuples) / directDur.Seconds()
	b.ReportMetric(drainRate, "drain_tuples/s")
	b.ReportMetric(directRate, "direct_tuples/s")
	b.ReportMetric(directRate/drainRate, "drain_slowdown_x")
	b.Logf("drain %.0f tuples/s, direct writes %.0f tuples/s, drain takes %.2fx the limit (%d tuples)", drainRate, directRate, directRate/drainRate, tuples)
}
