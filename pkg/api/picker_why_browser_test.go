package api_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// TestPickerShowsWhyInTheBrowser: the picker asks the list with why=1 and
// marks each row with the confirmed reasons, as text: alice (acme, the
// owner) reads "acme · yours"; bob of partner, with a 1 h share to him,
// reads "shared with you until …".
func TestPickerShowsWhyInTheBrowser(t *testing.T) {
	t.Parallel()
	chromium := needChromium(t)
	f := newShareFixture(t)
	if r := f.do(t, "POST", "/api/archives/"+f.id+"/shares", "alice", "acme", `{"user":"bob","duration":"1h"}`); r.status != 201 {
		t.Fatalf("share: %d %s", r.status, r.body)
	}
	f.drain(t)
	st, err := f.env.App.Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := &api.Server{
		Access:   &archive.Access{Perms: app.Permissions{Client: f.env.FGA, Now: f.clock.Now}, Catalog: st, Signer: f.env.Blob, Now: f.clock.Now},
		Identity: identity.Headers{},
		Picker:   api.PickerConfig{View: api.ViewNames, Host: "127.0.0.1", Port: 7070, Why: true},
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	ctx := browserTab(t, chromium, 2*time.Minute)

	for _, tc := range []struct{ subject, orgs, want string }{
		{"alice", "acme", "acme · yours"},
		{"bob", "partner", "shared with you until "},
	} {
		if err := chromedp.Do(ctx,
			chromedp.Navigate(srv.URL+"/"),
			chromedp.WaitVisible("#subject"),
			chromedp.SetValue("#subject", tc.subject),
			chromedp.SetValue("#orgs", tc.orgs),
			chromedp.Click("#who button"),
		); err != nil {
			t.Fatalf("%s: %v", tc.subject, err)
		}
		// The page may first show the list of the caller it remembered: wait
		// for this caller's marker.
		var got string
		for deadline := time.Now().Add(30 * time.Second); !strings.HasPrefix(got, tc.want); {
			if time.Now().After(deadline) {
				t.Fatalf("%s reads %q, want it to start with %q", tc.subject, got, tc.want)
			}
			time.Sleep(100 * time.Millisecond)
			got, err = chromedp.Run(ctx, chromedp.Evaluate[string](`(function () { var w = document.querySelector("#rows li .why"); return w ? w.textContent : ""; })()`))
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}
