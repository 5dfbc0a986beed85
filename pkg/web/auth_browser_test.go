package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// apiMe is GET /api/me asked by the page's own script (the session cookie
// goes with it): its status and body.
func apiMe(t *testing.T, tab context.Context) string {
	t.Helper()
	got, err := chromedp.Run(tab, chromedp.Evaluate[string](`fetch("/api/me", {credentials: "same-origin"}).then(function (r) { return r.text().then(function (b) { return r.status + " " + b; }); })`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestSignInInChromium: a person presses Sign in, chooses names on the dev
// issuer's page, lands back signed in (the header says who; /api/me
// answers the subject); the session cookie is HttpOnly and
// SameSite=Strict; Sign out ends the session on the server, so the cookie
// copied out of the browser opens nothing afterwards. Screenshots of the
// sign-in screens in English, Japanese and 360 px wide.
func TestSignInInChromium(t *testing.T) {
	t.Parallel()
	srv := startSignInServe(t)
	tab := testenv.BrowserTab(t, 3*time.Minute)

	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/auth/sign-in?lang=en"), chromedp.WaitVisible("#sign-in")); err != nil {
		t.Fatal(err)
	}
	shot(t, tab, "signin-signed-out-en.png")
	if err := chromedp.Do(tab, chromedp.Click("#sign-in"), chromedp.WaitVisible("#issuer-subject")); err != nil {
		t.Fatal(err)
	}
	loc, _ := chromedp.Run(tab, chromedp.Location())
	if !strings.HasPrefix(loc, srv.Issuer.Issuer()+"/authorize?") || !strings.Contains(loc, "code_challenge_method=S256") {
		t.Fatalf("sign in led to %s", loc)
	}
	shot(t, tab, "signin-issuer-en.png")
	if err := chromedp.Do(tab,
		chromedp.SetValue("#issuer-subject", "alice"),
		chromedp.SetValue("#issuer-orgs", "acme, beta"),
		chromedp.Click("#issuer-continue"),
	); err != nil {
		t.Fatal(err)
	}
	waitLocation(t, tab, srv.URL+"/")
	if got := apiMe(t, tab); !strings.HasPrefix(got, "200 ") || !strings.Contains(got, `"subject":"alice"`) || !strings.Contains(got, `"organizations":["acme","beta"]`) {
		t.Fatalf("/api/me after sign-in: %s", got)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/auth/sign-in"), chromedp.WaitVisible("#sign-out")); err != nil {
		t.Fatal(err)
	}
	who, _ := chromedp.Run(tab, chromedp.Text("#who .me"))
	if !strings.Contains(who, "alice") || !strings.Contains(who, "acme, beta") {
		t.Fatalf("header says %q", who)
	}
	meta, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('meta[name="csrf-token"]').content`))
	shot(t, tab, "signin-signed-in-en.png")

	cookies, err := chromedp.Call(tab, network.GetCookies, network.GetCookiesParams{URLs: []string{srv.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	var session *network.Cookie
	for _, c := range cookies.Cookies {
		if c.Name == identity.SessionCookie {
			session = c
		}
	}
	if session == nil || !session.HTTPOnly || session.SameSite != network.CookieSameSiteStrict || session.Path != "/" || session.Secure {
		t.Fatalf("session cookie %+v", session)
	}
	if meta != identity.CSRFToken(session.Value) {
		t.Fatalf("the page's CSRF token is not the session's")
	}
	// The script cannot read it.
	if doc, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.cookie`)); strings.Contains(doc, identity.SessionCookie) {
		t.Fatalf("document.cookie shows the session: %q", doc)
	}

	// Japanese, and 360 px wide.
	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/auth/sign-in?lang=ja"), chromedp.WaitVisible("#sign-out")); err != nil {
		t.Fatal(err)
	}
	if txt, _ := chromedp.Run(tab, chromedp.Text("#sign-out")); txt != "サインアウト" {
		t.Errorf("Japanese sign-out reads %q", txt)
	}
	shot(t, tab, "signin-signed-in-ja.png")
	if err := chromedp.Do(tab, chromedp.EmulateViewport(360, 800), chromedp.Navigate(srv.URL+"/auth/sign-in?lang=en"), chromedp.WaitVisible("#sign-out")); err != nil {
		t.Fatal(err)
	}
	shot(t, tab, "signin-signed-in-360.png")
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatal(err)
	}

	// Sign out: the form posts and the browser lands on the signed-out
	// page, which has no sign-out button (polled, so that the navigation
	// cannot strand a query on the page it replaced; the page signed out
	// from shows a message too).
	if err := chromedp.Do(tab, chromedp.Click("#sign-out")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, 60*time.Second, "the signed-out page", `document.readyState === "complete" && !document.querySelector("#sign-out") && (function (e) { return !!e && e.offsetParent !== null; })(document.querySelector("#auth-message"))`)
	shot(t, tab, "signin-signed-out-after-en.png")
	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/auth/sign-in"), chromedp.WaitVisible("#sign-in")); err != nil {
		t.Fatal(err)
	}
	if got := apiMe(t, tab); !strings.HasPrefix(got, "401 ") {
		t.Fatalf("/api/me after sign-out: %s", got)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/api/me", nil)
	req.AddCookie(&http.Cookie{Name: identity.SessionCookie, Value: session.Value})
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("the cookie replayed after sign-out: %d", res.StatusCode)
	}

	// The Japanese and narrow sign-in screens, the issuer's page in
	// Japanese (Accept-Language).
	if os.Getenv("LEDGER_TEST_SCREENSHOTS") != "" {
		if _, err := chromedp.Call(tab, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": "ja"}}); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/auth/sign-in?lang=ja"), chromedp.WaitVisible("#sign-in")); err != nil {
			t.Fatal(err)
		}
		shot(t, tab, "signin-signed-out-ja.png")
		if err := chromedp.Do(tab, chromedp.Click("#sign-in"), chromedp.WaitVisible("#issuer-subject")); err != nil {
			t.Fatal(err)
		}
		shot(t, tab, "signin-issuer-ja.png")
		if err := chromedp.Do(tab, chromedp.EmulateViewport(360, 800), chromedp.Reload(), chromedp.WaitVisible("#issuer-subject")); err != nil {
			t.Fatal(err)
		}
		shot(t, tab, "signin-issuer-360.png")
		if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/auth/sign-in?lang=en"), chromedp.WaitVisible("#sign-in")); err != nil {
			t.Fatal(err)
		}
		shot(t, tab, "signin-signed-out-360.png")
	}
}

