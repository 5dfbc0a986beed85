package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// faulty forwards to the real writer but fails as told: before sending
// (nothing reached OpenFGA), after sending (it did, the answer was lost),
// or as an unreachable OpenFGA from call number down onwards.
type faulty struct {
	outbox.Writer
	rng         *rand.Rand
	before      float64 // chance a call fails before it is sent
	after       float64 // chance a call fails after it was applied
	down, calls int
}

func (f *faulty) WriteIdempotent(ctx context.Context, w, d []ledger.Tuple) error {
	f.calls++
	if f.down > 0 && f.calls >= f.down {
		return &outbox.UnreachableError{URL: "injected", Err: errors.New("injected: OpenFGA went away")}
	}
	if f.rng.Float64() < f.before {
		return errors.New("injected: write refused")
	}
	if err := f.Writer.WriteIdempotent(ctx, w, d); err != nil {
		return err
	}
	if f.rng.Float64() < f.after {
		return errors.New("injected: the answer was lost")
	}
	return nil
}

// key is a tuple without its condition: what OpenFGA keys a tuple by.
func key(t ledger.Tuple) ledger.Tuple { t.Condition = nil; return t }

// orderWorld is the ledger, the OpenFGA it feeds (embedded, on a PostgreSQL
// datastore that can be stopped and restarted), and the intent the test
// computes from what the ledger accepted.
type orderWorld struct {
	t       *testing.T
	ctx     context.Context
	st      *postgres.Store
	fgaDB   string
	outage  *testenv.Outage
	client  *authz.Embedded
	storeID string
	modelID string
	now     time.Time
	rng     *rand.Rand
	// intent is the ledger's latest intent per tuple: the tuple (with its
	// condition) when it should be stored, nil when it should not.
	intent   map[ledger.Tuple]*ledger.Tuple
	archives []liveArchive
	down     bool
	log      []string
}

type liveArchive struct{ id, task, owner string }

func newOrderWorld(t *testing.T, seed uint64) *orderWorld {
	ctx := context.Background()
	env := apptest.New(t)
	st, err := env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := &orderWorld{t: t, ctx: ctx, st: st, fgaDB: testenv.EmptyDatabase(t), now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC),
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), intent: map[ledger.Tuple]*ledger.Tuple{}}
	if err := authz.PreparePostgres(ctx, w.fgaDB); err != nil {
		t.Fatal(err)
	}
	w.outage = testenv.NewOutage(t, w.fgaDB)
	w.open()
	if w.storeID, err = w.client.FindOrCreateStore(ctx, "order"); err != nil {
		t.Fatal(err)
	}
	if w.modelID, err = w.client.WriteModel(ctx, fga.Model); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.client.Close() })
	return w
}

// open starts (or restarts) the embedded OpenFGA on the datastore.
func (w *orderWorld) open() {
	if w.client != nil {
		_ = w.client.Close()
	}
	c, err := authz.NewPostgres(w.ctx, w.fgaDB, authz.Options{StoreID: w.storeID, ModelID: w.modelID})
	if err != nil {
		w.t.Fatal(err)
	}
	w.client = c
}

func (w *orderWorld) note(format string, a ...any) { w.log = append(w.log, fmt.Sprintf(format, a...)) }

func (w *orderWorld) admit() {
	task := uuid.NewString()
	owner := []string{"alice", "bob"}[w.rng.IntN(2)]
	var p ledger.OutboxPayload
	id, _, err := w.st.InsertArchive(w.ctx, ledger.NewArchive{TaskID: task, Bucket: "b", ObjectKey: "k/" + task + ".wacz", SourceURL: "https://e.com/" + task, CapturedAt: w.now},
		func(id string) ledger.OutboxPayload {
			p = ledger.AdmissionTuples(id, task, "acme", &owner)
			return p
		})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, t := range p.Writes {
		w.intent[key(t)] = &t
	}
	w.archives = append(w.archives, liveArchive{id, task, owner})
	w.note("admit %s", id[:8])
}

func (w *orderWorld) grant() {
	if len(w.archives) == 0 {
		return
	}
	a := w.archives[w.rng.IntN(len(w.archives))]
	g := ledger.Grantee{Type: ledger.GranteeUser, ID: []string{"dan", "erin"}[w.rng.IntN(2)]}
	d := time.Duration(1+w.rng.IntN(72)) * time.Hour
	at := w.now.Truncate(time.Second)
	tu := ledger.ShareTuple(a.id, g, at, d)
	_, _, err := w.st.GrantShare(w.ctx, ledger.NewShare{ArchiveID: a.id, Grantee: g, GrantedBy: a.owner, GrantedAt: at, Duration: d},
		ledger.OutboxPayload{Writes: []ledger.Tuple{tu}}, ledger.OutboxPayload{Deletes: []ledger.Tuple{key(tu)}})
	if err != nil {
		w.t.Fatal(err)
	}
	w.intent[key(tu)] = &tu
	w.note("grant %s to %s for %v", a.id[:8], g.ID, d)
}

