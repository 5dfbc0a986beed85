package cmdutil_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
)

// TestDeliverAlongsideServe: a command's Deliver says what happened to the
// permissions it queued — delivered by itself, or by a running serve that
// took the rows first (serve's drainer wakes as they are committed), in
// which case it waits for that serve to finish them rather than claiming
// they are in OpenFGA while they are still on their way.
func TestDeliverAlongsideServe(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	ctx := context.Background()
	st, err := env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	queue := func(user string) {
		t.Helper()
		if _, err := st.Pool.Exec(ctx, `INSERT INTO fga_outbox (payload) VALUES ($1::jsonb)`,
			`{"writes":[{"user":"user:`+user+`","relation":"submitter","object":"organization:acme"}]}`); err != nil {
			t.Fatal(err)
		}
	}

	// Nobody else drains: the command delivers its row itself.
	queue("alice")
	var errw bytes.Buffer
	cmdutil.Deliver(ctx, env.App, &errw, i18n.English)
	if got := errw.String(); !strings.Contains(got, "their permissions are in OpenFGA (1 row(s) delivered)") {
		t.Errorf("delivered by the command: %q", got)
	}
	// The same, said in Japanese.
	queue("carol")
	errw.Reset()
	cmdutil.Deliver(ctx, env.App, &errw, i18n.Japanese)
	if got := errw.String(); got != "権限は OpenFGA に入りました（1 行を配送）。許された人はもう一覧で見て開けます\n" {
		t.Errorf("delivered by the command, in Japanese: %q", got)
	}

	// A serve took the row first and delivers it 300 ms later.
	queue("bob")
	rows, err := st.ClaimOutbox(ctx, 0, 10, time.Minute)
	if err != nil || len(rows) != 1 {
		t.Fatalf("the serve's claim: %v %v", rows, err)
	}
	done := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		done <- st.MarkDelivered(ctx, []int64{rows[0].ID})
	}()
	errw.Reset()
	start := time.Now()
	cmdutil.Deliver(ctx, env.App, &errw, i18n.English)
	took := time.Since(start)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := errw.String(); !strings.Contains(got, "no permission is left to deliver (a running serve delivers them as they are queued)") {
		t.Errorf("delivered by a serve: %q", got)
	}
	if took < 300*time.Millisecond {
		t.Errorf("Deliver answered after %v, before the serve had delivered the row", took)
	}

	// A serve holds an older row of the same tuple as the command's: the
	// command's row waits for it (a tuple's intents are sent in order), and
	// is the command's to deliver once the serve has marked the older one.
	queue("dave")
	if rows, err = st.ClaimOutbox(ctx, 0, 10, time.Minute); err != nil || len(rows) != 1 {
		t.Fatalf("the serve's claim of dave's row: %v %v", rows, err)
	}
	queue("dave")
	go func() {
		time.Sleep(200 * time.Millisecond)
		done <- st.MarkDelivered(ctx, []int64{rows[0].ID})
	}()
	errw.Reset()
	cmdutil.Deliver(ctx, env.App, &errw, i18n.English)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := errw.String(); !strings.Contains(got, "their permissions are in OpenFGA (1 row(s) delivered)") {
		t.Errorf("behind a serve's older row of the same tuple: %q", got)
	}

	// A serve took the row and failed to deliver it (it is retried
	// later): Deliver says it is not delivered yet.
	queue("carol")
	if rows, err = st.ClaimOutbox(ctx, 0, 10, time.Minute); err != nil || len(rows) != 1 {
		t.Fatalf("the serve's second claim: %v %v", rows, err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		done <- st.MarkFailed(ctx, rows[0].ID, "OpenFGA unreachable", time.Minute, false)
	}()
	errw.Reset()
	cmdutil.Deliver(ctx, env.App, &errw, i18n.English)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := errw.String(); !strings.Contains(got, "1 permission row(s) are not delivered yet (they are retried)") {
		t.Errorf("failed by a serve: %q", got)
	}
}
