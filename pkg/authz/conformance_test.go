package authz_test

import (
	"context"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/authz/authztest"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

func TestConformanceEmbeddedMemory(t *testing.T) {
	t.Parallel()
	authztest.RunConformance(t, func(t *testing.T) authz.Client {
		c, err := authz.NewMemory(authz.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	})
}

func TestConformanceEmbeddedPostgres(t *testing.T) {
	dsn := testenv.EmptyDatabase(t)
	ctx := context.Background()
	if err := authz.PreparePostgres(ctx, dsn); err != nil {
		t.Fatalf("PreparePostgres: %v", err)
	}
	if err := authz.PreparePostgres(ctx, dsn); err != nil { // idempotent
		t.Fatalf("PreparePostgres again: %v", err)
	}
	authztest.RunConformance(t, func(t *testing.T) authz.Client {
		c, err := authz.NewPostgres(ctx, dsn, authz.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	})
}

func TestConformanceRemote(t *testing.T) {
	srv := authztest.StartServer(t)
	authztest.RunConformance(t, func(t *testing.T) authz.Client {
		c, err := authz.NewRemote(authz.RemoteOptions{URL: srv.URL, Token: srv.Key})
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}