func (w *orderWorld) revoke() {
	if len(w.archives) == 0 {
		return
	}
	a := w.archives[w.rng.IntN(len(w.archives))]
	rows, err := w.st.Shares(w.ctx, a.id)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, r := range rows {
		if r.RevokedAt != nil {
			continue
		}
		_, changed, err := w.st.RevokeShare(w.ctx, r.ID, a.owner, w.now, func(r ledger.ShareRow) ledger.OutboxPayload {
			return ledger.OutboxPayload{Deletes: []ledger.Tuple{ledger.ShareTupleKey(r.ArchiveID, r.Grantee)}}
		})
		if err != nil || !changed {
			w.t.Fatalf("revoke: %v %v", changed, err)
		}
		w.intent[ledger.ShareTupleKey(a.id, r.Grantee)] = nil
		w.note("revoke %s of %s", a.id[:8], r.Grantee.ID)
		return
	}
}

// remove deletes an archive from the ledger, queueing the deletes of every
// tuple written for it, as the Deleter plans them.
func (w *orderWorld) remove() {
	if len(w.archives) == 0 {
		return
	}
	i := w.rng.IntN(len(w.archives))
	a := w.archives[i]
	var tuples []ledger.Tuple
	_, created, err := w.st.TombstoneArchive(w.ctx, a.id, "alice", w.now, func(d ledger.DeletingArchive) (ledger.DeletePlan, error) {
		tuples = append(tuples, ledger.AdmissionTuples(a.id, a.task, "acme", &a.owner).Writes...)
		for _, sh := range d.Shares {
			tuples = append(tuples, ledger.ShareTupleKey(a.id, sh.Grantee))
		}
		return ledger.DeletePlan{ObjectKeys: []string{"k/" + a.task + ".wacz"}, Tuples: tuples}, nil
	})
	if err != nil || !created {
		w.t.Fatalf("delete: %v %v", created, err)
	}
	for _, t := range tuples {
		w.intent[key(t)] = nil
	}
	w.archives = append(w.archives[:i], w.archives[i+1:]...)
	w.note("delete %s", a.id[:8])
}

// role is `ledgerctl fga grant|revoke`: written straight to OpenFGA, and
// only an intent when it succeeded.
func (w *orderWorld) role() {
	rel := []string{"submitter", "admin"}[w.rng.IntN(2)]
	subject := []string{"zed", "yan"}[w.rng.IntN(2)]
	t := ledger.Tuple{User: "user:" + subject, Relation: rel, Object: "organization:acme"}
	var err error
	if w.rng.IntN(2) == 0 {
		_, err = authz.Grant(w.ctx, w.client, rel, subject, "acme")
		if err == nil {
			w.intent[t] = &t
		}
	} else {
		_, err = authz.Revoke(w.ctx, w.client, rel, subject, "acme")
		if err == nil {
			w.intent[t] = nil
		}
	}
	w.note("fga %s %s: %v", rel, subject, err)
}

// drain runs one drain under a random mishap.
func (w *orderWorld) drain() {
	f := &faulty{Writer: app.OutboxWriter{Client: w.client}, rng: w.rng}
	mishap := "none"
	switch w.rng.IntN(6) {
	case 0:
		f.before, mishap = 0.3, "write failures"
	case 1:
		f.after, mishap = 0.3, "lost answers"
	case 2:
		f.down, mishap = 1+w.rng.IntN(3), "OpenFGA going away"
	case 3:
		w.outage.Stop()
		w.down, mishap = true, "datastore down"
	case 4:
		w.open()
		f.Writer, mishap = app.OutboxWriter{Client: w.client}, "OpenFGA restarted"
	}
	opts := outbox.Options{MaxAttempts: 3, Batch: 1 + w.rng.IntN(8), BaseBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}
	res, err := outbox.Drain(w.ctx, w.st, f, opts)
	if err != nil {
		w.t.Fatalf("drain: %v", err)
	}
	w.note("drain (%s): %+v", mishap, res)
	if w.down {
		w.outage.Start()
		w.down = false
	}
	if w.rng.IntN(4) == 0 { // someone requeues the dead letters
		n, err := w.st.RequeueDead(w.ctx, nil)
		if err != nil {
			w.t.Fatal(err)
		}
		w.note("requeued %d dead rows", n)
	}
	time.Sleep(5 * time.Millisecond) // the back-off passes
	w.checkRevoked()
}

