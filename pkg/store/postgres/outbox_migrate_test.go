package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestOutboxOrderBackfill: migration 9 treats the rows queued before it as
// if queued now — the newest undelivered row naming a tuple keeps it, older
// ones (pending or dead) give it up, and a row left with nothing is closed —
// and the rows queued after it continue from there.
func TestOutboxOrderBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.EmptyDatabase(t)
	m, err := postgres.NewMigrator(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Up(); err != nil {
		t.Fatal(err)
	}
	for st, _ := m.Status(); st.Current > 8; st, _ = m.Status() {
		if err := m.Down(); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	const dan = `{"user":"user:dan","relation":"viewer","object":"archive:a"}`
	const erin = `{"user":"user:erin","relation":"viewer","object":"archive:a"}`
	for _, r := range []struct{ payload, state string }{
		{`{"writes":[` + dan + `]}`, "delivered"},         // 1
		{`{"writes":[` + dan + `,` + erin + `]}`, "dead"}, // 2: keeps erin
		{`{"deletes":[` + dan + `]}`, "pending"},          // 3: superseded by 4
		{`{"writes":[` + dan + `]}`, "pending"},           // 4: the latest for dan
		{`"not an object"`, "pending"},                    // 5: malformed, left to the drain
	} {
		if _, err := conn.Exec(ctx, `INSERT INTO fga_outbox (payload, processed_at, dead_at) VALUES ($1::jsonb,
			CASE WHEN $2 = 'delivered' THEN now() END, CASE WHEN $2 = 'dead' THEN now() END)`, r.payload, r.state); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Up(); err != nil {
		t.Fatal(err)
	}
	type row struct {
		processed, dead bool
		superseded      int
	}
	read := func(id int) row {
		t.Helper()
		var r row
		if err := conn.QueryRow(ctx, `SELECT processed_at IS NOT NULL, dead_at IS NOT NULL, cardinality(superseded_keys) FROM fga_outbox WHERE id = $1`, id).Scan(&r.processed, &r.dead, &r.superseded); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for id, want := range map[int]row{1: {true, false, 0}, 2: {false, true, 1}, 3: {true, false, 1}, 4: {false, false, 0}, 5: {false, false, 0}} {
		if got := read(id); got != want {
			t.Errorf("row %d after the migration: %+v, want %+v", id, got, want)
		}
	}
	// Queued after it: a revoke of erin closes the dead row 2 for good, and
	// a revoke of dan closes row 4.
	if _, err := conn.Exec(ctx, `INSERT INTO fga_outbox (payload) VALUES ($1::jsonb), ($2::jsonb)`, `{"deletes":[`+erin+`]}`, `{"deletes":[`+dan+`]}`); err != nil {
		t.Fatal(err)
	}
	if got := read(2); !got.processed || got.dead || got.superseded != 2 {
		t.Errorf("row 2 after erin's revoke: %+v, want closed", got)
	}
	if got := read(4); !got.processed {
		t.Errorf("row 4 after dan's revoke: %+v, want closed", got)
	}
}
