package api_test

import (
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// startIssuer runs a dev issuer whose issuer URL is its own address.
func startIssuer(t *testing.T, audience string) *identity.Issuer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	iss, err := identity.NewIssuer("http://"+ln.Addr().String(), audience)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(iss.Handler())
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return iss
}

func TestJWTThroughTheAPI(t *testing.T) {
	t.Parallel()
	good := startIssuer(t, "capture-ledger")
	other := startIssuer(t, "capture-ledger")  // another key, another issuer URL
	otherAud := startIssuer(t, "someone-else") // right key type, wrong audience
	f := newFixture(t, identity.NewJWT(identity.JWTConfig{Issuer: good.Issuer(), Audience: "capture-ledger"}))

	// A token with a key the issuer never published, but claiming its URL.
	impostor, err := identity.NewIssuer(good.Issuer(), "capture-ledger")
	if err != nil {
		t.Fatal(err)
	}
	mint := func(i *identity.Issuer, sub string, ttl time.Duration) string {
		tok, err := i.Mint(sub, []string{"acme"}, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"bob","organizations":["acme"],"iss":"`+good.Issuer()+`","aud":"capture-ledger","exp":4102444800}`)) + "."

	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"valid", mint(good, "bob", time.Hour), 200},
		{"wrong key", mint(impostor, "bob", time.Hour), 401},
		{"wrong issuer", mint(other, "bob", time.Hour), 401},
		{"wrong audience", mint(otherAud, "bob", time.Hour), 401},
		{"expired", mint(good, "bob", -time.Hour), 401},
		{"alg none", none, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", f.srv.URL+"/api/archives/"+f.id+"/url", nil)
			req.Header.Set("Authorization", "Bearer "+tc.token)
			// The dev headers must be ignored in JWT mode.
			req.Header.Set("X-Capture-ledger-Subject", "bob")
			req.Header.Set("X-Capture-ledger-Organizations", "acme")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Errorf("status %d, want %d", res.StatusCode, tc.want)
			}
		})
	}
}
