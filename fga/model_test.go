package fga_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
)

// suite loads the embedded assertions with model in place of model.fga.
func suite(t *testing.T, model string) *authz.TestSuite {
	t.Helper()
	s, err := authz.ParseTestSuite([]byte(fga.Tests), "fga/"+fga.TestsFile, func(name string) (string, string, error) {
		if strings.TrimPrefix(name, "./") != fga.ModelFile {
			return "", "", fmt.Errorf("unknown file %s", name)
		}
		return model, "fga/" + fga.ModelFile, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// failures runs the assertions against model and names every failing one.
func failures(t *testing.T, model string) []string {
	t.Helper()
	res, err := authz.RunTestSuite(context.Background(), suite(t, model))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res {
		if !r.Pass {
			out = append(out, fmt.Sprintf("%s: %s %s %s = %v %s", r.Test, r.User, r.Relation, r.Object, r.Got, r.Error))
		}
	}
	return out
}

// TestShareAssertionsPass: the model passes the twelve original assertions
// and the six about sharing (13–18).
func TestShareAssertionsPass(t *testing.T) {
	t.Parallel()
	res, err := authz.RunTestSuite(context.Background(), suite(t, fga.Model))
	if err != nil {
		t.Fatal(err)
	}
	tests, _, failed := authz.Summary(res)
	if tests != 18 || failed != 0 {
		t.Errorf("%d tests, %d failed; want 18 passing", tests, failed)
	}
	names := map[string]bool{}
	for _, r := range res {
		names[r.Test] = true
		if !r.Pass {
			t.Errorf("%s: %s %s %s = %v (%s), want %v", r.Test, r.User, r.Relation, r.Object, r.Got, r.Error, r.Expected)
		}
	}
	for i := 1; i <= 18; i++ {
		found := false
		for n := range names {
			found = found || strings.HasPrefix(n, fmt.Sprintf("%d ", i))
		}
		if !found {
			t.Errorf("assertion %d is missing", i)
		}
	}
}

// TestCanShareWidenedToMemberFailsAssertion15: letting members share is the
// mistake can_submit once made (membership is self-asserted); assertion 15
// catches it, and only it.
func TestCanShareWidenedToMemberFailsAssertion15(t *testing.T) {
	t.Parallel()
	const line = "define can_share: owner from parent or admin from parent"
	broken := strings.Replace(fga.Model, line, line+" or member from parent", 1)
	if broken == fga.Model {
		t.Fatal("model changed: can_share line not found")
	}
	got := failures(t, broken)
	if len(got) != 1 || !strings.HasPrefix(got[0], "15 ") || !strings.Contains(got[0], "user:bob can_share archive:arch-1 = true") {
		t.Errorf("failures %q, want exactly assertion 15's can_share", got)
	}
}

// TestCanShareWidenedToViewersFailsAssertion17: a share recipient who could
// share on would turn a one-week window into a permanent one.
func TestCanShareWidenedToViewersFailsAssertion17(t *testing.T) {
	t.Parallel()
	const line = "define can_share: owner from parent or admin from parent"
	broken := strings.Replace(fga.Model, line, line+" or viewer", 1)
	got := failures(t, broken)
	var share []string
	for _, f := range got {
		if strings.Contains(f, " can_share ") {
			share = append(share, f)
		}
	}
	if len(share) != 2 || !strings.HasPrefix(share[0], "17 ") || !strings.HasPrefix(share[1], "18 ") {
		t.Errorf("can_share failures %q, want assertions 17 and 18", share)
	}
}

// TestOrganizationShareWithoutConditionFailsAssertion18: the conditional
// organization#member type is what lets an organization's share expire.
func TestOrganizationShareWithoutConditionFailsAssertion18(t *testing.T) {
	t.Parallel()
	broken := strings.Replace(fga.Model, ", organization#member with non_expired_grant]", "]", 1)
	if broken == fga.Model {
		t.Fatal("model changed: viewer line not found")
	}
	got := failures(t, broken)
	if len(got) == 0 {
		t.Fatal("no assertion failed")
	}
	for _, f := range got {
		if !strings.HasPrefix(f, "18 ") {
			t.Errorf("failure outside assertion 18: %s", f)
		}
	}
}
