package authz_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// chain names the types of err's chain, for the failure message.
func chain(err error) string {
	s := ""
	for e := err; e != nil; e = errors.Unwrap(e) {
		s += fmt.Sprintf(" %T", e)
	}
	return s
}

// TestEmbeddedDatastoreOutageIsUnreachable stops the embedded OpenFGA's
// PostgreSQL datastore for real (connections refused and ended): every
// call answers an error matching ledger.ErrUnreachable, not an internal
// error, and the calls work again once it is back.
func TestEmbeddedDatastoreOutageIsUnreachable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.EmptyDatabase(t)
	if err := authz.PreparePostgres(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	c, err := authz.NewPostgres(ctx, dsn, authz.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := authz.Deploy(ctx, c, "outage", fga.Model); err != nil {
		t.Fatal(err)
	}
	tu := authz.Tuple{User: "user:dan", Relation: "owner", Object: "capture_job:j"}
	if err := c.Write(ctx, []authz.Tuple{tu}, nil); err != nil {
		t.Fatal(err)
	}
	check := authz.CheckRequest{User: "user:dan", Relation: "owner", Object: "capture_job:j"}
	calls := map[string]func() error{
		"check":       func() error { _, err := c.Check(ctx, check); return err },
		"batch check": func() error { _, err := c.BatchCheck(ctx, []authz.CheckRequest{check}); return err },
		"write": func() error {
			return c.WriteIdempotent(ctx, []authz.Tuple{{User: "user:erin", Relation: "owner", Object: "capture_job:j"}}, nil)
		},
		"delete":      func() error { return c.WriteIdempotent(ctx, nil, []authz.Tuple{tu}) },
		"read tuple":  func() error { _, err := c.ReadTuple(ctx, tu); return err },
		"read tuples": func() error { _, _, err := c.ReadTuples(ctx, ""); return err },
	}
	outage := testenv.NewOutage(t, dsn)
	outage.Stop()
	for name, call := range calls {
		err := call()
		if !errors.Is(err, ledger.ErrUnreachable) || !authz.IsUnreachable(err) {
			t.Errorf("%s with the datastore down: %v (%s), want unreachable", name, err, chain(err))
		}
	}
	outage.Start()
	for name, call := range calls {
		var err error
		for range 20 { // a connection the outage ended may fail once more
			if err = call(); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			t.Errorf("%s after the datastore came back: %v", name, err)
		}
	}
}
