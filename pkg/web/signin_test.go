package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// signIn makes the tab's console act as subject of orgs (comma-separated)
// on the console at base, the way a person does: with the dev identity,
// the names form in the page's header; with an OIDC sign-in, "Sign in",
// then the names on the dev issuer's page, back to the console signed in.
// Console screen tests call this, never the form's internals, so the form
// can change in one place.
func signIn(t *testing.T, ctx context.Context, base, subject, orgs string) {
	t.Helper()
	// The sign-in page exists when serve signs in through OIDC.
	const mode = `document.getElementById("sign-in") ? "in" : document.getElementById("sign-out") ? "out" : ""`
	who, err := chromedp.Run(ctx, chromedp.Evaluate[string](`""`))
	if err == nil {
		if err = chromedp.Do(ctx, chromedp.Navigate(base+"/auth/sign-in")); err == nil {
			who, err = chromedp.Run(ctx, chromedp.Evaluate[string](mode))
		}
	}
	if err == nil && who == "out" {
		// Someone is signed in already: sign out first.
		if err = chromedp.Do(ctx, chromedp.Click("#sign-out"), chromedp.WaitVisible("#auth-message"), chromedp.Navigate(base+"/auth/sign-in")); err == nil {
			who, err = chromedp.Run(ctx, chromedp.Evaluate[string](mode))
		}
	}
	if err != nil {
		t.Fatalf("sign in as %s of %s: %v", subject, orgs, err)
	}
	if who == "in" {
		err = chromedp.Do(ctx,
			chromedp.WaitVisible("#sign-in"),
			chromedp.Click("#sign-in"),
			chromedp.WaitVisible("#issuer-subject"),
			chromedp.SetValue("#issuer-subject", subject),
			chromedp.SetValue("#issuer-orgs", orgs),
			chromedp.Click("#issuer-continue"),
		)
		if err == nil {
			var loc string
			for deadline := time.Now().Add(30 * time.Second); !strings.HasPrefix(loc, base+"/") || strings.Contains(loc, "/auth/"); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("sign in as %s of %s: still at %s", subject, orgs, loc)
				}
				loc, _ = chromedp.Run(ctx, chromedp.Location())
			}
		}
	} else {
		err = chromedp.Do(ctx,
			chromedp.Navigate(base+"/"),
			chromedp.WaitVisible("#subject"),
			chromedp.SetValue("#subject", subject),
			chromedp.SetValue("#orgs", orgs),
			chromedp.Click(`#who button[type="submit"]`),
		)
	}
	if err != nil {
		t.Fatalf("sign in as %s of %s: %v", subject, orgs, err)
	}
}
