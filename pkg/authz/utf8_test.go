package authz_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
)

// OpenFGA's batch check never answered for a user that is not valid UTF-8;
// the client must refuse such a question at once instead of hanging.
func TestInvalidUTF8IsRefusedNotHung(t *testing.T) {
	c, err := authz.NewMemory(authz.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := authz.Deploy(ctx, c, "utf8", fga.Model); err != nil {
		t.Fatal(err)
	}
	req := authz.ArchiveCheck("bob\xe9", []string{"acme"}, "00000000-0000-4000-8000-000000000001", time.Now())
	_, err = c.BatchCheck(ctx, []authz.CheckRequest{req})
	if authz.KindOf(err) != authz.KindInvalid || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("batch check: %v", err)
	}
	if _, err := c.Check(ctx, req); authz.KindOf(err) != authz.KindInvalid {
		t.Errorf("check: %v", err)
	}
}
