package identity

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// codeFlow drives the dev issuer's authorize page and form as a browser
// would, and returns the code it sent back (or the answer when it sent
// none).
func codeFlow(t *testing.T, base string, q url.Values, subject, orgs string) (string, *http.Response, string) {
	t.Helper()
	form := url.Values{}
	for k, v := range q {
		form[k] = v
	}
	form.Set("subject", subject)
	form.Set("organizations", orgs)
	req, _ := http.NewRequest("POST", base+"/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusSeeOther {
		return "", res, string(body)
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if loc.Query().Get("state") != q.Get("state") {
		t.Fatalf("state came back as %q, want %q", loc.Query().Get("state"), q.Get("state"))
	}
	return loc.Query().Get("code"), res, string(body)
}

func authorizeQuery(verifier string) url.Values {
	return url.Values{
		"response_type": {"code"}, "scope": {"openid"}, "client_id": {"console"},
		"redirect_uri": {"http://127.0.0.1:7070/auth/callback"}, "state": {"st-1"}, "nonce": {"n-1"},
		"code_challenge": {S256(verifier)}, "code_challenge_method": {"S256"},
	}
}

func exchange(t *testing.T, base string, form url.Values) (int, map[string]any) {
	t.Helper()
	res, err := http.PostForm(base+"/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}

// TestIssuerCodeFlow: the page's form gives a one-time code for the
// redirect URI; the code and its PKCE verifier give an ID token whose aud
// is the client, with the nonce, subject and organizations, and an access
// token the JWT resolver accepts. A wrong verifier, client or redirect URI
// and a second use are refused.
func TestIssuerCodeFlow(t *testing.T) {
	t.Parallel()
	clock := newClock()
	iss, srv := startIssuer(t, clock)
	verifier := strings.Repeat("v", 43)
	tokenForm := func(code string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {"console"},
			"redirect_uri": {"http://127.0.0.1:7070/auth/callback"}, "code_verifier": {verifier}}
	}

	code, res, body := codeFlow(t, srv.URL, authorizeQuery(verifier), "alice", "acme, beta")
	if code == "" {
		t.Fatalf("no code: %d %s", res.StatusCode, body)
	}
	status, tok := exchange(t, srv.URL, tokenForm(code))
	if status != 200 {
		t.Fatalf("exchange: %d %v", status, tok)
	}
	idTok, _ := tok["id_token"].(string)
	parts := strings.Split(idTok, ".")
	if len(parts) != 3 {
		t.Fatalf("id_token %q", idTok)
	}
	var claims map[string]any
	raw, _ := b64dec(parts[1])
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	if claims["aud"] != "console" || claims["nonce"] != "n-1" || claims["sub"] != "alice" || claims["iss"] != iss.Issuer() {
		t.Fatalf("claims %v", claims)
	}
	if orgs, _ := claims["organizations"].([]any); len(orgs) != 2 || orgs[0] != "acme" || orgs[1] != "beta" {
		t.Fatalf("organizations %v", claims["organizations"])
	}
	j := NewJWT(JWTConfig{Issuer: iss.Issuer(), Audience: testAudience, Now: clock.Now})
	if id, ok := j.Resolve(bearerRequest(tok["access_token"].(string))); !ok || id.Subject != "alice" {
		t.Fatalf("the access token is not accepted as Bearer: %v %v", id, ok)
	}
	// The code is used once.
	if status, m := exchange(t, srv.URL, tokenForm(code)); status != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("second use: %d %v", status, m)
	}

	for name, tamper := range map[string]func(url.Values){
		"verifier":     func(f url.Values) { f.Set("code_verifier", strings.Repeat("w", 43)) },
		"no verifier":  func(f url.Values) { f.Del("code_verifier") },
		"client":       func(f url.Values) { f.Set("client_id", "other") },
		"redirect uri": func(f url.Values) { f.Set("redirect_uri", "http://127.0.0.1:7070/elsewhere") },
		"grant type":   func(f url.Values) { f.Set("grant_type", "password") },
	} {
		code, res, body := codeFlow(t, srv.URL, authorizeQuery(verifier), "alice", "acme")
		if code == "" {
			t.Fatalf("%s: no code: %d %s", name, res.StatusCode, body)
		}
		f := tokenForm(code)
		tamper(f)
		if status, m := exchange(t, srv.URL, f); status != 400 || m["id_token"] != nil {
			t.Errorf("%s: %d %v", name, status, m)
		}
	}

	// An expired code is refused.
	code, _, _ = codeFlow(t, srv.URL, authorizeQuery(verifier), "alice", "acme")
	clock.Set(t0.Add(CodeLifetime + time.Second))
	if status, m := exchange(t, srv.URL, tokenForm(code)); status != 400 {
		t.Errorf("expired code: %d %v", status, m)
	}
}

// TestIssuerAuthorizeRefuses: the flow's parameters are checked, each
// refusal names its parameter, and hostile strings are shown as text.
func TestIssuerAuthorizeRefuses(t *testing.T) {
	t.Parallel()
	_, srv := startIssuer(t, newClock())
	verifier := strings.Repeat("v", 43)
	for name, tc := range map[string]struct {
		tamper func(url.Values)
		want   string
	}{
		"plain PKCE":        {func(q url.Values) { q.Set("code_challenge_method", "plain") }, "code_challenge_method must be S256"},
		"no PKCE":           {func(q url.Values) { q.Del("code_challenge") }, "code_challenge is required"},
		"no state":          {func(q url.Values) { q.Del("state") }, "state is required"},
		"no nonce":          {func(q url.Values) { q.Del("nonce") }, "nonce is required"},
		"token flow":        {func(q url.Values) { q.Set("response_type", "token") }, "response_type must be code"},
		"no openid":         {func(q url.Values) { q.Set("scope", "profile") }, "scope must include openid"},
		"remote redirect":   {func(q url.Values) { q.Set("redirect_uri", "https://evil.example/cb") }, "redirect_uri must be on a loopback name"},
		"fragment redirect": {func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1/cb#x") }, "redirect_uri must be an absolute"},
		"twice":             {func(q url.Values) { q.Add("state", "again") }, "state must be given once"},
		"control":           {func(q url.Values) { q.Set("state", "a\x00b") }, "state must be at most 512 printable"},
	} {
		q := authorizeQuery(verifier)
		tc.tamper(q)
		res, err := http.Get(srv.URL + "/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 400 || !strings.Contains(string(body), tc.want) || strings.Contains(string(body), `name="subject"`) {
			t.Errorf("%s: %d %s", name, res.StatusCode, body)
		}
	}

	// Hostile strings are escaped text on the page, and the page is never
	// framed.
	q := authorizeQuery(verifier)
	q.Set("client_id", `<script>alert(1)</script>`)
	q.Set("state", `"><img src=x onerror=alert(1)>`)
	res, err := http.Get(srv.URL + "/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || strings.Contains(string(body), "<script>alert") || strings.Contains(string(body), "<img src=x") ||
		!strings.Contains(string(body), "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("hostile strings: %d %s", res.StatusCode, body)
	}
	if res.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("clickjacking headers: %v", res.Header)
	}

	// The form is taken only from the issuer's own page, and only with an
	// identity the API would accept.
	form := authorizeQuery(verifier)
	form.Set("subject", "alice")
	for name, origin := range map[string]string{"other origin": "http://127.0.0.1:1", "none": ""} {
		req, _ := http.NewRequest("POST", srv.URL+"/authorize", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 403 || res.Header.Get("Location") != "" {
			t.Errorf("form from %s: %d %s", name, res.StatusCode, res.Header.Get("Location"))
		}
	}
	if code, res, body := codeFlow(t, srv.URL, authorizeQuery(verifier), "user:alice", "acme"); code != "" || res.StatusCode != 400 || !strings.Contains(body, "may not contain") {
		t.Errorf("id rules: %q %d %s", code, res.StatusCode, body)
	}
}

// FuzzParseAuthorizeRequest: whatever query reaches /authorize, parsing
// never panics, and what it accepts is an S256 challenge, a loopback
// redirect URI and bounded printable values.
func FuzzParseAuthorizeRequest(f *testing.F) {
	f.Add(authorizeQuery(strings.Repeat("v", 43)).Encode())
	f.Add("response_type=code&scope=openid&client_id=c&redirect_uri=http://127.0.0.1/cb&state=s&nonce=n&code_challenge_method=S256&code_challenge=" + strings.Repeat("A", 43))
	f.Add("redirect_uri=http://evil.example/&response_type=code")
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		a, err := ParseAuthorizeRequest(q)
		if err != nil {
			return
		}
		u, perr := url.Parse(a.RedirectURI)
		if perr != nil || !loopbackName(u.Host) || len(a.Challenge) != 43 || a.State == "" || a.ClientID == "" {
			t.Fatalf("accepted %q: %+v", raw, a)
		}
	})
}
