package authz_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
)

// embeddedSuite loads fga/model.fga.yaml with model replacing fga/model.fga.
func embeddedSuite(t *testing.T, model string) *authz.TestSuite {
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

func TestModelPassesAllAssertions(t *testing.T) {
	res, err := authz.RunTestSuite(context.Background(), embeddedSuite(t, fga.Model))
	if err != nil {
		t.Fatal(err)
	}
	tests, checks, failed := authz.Summary(res)
	if tests != 18 || failed != 0 { // 12 kept from the original model, 6 about sharing (fga/model_test.go)
		t.Errorf("%d tests, %d checks, %d failed; want 18 tests, none failing", tests, checks, failed)
	}
	for _, r := range res {
		if !r.Pass {
			t.Errorf("%s: %s %s %s = %v (%s), want %v", r.Test, r.User, r.Relation, r.Object, r.Got, r.Error, r.Expected)
		}
	}
}

// TestMemberInCanSubmitFailsAssertion10 is the mistake the seed recounts:
// can_submit including member makes every self-asserted member a submitter.
func TestMemberInCanSubmitFailsAssertion10(t *testing.T) {
	broken := strings.Replace(fga.Model, "define can_submit: submitter or admin", "define can_submit: submitter or admin or member", 1)
	if broken == fga.Model {
		t.Fatal("model changed: can_submit line not found")
	}
	res, err := authz.RunTestSuite(context.Background(), embeddedSuite(t, broken))
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, r := range res {
		if !r.Pass {
			failed = append(failed, fmt.Sprintf("%s: %s %s %s", r.Test, r.User, r.Relation, r.Object))
		}
	}
	if len(failed) != 1 || !strings.HasPrefix(failed[0], "10 ") || !strings.Contains(failed[0], "user:carol can_submit organization:acme") {
		t.Errorf("failures %q, want exactly assertion 10's can_submit", failed)
	}
}

func TestModelSyntaxErrorNamesTheLine(t *testing.T) {
	broken := strings.Replace(fga.Model, "define admin: [user]", "define admin [user]", 1)
	line := 0
	for i, l := range strings.Split(broken, "\n") {
		if strings.Contains(l, "define admin [user]") {
			line = i + 1
		}
	}
	_, err := authz.RunTestSuite(context.Background(), embeddedSuite(t, broken))
	var me *authz.ModelError
	if !errors.As(err, &me) || len(me.Errors) == 0 {
		t.Fatalf("got %v, want a *ModelError with positions", err)
	}
	if me.Errors[0].Line != line || !strings.Contains(err.Error(), fmt.Sprintf("fga/model.fga:%d:", line)) {
		t.Errorf("error %q names line %d, want %d", err, me.Errors[0].Line, line)
	}
}

func TestSuiteRejectsUnknownKeys(t *testing.T) {
	_, err := authz.ParseTestSuite([]byte("model: |\n  model\n    schema 1.1\n  type user\ntests:\n  - name: x\n    list_objects: []\n"), "t.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "list_objects") {
		t.Errorf("an assertion kind we do not run was accepted: %v", err)
	}
}
