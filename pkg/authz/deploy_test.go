package authz_test

import (
	"context"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
)

func TestDeployReusesAnIdenticalModel(t *testing.T) {
	ctx := context.Background()
	c, err := authz.NewMemory(authz.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first, err := authz.Deploy(ctx, c, "deploy-test", fga.Model)
	if err != nil || first.Reused {
		t.Fatalf("first deploy: %+v %v", first, err)
	}
	// Comments and layout do not make another model.
	again, err := authz.Deploy(ctx, c, "deploy-test", "# a comment\n"+fga.Model+"\n\n")
	if err != nil || !again.Reused || again.ModelID != first.ModelID || again.StoreID != first.StoreID {
		t.Fatalf("same model: %+v %v", again, err)
	}
	changed := strings.Replace(fga.Model, "define can_submit: submitter or admin", "define can_submit: admin", 1)
	if changed == fga.Model {
		t.Fatal("the model no longer has the line this test edits")
	}
	third, err := authz.Deploy(ctx, c, "deploy-test", changed)
	if err != nil || third.Reused || third.ModelID == first.ModelID {
		t.Fatalf("changed model: %+v %v", third, err)
	}
	if authz.SameModel(fga.Model, changed) || !authz.SameModel(fga.Model, fga.Model) {
		t.Error("SameModel")
	}
}
