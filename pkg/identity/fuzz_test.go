package identity

import (
	"crypto/hmac"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
)

// FuzzJWTResolve feeds arbitrary Authorization values to a JWT resolver
// backed by a live dev issuer. No input may panic or yield an identity: the
// seeds are all invalid (expired, wrong audience, alg none, HS256, …) and a
// mutation cannot produce a valid signature.
func FuzzJWTResolve(f *testing.F) {
	clock := newClock()
	iss, _ := startIssuer(f, clock)
	j := NewJWT(JWTConfig{Issuer: iss.Issuer(), Now: clock.Now})

	expired, err := iss.Mint("alice", []string{"acme"}, -time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	good := validClaims(iss.Issuer())
	wrongAud := signWith(f, jwa.RS256(), iss.key, iss.kid, with(good, "aud", "other"))
	noSub := signWith(f, jwa.RS256(), iss.key, iss.kid, with(good, "sub", nil))
	none := handBuilt(f, map[string]any{"alg": "none"}, good, nil)
	signing := b64(mustJSON(f, map[string]any{"alg": "HS256", "kid": iss.kid})) + "." + b64(mustJSON(f, good))
	mac := hmac.New(sha256.New, iss.JWKS())
	mac.Write([]byte(signing))
	hs := signing + "." + b64(mac.Sum(nil))

	for _, s := range []string{
		"", "Bearer ", "Bearer", "bearer x", "Basic eDp5",
		"Bearer a.b.c", "Bearer ..", "Bearer e30.e30.", "Bearer eyJhbGciOiJSUzI1NiJ9.e30.AAAA",
		"Bearer " + expired, "Bearer " + wrongAud, "Bearer " + noSub, "Bearer " + none, "Bearer " + hs,
		"bearer " + expired, "Bearer  " + expired, "Bearer " + expired + "x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, auth string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header["Authorization"] = []string{auth}
		if id, ok := j.Resolve(r); ok || id.Subject != "" || id.Organizations != nil {
			t.Fatalf("Authorization %q resolved to %+v", auth, id)
		}
	})
}
