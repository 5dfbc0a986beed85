package authz_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/authz/authztest"
	"github.com/capture-ledger/ledgerctl/pkg/config"
)

func TestDefaultStoreNameMatchesConfig(t *testing.T) {
	v, ok := config.Lookup("CAPTURE_LEDGER_FGA_STORE_NAME")
	if !ok || v.Default != authz.DefaultStoreName {
		t.Errorf("CAPTURE_LEDGER_FGA_STORE_NAME defaults to %q, authz.DefaultStoreName is %q", v.Default, authz.DefaultStoreName)
	}
	if authz.DefaultStoreName == authz.LegacyStoreName {
		t.Error("the legacy name is the default")
	}
}

// legacyStore fills a store named authz.LegacyStoreName with the model and
// 250 tuples, every fifth conditional, and returns its id and tuples.
// memoryClient is an embedded OpenFGA on a memory datastore, closed when
// the test ends.
func memoryClient(t *testing.T) *authz.Embedded {
	t.Helper()
	c, err := authz.NewMemory(authz.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// withLegacyStore is memoryClient holding a legacyStore.
func withLegacyStore(t *testing.T) (*authz.Embedded, string, map[string]authz.Tuple) {
	t.Helper()
	c := memoryClient(t)
	id, want := legacyStore(t, c)
	return c, id, want
}

func legacyStore(t *testing.T, c authz.Client) (string, map[string]authz.Tuple) {
	t.Helper()
	ctx := context.Background()
	id, err := c.FindOrCreateStore(ctx, authz.LegacyStoreName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteModel(ctx, fga.Model); err != nil {
		t.Fatal(err)
	}
	var all []authz.Tuple
	for i := range 250 {
		var tu authz.Tuple
		switch i % 5 {
		case 0:
			tu = authz.Tuple{User: authz.User(fmt.Sprintf("guest-%03d", i)), Relation: "viewer", Object: authz.Archive(fmt.Sprintf("arch-%03d", i)),
				Condition: &authz.Condition{Name: "non_expired_grant", Context: map[string]any{"grant_time": "2026-07-29T00:00:00Z", "grant_duration": fmt.Sprintf("%dh", 1+i)}}}
		case 1:
			tu = authz.Tuple{User: authz.User(fmt.Sprintf("owner-%03d", i)), Relation: "owner", Object: authz.CaptureJob(fmt.Sprintf("job-%03d", i))}
		case 2:
			tu = authz.Tuple{User: authz.Organization("acme"), Relation: "parent", Object: authz.CaptureJob(fmt.Sprintf("job-%03d", i))}
		case 3:
			tu = authz.Tuple{User: authz.CaptureJob(fmt.Sprintf("job-%03d", i)), Relation: "parent", Object: authz.Archive(fmt.Sprintf("arch-%03d", i))}
		case 4:
			tu = authz.Tuple{User: authz.User(fmt.Sprintf("submitter-%03d", i)), Relation: "submitter", Object: authz.Organization("acme")}
		}
		all = append(all, tu)
	}
	// A share with the organization's members: a userset, unconditional.
	all = append(all, authz.Tuple{User: "organization:contoso#member", Relation: "viewer", Object: authz.Archive("arch-000")})
	want := map[string]authz.Tuple{}
	for start := 0; start < len(all); start += 100 {
		if err := c.Write(ctx, all[start:min(start+100, len(all))], nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tu := range all {
		want[authztest.TupleKey(tu)] = tu
	}
	return id, want
}

func readStore(t *testing.T, c authz.Client, storeID string) map[string]authz.Tuple {
	t.Helper()
	s, m := c.Target()
	defer c.UseStore(s, m)
	c.UseStore(storeID, "")
	got, _, err := authztest.ReadAll(context.Background(), c)
	if err != nil {
		t.Fatalf("read store %s: %v", storeID, err)
	}
	return got
}

func TestDeployMigratesTheLegacyStore(t *testing.T) {
	ctx := context.Background()
	c, oldID, want := withLegacyStore(t)
	c.UseStore("", "")

	d, err := authz.Deploy(ctx, c, authz.DefaultStoreName, fga.Model)
	if err != nil {
		t.Fatalf("Deploy: %v", err)
	}
	if d.StoreName != authz.DefaultStoreName || d.StoreID == "" || d.StoreID == oldID || d.ModelID == "" || d.Reused {
		t.Errorf("deployment %+v", d)
	}
	if d.MigratedFrom == nil || *d.MigratedFrom != (authz.StoreRef{Name: authz.LegacyStoreName, ID: oldID}) || d.MigratedTuples != len(want) {
		t.Errorf("migrated from %+v, %d tuples; want %s (%s), %d", d.MigratedFrom, d.MigratedTuples, authz.LegacyStoreName, oldID, len(want))
	}
	if s, m := c.Target(); s != d.StoreID || m != d.ModelID {
		t.Errorf("bound to %q %q, want %q %q", s, m, d.StoreID, d.ModelID)
	}
	if diff := authztest.DiffTuples(readStore(t, c, d.StoreID), want); diff != "" {
		t.Errorf("new store:\n%s", diff)
	}
	if diff := authztest.DiffTuples(readStore(t, c, oldID), want); diff != "" {
		t.Errorf("old store changed:\n%s", diff)
	}
	if id, err := c.FindStore(ctx, authz.DefaultStoreName); err != nil || id != d.StoreID {
		t.Errorf("FindStore(%s) = %q %v", authz.DefaultStoreName, id, err)
	}
	// The copied grants work in the new store.
	c.UseStore(d.StoreID, d.ModelID)
	if ok, err := c.Check(ctx, authz.ArchiveCheck("guest-005", nil, "arch-005", mustTime(t, "2026-07-29T05:00:00Z"))); err != nil || !ok {
		t.Errorf("copied conditional grant: %v %v", ok, err)
	}
	if ok, err := c.Check(ctx, authz.ArchiveCheck("guest-005", nil, "arch-005", mustTime(t, "2026-07-29T06:00:00Z"))); err != nil || ok {
		t.Errorf("copied conditional grant past its 6h: %v %v", ok, err)
	}

	// A revocation in the new store is not undone by the next deploy, which
	// finds capture-ledger and migrates nothing.
	revoked := authz.Tuple{User: authz.User("submitter-004"), Relation: "submitter", Object: authz.Organization("acme")}
	if err := c.Write(ctx, nil, []authz.Tuple{revoked}); err != nil {
		t.Fatal(err)
	}
	c.UseStore("", "")
	again, err := authz.Deploy(ctx, c, authz.DefaultStoreName, fga.Model)
	if err != nil {
		t.Fatalf("second Deploy: %v", err)
	}
	if again.StoreID != d.StoreID || again.ModelID != d.ModelID || !again.Reused || again.MigratedFrom != nil || again.MigratedTuples != 0 {
		t.Errorf("second deployment %+v, want the same store and model, nothing migrated", again)
	}
	if got := readStore(t, c, d.StoreID); len(got) != len(want)-1 {
		t.Errorf("after the second deploy the new store holds %d tuples, want %d", len(got), len(want)-1)
	}
	if diff := authztest.DiffTuples(readStore(t, c, oldID), want); diff != "" {
		t.Errorf("old store changed:\n%s", diff)
	}
}

func TestDeployResumesAnUnfinishedMigration(t *testing.T) {
	ctx := context.Background()
	c, oldID, want := withLegacyStore(t)
	// A deploy that stopped after creating the store: no model yet.
	newID, err := c.FindOrCreateStore(ctx, authz.DefaultStoreName)
	if err != nil {
		t.Fatal(err)
	}
	c.UseStore("", "")
	d, err := authz.Deploy(ctx, c, authz.DefaultStoreName, fga.Model)
	if err != nil || d.StoreID != newID || d.MigratedFrom == nil || d.MigratedTuples != len(want) {
		t.Fatalf("deploy into a store without a model: %+v %v", d, err)
	}
	if diff := authztest.DiffTuples(readStore(t, c, newID), want); diff != "" {
		t.Fatalf("new store:\n%s", diff)
	}

	// A deploy that stopped half-way through the copy: the marker is still
	// there and some tuples are copied already.
	c.UseStore(newID, d.ModelID)
	if err := c.Write(ctx, []authz.Tuple{authz.MigrationMarker}, nil); err != nil {
		t.Fatal(err)
	}
	var some []authz.Tuple
	for _, tu := range want {
		some = append(some, tu)
	}
	for _, del := range [][]authz.Tuple{some[:60], some[60:120]} { // leave 131 copied
		if err := c.Write(ctx, nil, del); err != nil {
			t.Fatal(err)
		}
	}
	c.UseStore("", "")
	d, err = authz.Deploy(ctx, c, authz.DefaultStoreName, fga.Model)
	if err != nil || d.StoreID != newID || !d.Reused || d.MigratedFrom == nil || d.MigratedFrom.ID != oldID || d.MigratedTuples != len(want) {
		t.Fatalf("resumed deploy: %+v %v", d, err)
	}
	if diff := authztest.DiffTuples(readStore(t, c, newID), want); diff != "" {
		t.Errorf("after resuming (marker cleared):\n%s", diff)
	}
	if diff := authztest.DiffTuples(readStore(t, c, oldID), want); diff != "" {
		t.Errorf("old store changed:\n%s", diff)
	}
}

func TestDeployMigratesOnlyToTheDefaultName(t *testing.T) {
	ctx := context.Background()
	c, oldID, want := withLegacyStore(t)
	for _, name := range []string{"my-ledger", authz.DefaultStoreName + "-staging"} {
		c.UseStore("", "")
		d, err := authz.Deploy(ctx, c, name, fga.Model)
		if err != nil || d.MigratedFrom != nil || d.MigratedTuples != 0 || d.StoreID == oldID {
			t.Errorf("Deploy(%s): %+v %v, want no migration", name, d, err)
		}
		if got := readStore(t, c, d.StoreID); len(got) != 0 {
			t.Errorf("Deploy(%s) copied %d tuples", name, len(got))
		}
	}
	// The legacy name itself is an ordinary store.
	c.UseStore("", "")
	d, err := authz.Deploy(ctx, c, authz.LegacyStoreName, fga.Model)
	if err != nil || d.StoreID != oldID || !d.Reused || d.MigratedFrom != nil {
		t.Errorf("Deploy(%s): %+v %v", authz.LegacyStoreName, d, err)
	}
	if id, err := c.FindStore(ctx, authz.DefaultStoreName); err != nil || id != "" {
		t.Errorf("a %s store appeared: %q %v", authz.DefaultStoreName, id, err)
	}
	if diff := authztest.DiffTuples(readStore(t, c, oldID), want); diff != "" {
		t.Errorf("old store changed:\n%s", diff)
	}
}

func TestDeployWithoutALegacyStore(t *testing.T) {
	ctx := context.Background()
	c := memoryClient(t)
	d, err := authz.Deploy(ctx, c, authz.DefaultStoreName, fga.Model)
	if err != nil || d.MigratedFrom != nil || d.MigratedTuples != 0 || d.StoreID == "" {
		t.Fatalf("Deploy: %+v %v", d, err)
	}
	if got := readStore(t, c, d.StoreID); len(got) != 0 {
		t.Errorf("new store holds %d tuples", len(got))
	}
}

func TestMigrationErrorNamesBothStores(t *testing.T) {
	err := error(&authz.MigrationError{From: authz.StoreRef{Name: "wacz-validator", ID: "01OLD"}, To: authz.StoreRef{Name: "capture-ledger", ID: "01NEW"}, Copied: 200, Err: errors.New("boom")})
	want := "copying the tuples of store wacz-validator (01OLD) into capture-ledger (01NEW) stopped after 200: boom; run the deploy again to finish (the old store is left as it was)"
	if err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}
