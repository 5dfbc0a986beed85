package web_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
)

// signIn makes the tab's console act as subject of orgs (comma-separated)
// on the console at base, the way a person does: the identity form in the
// page's header. Console screen tests call this, never the form's
// internals, so the form can change in one place.
func signIn(t *testing.T, ctx context.Context, base, subject, orgs string) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible("#subject"),
		chromedp.SetValue("#subject", subject),
		chromedp.SetValue("#orgs", orgs),
		chromedp.Click(`#who button[type="submit"]`),
	); err != nil {
		t.Fatalf("sign in as %s of %s: %v", subject, orgs, err)
	}
}
