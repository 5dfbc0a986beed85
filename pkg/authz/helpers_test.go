package authz_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
)

func TestArchiveCheckShape(t *testing.T) {
	now := time.Date(2026, 7, 30, 9, 0, 0, 0, time.FixedZone("JST", 9*3600))
	got := authz.ArchiveCheck("alice", []string{"acme", "contoso"}, "a-1", now)
	want := authz.CheckRequest{
		User: "user:alice", Relation: "can_view", Object: "archive:a-1",
		Contextual: []authz.Tuple{
			{User: "user:alice", Relation: "member", Object: "organization:acme"},
			{User: "user:alice", Relation: "member", Object: "organization:contoso"},
		},
		Context: map[string]any{"current_time": "2026-07-30T00:00:00Z"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ArchiveCheck =\n%+v\nwant\n%+v", got, want)
	}
}

// countingClient records the checks it is asked.
type countingClient struct {
	authz.Client
	asked []authz.CheckRequest
	allow map[string]bool
	err   error
}

func (c *countingClient) Check(_ context.Context, r authz.CheckRequest) (bool, error) {
	c.asked = append(c.asked, r)
	return c.allow[r.Object], c.err
}

func TestMaySubmitAsksNothingWithoutOrganizations(t *testing.T) {
	c := &countingClient{}
	ok, err := authz.MaySubmit(context.Background(), c, "alice", nil)
	if ok || err != nil || len(c.asked) != 0 {
		t.Errorf("MaySubmit with no orgs = %v %v after %d checks, want false without asking", ok, err, len(c.asked))
	}
}

func TestMaySubmitAsksCanSubmitWithoutContextualTuples(t *testing.T) {
	e, err := authz.NewMemory(authz.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if _, err := authz.Deploy(ctx, e, "helpers", fga.Model); err != nil {
		t.Fatal(err)
	}
	if err := e.Write(ctx, []authz.Tuple{{User: "user:alice", Relation: "admin", Object: "organization:contoso"}}, nil); err != nil {
		t.Fatal(err)
	}
	rec := &recordingClient{Client: e}
	// Neither allows, so every answer is in before MaySubmit returns.
	ok, err := authz.MaySubmit(ctx, rec, "alice", []string{"acme", "initech"})
	if err != nil || ok {
		t.Fatalf("MaySubmit = %v %v, want false", ok, err)
	}
	if len(rec.asked) != 2 {
		t.Fatalf("asked %d checks, want one per organization", len(rec.asked))
	}
	for _, r := range rec.asked {
		if r.Relation != "can_submit" || r.User != "user:alice" || len(r.Contextual) != 0 || len(r.Context) != 0 || !strings.HasPrefix(r.Object, "organization:") {
			t.Errorf("asked %+v, want can_submit with no contextual tuples", r)
		}
	}
	if ok, err := authz.MaySubmit(ctx, e, "alice", []string{"acme", "contoso"}); err != nil || !ok {
		t.Errorf("MaySubmit = %v %v, want true (admin of contoso)", ok, err)
	}
}

// recordingClient passes checks through and records them (MaySubmit asks
// in parallel, hence the lock).
type recordingClient struct {
	authz.Client
	mu    sync.Mutex
	asked []authz.CheckRequest
}

func (c *recordingClient) Check(ctx context.Context, r authz.CheckRequest) (bool, error) {
	ok, err := c.Client.Check(ctx, r)
	c.mu.Lock()
	c.asked = append(c.asked, r)
	c.mu.Unlock()
	return ok, err
}

func TestMaySubmitReportsErrorsOnlyWhenNothingAllows(t *testing.T) {
	boom := errors.New("boom")
	c := &countingClient{err: boom}
	if ok, err := authz.MaySubmit(context.Background(), c, "alice", []string{"acme"}); ok || !errors.Is(err, boom) {
		t.Errorf("MaySubmit = %v %v, want the error", ok, err)
	}
}