func waitLocation(t *testing.T, tab context.Context, want string) {
	t.Helper()
	var loc string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		loc, _ = chromedp.Run(tab, chromedp.Location())
		if loc == want {
			return
		}
	}
	t.Fatalf("the browser is at %s, want %s", loc, want)
}

// TestCSRFFromAnotherOriginInChromium: signed in, the person opens a page
// of another loopback origin (same site: the SameSite=Strict cookie goes
// with its requests). The page posts forms and sends fetches with
// credentials to every state-changing route serve has (listed from its
// mux). Every one that reaches serve is answered 403; the session
// survives.
func TestCSRFFromAnotherOriginInChromium(t *testing.T) {
	t.Parallel()
	srv := startSignInServe(t)
	tab := testenv.BrowserTab(t, 3*time.Minute)
	signIn(t, tab, srv.URL, "alice", "acme")
	if got := apiMe(t, tab); !strings.HasPrefix(got, "200 ") {
		t.Fatalf("not signed in: %s", got)
	}

	routes := unsafeRoutes(srv.Server.Routes())
	list, _ := json.Marshal(routes2js(srv.URL, routes))
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/attack.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprintf(w, `(function () {
  var routes = %s, n = 0;
  routes.forEach(function (rt, i) {
    if (rt.method === "POST") {
      var f = document.createElement("form"), fr = document.createElement("iframe");
      fr.name = "f" + i; document.body.appendChild(fr);
      f.method = "POST"; f.action = rt.url; f.target = fr.name;
      var inp = document.createElement("input"); inp.name = "csrf"; inp.value = "guess"; f.appendChild(inp);
      document.body.appendChild(f); f.submit();
    }
    fetch(rt.url, {method: rt.method, mode: "no-cors", credentials: "include", body: rt.method === "GET" ? undefined : "{}"})
      .catch(function () {}).then(function () { n++; if (n === routes.length) { document.title = "done"; } });
  });
})();`, list)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><title>evil</title><body><script src="/attack.js"></script></body>`)
		}
	}))
	defer evil.Close()

	var mu sync.Mutex
	sent := map[network.RequestID]string{}
	answered := map[string][]int64{}
	if err := chromedp.Listen(tab, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if strings.HasPrefix(e.Request.URL, srv.URL+"/") {
				sent[e.RequestID] = e.Request.Method + " " + strings.TrimPrefix(e.Request.URL, srv.URL)
			}
		case *network.EventResponseReceived:
			if k, ok := sent[e.RequestID]; ok {
				answered[k] = append(answered[k], e.Response.Status)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(evil.URL+"/")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		title, _ := chromedp.Run(tab, chromedp.Title())
		if title == "done" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the attack page did not finish (title %q)", title)
		}
	}
	time.Sleep(time.Second) // the forms' answers
	mu.Lock()
	for _, rt := range routes {
		key := rt.method + " " + rt.path
		statuses := answered[key]
		if rt.method == "POST" && len(statuses) == 0 {
			t.Errorf("%s: the attack's requests got no answer", key)
		}
		for _, st := range statuses {
			if st != 403 {
				t.Errorf("%s from another origin: %d", key, st)
			}
		}
	}
	t.Logf("answers seen: %v", answered)
	mu.Unlock()

	// The session survived (sign-out among the attacked routes).
	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/auth/sign-in"), chromedp.WaitVisible("#sign-out")); err != nil {
		t.Fatal(err)
	}
	if got := apiMe(t, tab); !strings.HasPrefix(got, "200 ") {
		t.Fatalf("session after the attack: %s", got)
	}
	// The console's own page, with its token, is not refused: a
	// state-changing call through L.api reaches its route.
	got, err := chromedp.Run(tab, chromedp.Evaluate[string](`L.api("POST", "/api/archives/00000000-0000-0000-0000-000000000001/url", {}).then(function (r) { return String(r.status); })`, chromedp.EvalAwaitPromise))
	if err != nil || got == "403" {
		t.Fatalf("the console's own call: %s %v", got, err)
	}
}

type jsRoute struct {
	Method string `json:"method"`
	URL    string `json:"url"`
}

func routes2js(base string, rs []route) []jsRoute {
	out := make([]jsRoute, len(rs))
	for i, r := range rs {
		out[i] = jsRoute{r.method, base + r.path}
	}
	return out
}

// TestClickjackingHeaders: console pages (signed in or out), the sign-in's
// outcome pages and the issuer's sign-in page refuse to be framed.
func TestClickjackingHeaders(t *testing.T) {
	t.Parallel()
	srv := startSignInServe(t)
	b := newBrowser(t)
	site := &authSite{URL: srv.URL, Issuer: srv.Issuer}
	authorizeURL := site.begin(t, b)
	check := func(name string, res *http.Response) {
		t.Helper()
		if res.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("%s: X-Frame-Options %q, CSP %q", name, res.Header.Get("X-Frame-Options"), res.Header.Get("Content-Security-Policy"))
		}
	}
	res, _ := b.do("GET", srv.URL+"/auth/sign-in", "", nil)
	check("sign-in page", res)
	res, _ = b.do("GET", authorizeURL.String(), "", nil)
	check("issuer page", res)
	res, _ = b.do("GET", srv.URL+"/auth/callback?code=x&state=y", "", nil)
	check("refused callback", res)
	cb := site.authorize(t, b, authorizeURL, "alice", "acme")
	res, _ = b.do("GET", cb.String(), "", nil)
	check("signed-in page", res)
	for _, p := range srv.Server.Routes() {
		if strings.HasPrefix(p, "GET /") && !strings.HasPrefix(p, "GET /api/") && !strings.Contains(p, "{") && !strings.HasPrefix(p, "GET /healthz") && !strings.HasPrefix(p, "GET /readyz") && !strings.HasPrefix(p, "GET /auth/callback") {
			res, _ := b.do("GET", srv.URL+strings.TrimSuffix(strings.TrimPrefix(p, "GET "), "{$}"), "", nil)
			if strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
				check(p, res)
			}
		}
	}
}
