package authz_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

func TestPostgresUnreachableHidesPassword(t *testing.T) {
	_, err := authz.NewPostgres(context.Background(), "postgres://u:secretpw@127.0.0.1:1/x_fga?sslmode=disable", authz.Options{})
	if !authz.IsUnreachable(err) || !strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "secretpw") {
		t.Errorf("got %v", err)
	}
}

func TestPreparePostgresCreatesAndMigrates(t *testing.T) {
	admin := testenv.AdminURL(t)
	ctx := context.Background()
	// A database name nobody has: NewPostgres refuses, Prepare creates it.
	dsn := testenv.WithDatabase(admin, testenv.RandomName("t_fga_"))
	t.Cleanup(func() { dropDatabase(t, admin, dsn) })
	if _, err := authz.NewPostgres(ctx, dsn, authz.Options{}); !errors.Is(err, authz.ErrDatastoreMissing) {
		t.Fatalf("missing database: %v, want ErrDatastoreMissing", err)
	}
	if err := authz.PreparePostgres(ctx, dsn); err != nil {
		t.Fatalf("PreparePostgres: %v", err)
	}
	c, err := authz.NewPostgres(ctx, dsn, authz.Options{})
	if err != nil {
		t.Fatalf("NewPostgres after prepare: %v", err)
	}
	d, err := authz.Deploy(ctx, c, "wacz-validator", fga.Model)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, []authz.Tuple{{User: "user:alice", Relation: "submitter", Object: "organization:acme"}}, nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// A new process finds the same store and tuple.
	again, err := authz.NewPostgres(ctx, dsn, authz.Options{StoreID: d.StoreID, ModelID: d.ModelID})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if ok, err := authz.MaySubmit(ctx, again, "alice", []string{"acme"}); err != nil || !ok {
		t.Errorf("after reopening: %v %v", ok, err)
	}
	if id, err := again.FindOrCreateStore(ctx, "wacz-validator"); err != nil || id != d.StoreID {
		t.Errorf("store found again as %q %v, want %q", id, err, d.StoreID)
	}
}

func dropDatabase(t *testing.T, admin, dsn string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Logf("drop: %v", err)
		return
	}
	defer conn.Close(ctx)
	name := dsn[strings.LastIndexByte(strings.SplitN(dsn, "?", 2)[0], '/')+1:]
	name = strings.SplitN(name, "?", 2)[0]
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		t.Logf("drop %s: %v", name, err)
	}
}