// checkRevoked: a share whose revoke (the latest intent for its tuple) has
// been delivered never checks true.
func (w *orderWorld) checkRevoked() {
	for k, v := range w.intent {
		if v != nil || k.Relation != "viewer" {
			continue
		}
		del, _ := json.Marshal(map[string]any{"deletes": []ledger.Tuple{k}})
		var delivered bool
		err := w.st.Pool.QueryRow(w.ctx, `SELECT processed_at IS NOT NULL FROM fga_outbox WHERE payload @> $1::jsonb ORDER BY id DESC LIMIT 1`, string(del)).Scan(&delivered)
		if err != nil {
			w.t.Fatal(err)
		}
		if !delivered {
			continue
		}
		user, _ := strings.CutPrefix(k.User, "user:")
		id, _ := strings.CutPrefix(k.Object, "archive:")
		ok, err := w.check(authz.ArchiveCheck(user, nil, id, w.now))
		if err != nil {
			w.t.Fatal(err)
		}
		if ok {
			w.t.Fatalf("%s checks true after its revoke was delivered\n%s", k, strings.Join(w.log, "\n"))
		}
	}
}

// check asks OpenFGA, a few times: right after its datastore came back, a
// connection the outage ended may fail one call.
func (w *orderWorld) check(req authz.CheckRequest) (ok bool, err error) {
	for range 5 {
		if ok, err = w.client.Check(w.ctx, req); err == nil {
			return ok, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false, err
}

// settle drains with nothing failing (dead letters requeued) until the
// outbox is empty.
func (w *orderWorld) settle() {
	for i := 0; ; i++ {
		if _, err := w.st.RequeueDead(w.ctx, nil); err != nil {
			w.t.Fatal(err)
		}
		res, err := outbox.Drain(w.ctx, w.st, app.OutboxWriter{Client: w.client}, outbox.Options{MaxAttempts: 3, BaseBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond})
		if err != nil || res.Unreachable != "" {
			w.t.Fatalf("settling drain: %+v %v", res, err)
		}
		c, err := w.st.CountOutbox(w.ctx)
		if err != nil {
			w.t.Fatal(err)
		}
		if c.Pending+c.Dead == 0 {
			return
		}
		if i == 50 {
			w.t.Fatalf("the outbox does not settle: %+v", c)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// compare: OpenFGA holds exactly the intended tuples, conditions included.
func (w *orderWorld) compare() {
	got := map[ledger.Tuple]authz.Tuple{}
	token := ""
	for {
		ts, next, err := w.client.ReadTuples(w.ctx, token)
		if err != nil {
			w.t.Fatal(err)
		}
		for _, t := range ts {
			got[ledger.Tuple{User: t.User, Relation: t.Relation, Object: t.Object}] = t
		}
		if token = next; token == "" {
			break
		}
	}
	var bad []string
	for k, want := range w.intent {
		have, ok := got[k]
		switch {
		case want == nil && ok:
			bad = append(bad, fmt.Sprintf("%s is in OpenFGA, the ledger's intent is absent", k))
		case want != nil && !ok:
			bad = append(bad, fmt.Sprintf("%s is missing from OpenFGA", k))
		case want != nil && want.Condition != nil && (have.Condition == nil ||
			fmt.Sprint(have.Condition.Context["grant_time"], have.Condition.Context["grant_duration"]) != fmt.Sprint(want.Condition.Context["grant_time"], want.Condition.Context["grant_duration"])):
			bad = append(bad, fmt.Sprintf("%s has condition %+v, the ledger's intent is %+v", k, have.Condition, want.Condition))
		}
		delete(got, k)
	}
	for k := range got {
		bad = append(bad, fmt.Sprintf("%s is in OpenFGA, the ledger never intended it", k))
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		w.t.Fatalf("after the last drain OpenFGA differs from the ledger:\n%s\nhistory:\n%s", strings.Join(bad, "\n"), strings.Join(w.log, "\n"))
	}
}

// TestLatestIntentWinsWhateverFails runs random interleavings of admissions,
// share grants, revokes, expiry (the clock moving on), archive deletions and
// `fga grant|revoke`, with drains that meet write failures, lost answers,
// OpenFGA going away or restarting and its datastore stopped; then, after
// the last drain, OpenFGA holds exactly the ledger's latest intent for every
// tuple, and no revoked share ever checked true once its revoke was
// delivered.
func TestLatestIntentWinsWhateverFails(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			w := newOrderWorld(t, seed)
			for step := 0; step < 80; step++ {
				switch r := w.rng.IntN(100); {
				case r < 12:
					w.admit()
				case r < 40:
					w.grant()
				case r < 55:
					w.revoke()
				case r < 60:
					w.remove()
				case r < 66:
					w.role()
				case r < 70:
					w.now = w.now.Add(time.Duration(1+w.rng.IntN(48)) * time.Hour) // shares expire
				default:
					w.drain()
				}
			}
			w.settle()
			w.checkRevoked()
			w.compare()
		})
	}
}

// TestNewerIntentClosesOlderRows: queueing a row closes the tuples older
// undelivered rows (pending or dead) hold for the same tuples; a requeued
// dead row delivers only what it still holds; a row is not leased while an
// older row naming one of its tuples is in flight.
func TestNewerIntentClosesOlderRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t)
	conn := connect(t, env.DSN)
	st, _, err := env.App.OutboxDeps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pg := st.(*postgres.Store)
	state := func(id int64) (processed, dead bool, superseded []string) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT processed_at IS NOT NULL, dead_at IS NOT NULL, superseded_keys FROM fga_outbox WHERE id = $1`, id).Scan(&processed, &dead, &superseded); err != nil {
			t.Fatal(err)
		}
		return
	}
	// 1: a dead row writing two tuples; 2: a pending row writing one of them.
	queue(t, conn,
		[]byte(`{"writes":[{"user":"user:dan","relation":"viewer","object":"archive:a"},{"user":"user:erin","relation":"viewer","object":"archive:a"}]}`),
		[]byte(`{"writes":[{"user":"user:fay","relation":"viewer","object":"archive:a"}]}`))
	if _, err := conn.Exec(ctx, `UPDATE fga_outbox SET dead_at = now(), attempts = 10 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	// 3: dan's share is revoked; 4: fay's too.
	queue(t, conn,
		[]byte(`{"deletes":[{"user":"user:dan","relation":"viewer","object":"archive:a"}]}`),
		[]byte(`{"deletes":[{"user":"user:fay","relation":"viewer","object":"archive:a"}]}`))
	if p, d, s := state(1); p || !d || len(s) != 1 {
		t.Fatalf("row 1 after dan's revoke: processed %v dead %v superseded %v; want dead, dan's tuple given up", p, d, s)
	}
	if p, _, _ := state(2); !p {
		t.Fatal("row 2 (fay's write) is not closed by fay's revoke")
	}
	// A requeued dead row sends only erin's tuple, never dan's.
	if _, err := pg.RequeueDead(ctx, nil); err != nil {
		t.Fatal(err)
	}
	rows, err := pg.ClaimOutbox(ctx, 0, 10, time.Minute)
	if err != nil || len(rows) != 3 {
		t.Fatalf("claimed %d rows (%v), want 1, 3 and 4", len(rows), err)
	}
	p, err := ledger.ParseOutboxPayload(rows[0].Payload)
	if err != nil || len(p.Writes) != 1 || p.Writes[0].User != "user:erin" || len(p.Deletes) != 0 {
		t.Fatalf("row 1 as leased: %+v %v; want erin's write alone", p, err)
	}
	// While row 3 (dan's delete) is in flight, a newer grant to dan is not
	// leased; once row 3 is marked, it is.
	queue(t, conn, []byte(`{"writes":[{"user":"user:dan","relation":"viewer","object":"archive:a"}]}`))
	if p, _, _ := state(3); !p {
		t.Fatal("in-flight row 3 was not closed by the newer intent")
	}
	if more, err := pg.ClaimOutbox(ctx, 0, 10, time.Minute); err != nil || len(more) != 0 {
		t.Fatalf("leased %d rows while an older row of the same tuple is in flight (%v)", len(more), err)
	}
	if err := pg.MarkDelivered(ctx, []int64{rows[0].ID, rows[1].ID, rows[2].ID}); err != nil {
		t.Fatal(err)
	}
	more, err := pg.ClaimOutbox(ctx, 0, 10, time.Minute)
	if err != nil || len(more) != 1 || more[0].ID != 5 {
		t.Fatalf("after the marks: leased %+v (%v), want row 5", more, err)
	}
}
