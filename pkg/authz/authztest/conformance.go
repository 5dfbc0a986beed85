package authztest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
)

// RunConformance runs the suite every authz.Client must pass. newClient
// returns a client bound to no store; each subtest binds it to a store of
// its own with FindOrCreateStore, so clients may share one server.
func RunConformance(t *testing.T, newClient func(t *testing.T) authz.Client) {
	ctx := context.Background()

	// setup returns a client bound to a fresh store holding the model and
	// the assertions' stored tuples.
	setup := func(t *testing.T) authz.Client {
		t.Helper()
		c := newClient(t)
		if _, err := c.FindOrCreateStore(ctx, storeName()); err != nil {
			t.Fatalf("FindOrCreateStore: %v", err)
		}
		if _, err := c.WriteModel(ctx, fga.Model); err != nil {
			t.Fatalf("WriteModel: %v", err)
		}
		if err := c.Write(ctx, fixture, nil); err != nil {
			t.Fatalf("write fixture: %v", err)
		}
		return c
	}
	check := func(t *testing.T, c authz.Client, req authz.CheckRequest, want bool) {
		t.Helper()
		got, err := c.Check(ctx, req)
		if err != nil {
			t.Fatalf("Check %s %s %s: %v", req.User, req.Relation, req.Object, err)
		}
		if got != want {
			t.Errorf("Check %s %s %s (contextual %v, context %v) = %v, want %v", req.User, req.Relation, req.Object, req.Contextual, req.Context, got, want)
		}
	}

	t.Run("StoreFindOrCreateIsIdempotent", func(t *testing.T) {
		c := newClient(t)
		name := storeName()
		id1, err := c.FindOrCreateStore(ctx, name)
		if err != nil || id1 == "" {
			t.Fatalf("first: %q %v", id1, err)
		}
		id2, err := c.FindOrCreateStore(ctx, name)
		if err != nil || id2 != id1 {
			t.Fatalf("second: %q %v, want %q", id2, err, id1)
		}
		other, err := c.FindOrCreateStore(ctx, storeName())
		if err != nil || other == id1 {
			t.Fatalf("another name gave %q %v", other, err)
		}
		if s, _ := c.Target(); s != other {
			t.Errorf("bound to %q, want the last store %q", s, other)
		}
	})

	t.Run("NoStoreIsAnError", func(t *testing.T) {
		c := newClient(t)
		if _, err := c.Check(ctx, authz.SubmitCheck("alice", "acme")); !errors.Is(err, authz.ErrNoStore) {
			t.Errorf("Check without a store: %v, want ErrNoStore", err)
		}
	})

	t.Run("ModelWriteRead", func(t *testing.T) {
		c := newClient(t)
		if _, err := c.FindOrCreateStore(ctx, storeName()); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ReadModel(ctx); authz.KindOf(err) != authz.KindNotFound {
			t.Errorf("ReadModel of an empty store: %v, want a not-found error", err)
		}
		id, err := c.WriteModel(ctx, fga.Model)
		if err != nil || id == "" {
			t.Fatalf("WriteModel: %q %v", id, err)
		}
		if _, m := c.Target(); m != id {
			t.Errorf("bound to model %q, want %q", m, id)
		}
		m, err := c.ReadModel(ctx)
		if err != nil {
			t.Fatalf("ReadModel: %v", err)
		}
		if m.ID != id {
			t.Errorf("ReadModel id %q, want %q", m.ID, id)
		}
		for _, want := range []string{"define can_submit: submitter or admin", "define member: member from parent", "condition non_expired_grant("} {
			if !strings.Contains(m.DSL, want) {
				t.Errorf("model read back lacks %q:\n%s", want, m.DSL)
			}
		}
		id2, err := c.WriteModel(ctx, fga.Model)
		if err != nil || id2 == id {
			t.Errorf("a second WriteModel gave %q %v; models are immutable, want a new id", id2, err)
		}
		if _, err := c.WriteModel(ctx, "model\n  schema 1.1\ntype user\n  relations\n    define x: [nothing]\n"); err == nil {
			t.Error("WriteModel accepted a model referring to an undefined type")
		}
	})

	t.Run("CheckTrueFalse", func(t *testing.T) {
		c := setup(t)
		check(t, c, authz.CheckRequest{User: "user:alice", Relation: "can_view", Object: "archive:arch-1", Context: at("2026-07-30T00:00:00Z")}, true)
		check(t, c, authz.CheckRequest{User: "user:alice", Relation: "can_delete", Object: "archive:arch-1"}, true)
		check(t, c, authz.CheckRequest{User: "user:mallory", Relation: "can_view", Object: "archive:arch-1", Context: at("2026-07-30T00:00:00Z")}, false)
		check(t, c, authz.CheckRequest{User: "user:alice", Relation: "can_view", Object: "archive:arch-2", Context: at("2026-07-30T00:00:00Z")}, false)
	})

	t.Run("ContextualTuples", func(t *testing.T) {
		c := setup(t)
		now := time.Date(2026, 7, 30, 0, 0, 0, 0, time.UTC)
		check(t, c, authz.ArchiveCheck("bob", []string{"acme"}, "arch-1", now), true)
		check(t, c, authz.ArchiveCheck("bob", nil, "arch-1", now), false)
		check(t, c, authz.ArchiveCheck("bob", []string{"contoso"}, "arch-1", now), false)
		check(t, c, authz.ArchiveCheck("bob", []string{"contoso", "acme"}, "arch-2", now), true)
		// Membership never allows deleting, nor submitting.
		del := authz.ArchiveCheck("bob", []string{"acme"}, "arch-1", now)
		del.Relation = "can_delete"
		check(t, c, del, false)
		sub := authz.SubmitCheck("bob", "acme")
		sub.Contextual = authz.MembershipTuples("bob", []string{"acme"})
		check(t, c, sub, false)
		// Contextual tuples are not stored.
		check(t, c, authz.ArchiveCheck("bob", nil, "arch-1", now), false)
	})

	t.Run("ConditionWindow", func(t *testing.T) {
		c := setup(t)
		if err := c.Write(ctx, []authz.Tuple{share}, nil); err != nil {
			t.Fatal(err)
		}
		inside := time.Date(2026, 7, 30, 0, 0, 0, 0, time.UTC)
		check(t, c, authz.ArchiveCheck("dave", nil, "arch-1", inside), true)
		check(t, c, authz.ArchiveCheck("dave", nil, "arch-1", inside.Add(6*24*time.Hour-time.Second)), true)
		check(t, c, authz.ArchiveCheck("dave", nil, "arch-1", time.Date(2026, 8, 5, 0, 0, 0, 0, time.UTC)), false) // grant_time + 168h exactly
		check(t, c, authz.ArchiveCheck("dave", nil, "arch-1", time.Date(2026, 8, 30, 0, 0, 0, 0, time.UTC)), false)
		del := authz.ArchiveCheck("dave", nil, "arch-1", inside)
		del.Relation = "can_delete"
		check(t, c, del, false)
	})

	t.Run("BatchCheckKeepsOrderBeyondMaxBatch", func(t *testing.T) {
		c := setup(t)
		if got, err := c.BatchCheck(ctx, nil); err != nil || len(got) != 0 {
			t.Fatalf("empty batch: %v %v", got, err)
		}
		now := time.Date(2026, 7, 30, 0, 0, 0, 0, time.UTC)
		var reqs []authz.CheckRequest
		var want []bool
		for i := range 123 { // more than two of OpenFGA's default batches of 50
			switch i % 4 {
			case 0:
				reqs, want = append(reqs, authz.ArchiveCheck("alice", nil, "arch-1", now)), append(want, true)
			case 1:
				reqs, want = append(reqs, authz.ArchiveCheck(fmt.Sprintf("u%d", i), []string{"contoso"}, "arch-1", now)), append(want, false)
			case 2:
				reqs, want = append(reqs, authz.ArchiveCheck(fmt.Sprintf("u%d", i), []string{"contoso"}, "arch-2", now)), append(want, true)
			case 3:
				reqs, want = append(reqs, authz.SubmitCheck("alice", "acme")), append(want, false)
			}
		}
		got, err := c.BatchCheck(ctx, reqs)
		if err != nil {
			t.Fatalf("BatchCheck: %v", err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d answers for %d checks", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("answer %d (%s) = %v, want %v", i, reqs[i].User+" "+reqs[i].Relation+" "+reqs[i].Object, got[i], want[i])
			}
		}
	})

	t.Run("WriteExistingIsAlreadyInState", func(t *testing.T) {
		c := setup(t)
		err := c.Write(ctx, fixture[:1], nil)
		if !errors.Is(err, authz.ErrAlreadyInState) || authz.KindOf(err) != authz.KindAlreadyInState {
			t.Fatalf("rewriting a tuple: %v (kind %v), want ErrAlreadyInState", err, authz.KindOf(err))
		}
		if errors.Is(err, authz.ErrInvalidInput) || authz.IsUnreachable(err) {
			t.Errorf("already-exists also reads as invalid or unreachable: %v", err)
		}
		// The batch is atomic: the new tuple next to the existing one is not written.
		fresh := authz.Tuple{User: "user:frank", Relation: "submitter", Object: "organization:acme"}
		if err := c.Write(ctx, []authz.Tuple{fresh, fixture[0]}, nil); !errors.Is(err, authz.ErrAlreadyInState) {
			t.Fatalf("mixed batch: %v", err)
		}
		if ok, err := c.ReadTuple(ctx, fresh); err != nil || ok {
			t.Errorf("a failed batch left %s behind (%v %v)", fresh, ok, err)
		}
	})

	t.Run("DeleteMissingIsAlreadyInState", func(t *testing.T) {
		c := setup(t)
		missing := authz.Tuple{User: "user:nobody", Relation: "submitter", Object: "organization:acme"}
		err := c.Write(ctx, nil, []authz.Tuple{missing})
		if !errors.Is(err, authz.ErrAlreadyInState) || authz.KindOf(err) != authz.KindAlreadyInState {
			t.Fatalf("deleting a missing tuple: %v (kind %v), want ErrAlreadyInState", err, authz.KindOf(err))
		}
	})

	t.Run("UnknownRelationIsInvalidNotAlreadyInState", func(t *testing.T) {
		c := setup(t)
		bad := authz.Tuple{User: "user:alice", Relation: "no_such_relation", Object: "organization:acme"}
		for name, err := range map[string]error{
			"Write":           c.Write(ctx, []authz.Tuple{bad}, nil),
			"WriteIdempotent": c.WriteIdempotent(ctx, []authz.Tuple{bad}, nil),
		} {
			if errors.Is(err, authz.ErrAlreadyInState) || !errors.Is(err, authz.ErrInvalidInput) || authz.KindOf(err) != authz.KindInvalid {
				t.Errorf("%s with an unknown relation: %v (kind %v), want an invalid-input error", name, err, authz.KindOf(err))
			}
		}
		if _, err := c.Check(ctx, authz.CheckRequest{User: "user:alice", Relation: "no_such_relation", Object: "organization:acme"}); !errors.Is(err, authz.ErrInvalidInput) {
			t.Errorf("Check with an unknown relation: %v, want an invalid-input error", err)
		}
	})

	t.Run("WriteIdempotentDeliversNewTuplesNextToExisting", func(t *testing.T) {
		c := setup(t)
		newer := []authz.Tuple{
			{User: "user:gina", Relation: "submitter", Object: "organization:acme"},
			{User: "user:hank", Relation: "admin", Object: "organization:contoso"},
		}
		gone := fixture[0] // alice owner job-1
		missing := authz.Tuple{User: "user:nobody", Relation: "admin", Object: "organization:acme"}
		writes := []authz.Tuple{fixture[1], newer[0], fixture[2], newer[1]} // existing ones first and between
		if err := c.WriteIdempotent(ctx, writes, []authz.Tuple{missing, gone}); err != nil {
			t.Fatalf("WriteIdempotent: %v", err)
		}
		for _, tu := range newer {
			if ok, err := c.ReadTuple(ctx, tu); err != nil || !ok {
				t.Errorf("%s not delivered (%v %v)", tu, ok, err)
			}
		}
		if ok, err := c.ReadTuple(ctx, gone); err != nil || ok {
			t.Errorf("%s not deleted (%v %v)", gone, ok, err)
		}
		// Delivering the same payload again is a no-op, not an error.
		if err := c.WriteIdempotent(ctx, writes, []authz.Tuple{missing, gone}); err != nil {
			t.Errorf("second delivery: %v", err)
		}
		// A conditional tuple delivered twice.
		for range 2 {
			if err := c.WriteIdempotent(ctx, []authz.Tuple{share}, nil); err != nil {
				t.Errorf("conditional tuple: %v", err)
			}
		}
	})

	t.Run("ReadTuple", func(t *testing.T) {
		c := setup(t)
		if ok, err := c.ReadTuple(ctx, fixture[0]); err != nil || !ok {
			t.Errorf("stored tuple: %v %v", ok, err)
		}
		if ok, err := c.ReadTuple(ctx, authz.Tuple{User: "user:alice", Relation: "owner", Object: "capture_job:job-2"}); err != nil || ok {
			t.Errorf("absent tuple: %v %v", ok, err)
		}
		if err := c.Write(ctx, []authz.Tuple{share}, nil); err != nil {
			t.Fatal(err)
		}
		if ok, err := c.ReadTuple(ctx, authz.Tuple{User: share.User, Relation: share.Relation, Object: share.Object}); err != nil || !ok {
			t.Errorf("conditional tuple: %v %v", ok, err)
		}
	})

	t.Run("ReadTuplesPagesWithConditions", func(t *testing.T) {
		c := setup(t)
		want := map[string]authz.Tuple{}
		for _, tu := range fixture {
			want[TupleKey(tu)] = tu
		}
		var extra []authz.Tuple
		for i := range 230 { // more than two pages of 100
			tu := authz.Tuple{User: fmt.Sprintf("user:reader-%03d", i), Relation: "submitter", Object: "organization:acme"}
			if i%7 == 0 {
				tu = authz.Tuple{User: fmt.Sprintf("user:reader-%03d", i), Relation: "viewer", Object: "archive:arch-1", Condition: &authz.Condition{
					Name: "non_expired_grant", Context: map[string]any{"grant_time": "2026-07-29T00:00:00Z", "grant_duration": fmt.Sprintf("%dh", 24+i)}}}
			}
			extra = append(extra, tu)
			want[TupleKey(tu)] = tu
		}
		for start := 0; start < len(extra); start += 100 {
			if err := c.Write(ctx, extra[start:min(start+100, len(extra))], nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Write(ctx, []authz.Tuple{share}, nil); err != nil {
			t.Fatal(err)
		}
		want[TupleKey(share)] = share
		got, pages, err := ReadAll(ctx, c)
		if err != nil {
			t.Fatalf("ReadTuples: %v", err)
		}
		if pages < 3 {
			t.Errorf("%d tuples came in %d pages, want pages of at most 100", len(got), pages)
		}
		if diff := DiffTuples(got, want); diff != "" {
			t.Error(diff)
		}
		// The conditional tuple comes back with its condition and context.
		g, ok := got[TupleKey(share)]
		if !ok || g.Condition == nil || g.Condition.Name != "non_expired_grant" ||
			g.Condition.Context["grant_time"] != "2026-07-29T00:00:00Z" || g.Condition.Context["grant_duration"] != "168h" {
			t.Errorf("conditional tuple read back as %+v (condition %+v)", g, g.Condition)
		}
		// Written back into another store, it still grants and expires.
		copyStore := newClient(t)
		if _, err := copyStore.FindOrCreateStore(ctx, storeName()); err != nil {
			t.Fatal(err)
		}
		if _, err := copyStore.WriteModel(ctx, fga.Model); err != nil {
			t.Fatal(err)
		}
		if err := copyStore.Write(ctx, []authz.Tuple{g}, nil); err != nil {
			t.Fatalf("write the read tuple back: %v", err)
		}
		check(t, copyStore, authz.ArchiveCheck("dave", nil, "arch-1", time.Date(2026, 7, 30, 0, 0, 0, 0, time.UTC)), true)
		check(t, copyStore, authz.ArchiveCheck("dave", nil, "arch-1", time.Date(2026, 8, 5, 0, 0, 0, 0, time.UTC)), false)
		// An empty store has one empty last page.
		empty := newClient(t)
		if _, err := empty.FindOrCreateStore(ctx, storeName()); err != nil {
			t.Fatal(err)
		}
		if ts, next, err := empty.ReadTuples(ctx, ""); err != nil || len(ts) != 0 || next != "" {
			t.Errorf("empty store: %v %q %v", ts, next, err)
		}
		if _, _, err := newClient(t).ReadTuples(ctx, ""); !errors.Is(err, authz.ErrNoStore) {
			t.Errorf("ReadTuples without a store: %v, want ErrNoStore", err)
		}
	})

	t.Run("FindStoreDoesNotCreate", func(t *testing.T) {
		c := newClient(t)
		name := storeName()
		if id, err := c.FindStore(ctx, name); err != nil || id != "" {
			t.Fatalf("FindStore of a missing store: %q %v", id, err)
		}
		if s, _ := c.Target(); s != "" {
			t.Errorf("FindStore bound the client to %q", s)
		}
		id, err := c.FindOrCreateStore(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		other, err := c.FindOrCreateStore(ctx, storeName())
		if err != nil {
			t.Fatal(err)
		}
		if got, err := c.FindStore(ctx, name); err != nil || got != id {
			t.Errorf("FindStore: %q %v, want %q", got, err, id)
		}
		if s, _ := c.Target(); s != other {
			t.Errorf("FindStore moved the binding to %q, want %q", s, other)
		}
		c.UseStore("", "")
		if s, m := c.Target(); s != "" || m != "" {
			t.Errorf("UseStore: bound to %q %q", s, m)
		}
	})

	t.Run("MaySubmit", func(t *testing.T) {
		c := setup(t)
		may := func(sub string, orgs []string, want bool) {
			t.Helper()
			got, err := authz.MaySubmit(ctx, c, sub, orgs)
			if err != nil || got != want {
				t.Errorf("MaySubmit(%s, %v) = %v %v, want %v", sub, orgs, got, err, want)
			}
		}
		may("ivy", []string{"acme"}, false)
		if err := c.Write(ctx, []authz.Tuple{{User: "user:ivy", Relation: "submitter", Object: "organization:contoso"}}, nil); err != nil {
			t.Fatal(err)
		}
		may("ivy", nil, false)
		may("ivy", []string{"acme"}, false)
		may("ivy", []string{"acme", "contoso"}, true)
		may("ivy", []string{"contoso"}, true)
		// A revocation shows at once (HIGHER_CONSISTENCY).
		if err := c.Write(ctx, nil, []authz.Tuple{{User: "user:ivy", Relation: "submitter", Object: "organization:contoso"}}); err != nil {
			t.Fatal(err)
		}
		may("ivy", []string{"acme", "contoso"}, false)
	})
}

// fixture are the stored tuples of the model's assertions (fga/model.fga.yaml).
var fixture = []authz.Tuple{
	{User: "user:alice", Relation: "owner", Object: "capture_job:job-1"},
	{User: "organization:acme", Relation: "parent", Object: "capture_job:job-1"},
	{User: "capture_job:job-1", Relation: "parent", Object: "archive:arch-1"},
	{User: "organization:contoso", Relation: "parent", Object: "capture_job:job-2"},
	{User: "capture_job:job-2", Relation: "parent", Object: "archive:arch-2"},
}

// share is dave's week-long direct share of arch-1 from 2026-07-29.
var share = authz.Tuple{
	User: "user:dave", Relation: "viewer", Object: "archive:arch-1",
	Condition: &authz.Condition{Name: "non_expired_grant", Context: map[string]any{"grant_time": "2026-07-29T00:00:00Z", "grant_duration": "168h"}},
}

// TupleKey identifies a tuple in a set: user, relation and object.
func TupleKey(t authz.Tuple) string { return t.User + " " + t.Relation + " " + t.Object }

// ReadAll reads every tuple of c's store with ReadTuples, keyed by TupleKey,
// and the number of pages it took.
func ReadAll(ctx context.Context, c authz.Client) (map[string]authz.Tuple, int, error) {
	out := map[string]authz.Tuple{}
	token, pages := "", 0
	for {
		page, next, err := c.ReadTuples(ctx, token)
		if err != nil {
			return nil, pages, err
		}
		pages++
		if len(page) > 100 {
			return nil, pages, fmt.Errorf("a page of %d tuples", len(page))
		}
		for _, t := range page {
			if _, dup := out[TupleKey(t)]; dup {
				return nil, pages, fmt.Errorf("%s read twice", t)
			}
			out[TupleKey(t)] = t
		}
		if next == "" {
			return out, pages, nil
		}
		if pages > 10000 {
			return nil, pages, errors.New("ReadTuples does not end")
		}
		token = next
	}
}

// DiffTuples describes how got and want differ (conditions and their
// context included), "" when they are the same set.
func DiffTuples(got, want map[string]authz.Tuple) string {
	var b strings.Builder
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			fmt.Fprintf(&b, "missing %s\n", k)
		case !sameCondition(g.Condition, w.Condition):
			fmt.Fprintf(&b, "%s: condition %s, want %s\n", k, describeCondition(g.Condition), describeCondition(w.Condition))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "unexpected %s\n", k)
		}
	}
	return b.String()
}

func sameCondition(a, b *authz.Condition) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Name == b.Name && reflect.DeepEqual(normalContext(a.Context), normalContext(b.Context))
}

func normalContext(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}

func describeCondition(c *authz.Condition) string {
	if c == nil {
		return "none"
	}
	return fmt.Sprintf("%s%v", c.Name, c.Context)
}

func at(ts string) map[string]any { return map[string]any{"current_time": ts} }

func storeName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "conformance-" + hex.EncodeToString(b)
}
