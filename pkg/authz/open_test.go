package authz_test

import (
	"context"
	"errors"
	"testing"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/authz/authztest"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

func TestOpenChoosesRemoteWhenAPIURLIsSet(t *testing.T) {
	srv := authztest.StartServer(t)
	ctx := context.Background()
	s := config.Settings{FGAAPIURL: srv.URL, FGAAPIToken: srv.Key, FGADatastoreURI: "postgres://ignored@127.0.0.1:1/x"}
	c, err := authz.Open(ctx, s, authz.OpenOptions{Prepare: true, Unbound: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(*authz.Remote); !ok {
		t.Fatalf("Open gave %T, want *authz.Remote", c)
	}
	d, err := authz.Deploy(ctx, c, "wacz-validator", fga.Model)
	if err != nil {
		t.Fatal(err)
	}
	s.FGAStoreID, s.FGAModelID = d.StoreID, d.ModelID
	bound, err := authz.Open(ctx, s, authz.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st, m := bound.Target(); st != d.StoreID || m != d.ModelID {
		t.Errorf("bound to %s/%s, want %s/%s", st, m, d.StoreID, d.ModelID)
	}
	r, err := authz.Grant(ctx, bound, "submitter", "alice", "acme")
	if err != nil || !r.CanSubmit {
		t.Errorf("grant over HTTP: %+v %v", r, err)
	}
}

func TestOpenEmbedded(t *testing.T) {
	ctx := context.Background()
	if _, err := authz.Open(ctx, config.Settings{}, authz.OpenOptions{}); !errors.Is(err, authz.ErrNoDatastore) {
		t.Errorf("no datastore: %v", err)
	}
	dsn := testenv.EmptyDatabase(t)
	c, err := authz.Open(ctx, config.Settings{FGADatastoreURI: dsn}, authz.OpenOptions{Prepare: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*authz.Embedded); !ok {
		t.Fatalf("Open gave %T, want *authz.Embedded", c)
	}
}
