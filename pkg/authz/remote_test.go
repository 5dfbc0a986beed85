package authz_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/authz/authztest"
)

func TestRemoteUnreachableNamesTheURL(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	c, err := authz.NewRemote(authz.RemoteOptions{URL: url, Token: "secret-token", Options: authz.Options{StoreID: "01ARZ3NDEKTSV4RRFFQ69G5FAV"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for name, err := range map[string]error{
		"check": func() error { _, err := c.Check(ctx, authz.SubmitCheck("alice", "acme")); return err }(),
		"write": c.Write(ctx, []authz.Tuple{{User: "user:alice", Relation: "admin", Object: "organization:acme"}}, nil),
		"store": func() error { _, err := c.FindOrCreateStore(ctx, "some-store"); return err }(),
	} {
		if !authz.IsUnreachable(err) {
			t.Errorf("%s: %v, want an unreachable error", name, err)
			continue
		}
		if !strings.Contains(err.Error(), url) || strings.Contains(err.Error(), "secret-token") {
			t.Errorf("%s: %q should name %s and not the token", name, err, url)
		}
		if errors.Is(err, authz.ErrAlreadyInState) {
			t.Errorf("%s: unreachable reads as already-in-state", name)
		}
	}
}

func TestRemoteWrongKeyIsRefused(t *testing.T) {
	srv := authztest.StartServer(t)
	c, err := authz.NewRemote(authz.RemoteOptions{URL: srv.URL, Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.FindOrCreateStore(context.Background(), "some-store")
	if err == nil || authz.IsUnreachable(err) || !strings.Contains(err.Error(), "CAPTURE_LEDGER_FGA_API_TOKEN") {
		t.Errorf("wrong key: %v", err)
	}
	none, _ := authz.NewRemote(authz.RemoteOptions{URL: srv.URL})
	if _, err := none.FindOrCreateStore(context.Background(), "some-store"); err == nil {
		t.Error("no key accepted by a server that requires one")
	}
}

// TestRemoteBatchLimitIsReal shows the server refuses a batch above its
// limit, so the conformance suite's 123 checks really exercise splitting.
func TestRemoteBatchLimitIsReal(t *testing.T) {
	srv := authztest.StartServer(t)
	ctx := context.Background()
	c, err := authz.NewRemote(authz.RemoteOptions{URL: srv.URL, Token: srv.Key, Options: authz.Options{MaxChecksPerBatch: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := authz.Deploy(ctx, c, "limit", fga.Model); err != nil {
		t.Fatal(err)
	}
	reqs := make([]authz.CheckRequest, 51)
	for i := range reqs {
		reqs[i] = authz.SubmitCheck("alice", "acme")
	}
	if _, err := c.BatchCheck(ctx, reqs); err == nil {
		t.Fatal("the server took 51 checks in one batch; its limit is 50")
	}
	c2, _ := authz.NewRemote(authz.RemoteOptions{URL: srv.URL, Token: srv.Key})
	c2.FindOrCreateStore(ctx, "limit")
	if got, err := c2.BatchCheck(ctx, reqs); err != nil || len(got) != 51 {
		t.Fatalf("split batch: %d answers, %v", len(got), err)
	}
}

// TestWriteFallbackOneByOne runs the fallback WriteIdempotent uses against
// servers without on_duplicate/on_missing, on both implementations.
func TestWriteFallbackOneByOne(t *testing.T) {
	srv := authztest.StartServer(t)
	remote, err := authz.NewRemote(authz.RemoteOptions{URL: srv.URL, Token: srv.Key})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := authz.NewMemory(authz.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for name, c := range map[string]authz.Client{"remote": remote, "embedded": mem} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if _, err := authz.Deploy(ctx, c, "fallback", fga.Model); err != nil {
				t.Fatal(err)
			}
			old := authz.Tuple{User: "user:a", Relation: "admin", Object: "organization:acme"}
			gone := authz.Tuple{User: "user:b", Relation: "admin", Object: "organization:acme"}
			if err := c.Write(ctx, []authz.Tuple{old, gone}, nil); err != nil {
				t.Fatal(err)
			}
			fresh := authz.Tuple{User: "user:c", Relation: "submitter", Object: "organization:acme"}
			missing := authz.Tuple{User: "user:d", Relation: "submitter", Object: "organization:acme"}
			if err := authz.WriteOneByOne(ctx, c, []authz.Tuple{old, fresh}, []authz.Tuple{missing, gone}); err != nil {
				t.Fatalf("fallback: %v", err)
			}
			for tu, want := range map[authz.Tuple]bool{old: true, fresh: true, gone: false, missing: false} {
				if ok, err := c.ReadTuple(ctx, tu); err != nil || ok != want {
					t.Errorf("%s present=%v (%v), want %v", tu, ok, err, want)
				}
			}
			bad := authz.Tuple{User: "user:a", Relation: "nope", Object: "organization:acme"}
			if err := authz.WriteOneByOne(ctx, c, []authz.Tuple{bad}, nil); !errors.Is(err, authz.ErrInvalidInput) {
				t.Errorf("fallback swallowed a validation error: %v", err)
			}
		})
	}
}
