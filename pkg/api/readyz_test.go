package api_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
)

func getReadyz(t *testing.T, a *app.App) (int, string) {
	t.Helper()
	srv := serve(t, &api.Server{Readiness: a.Readiness()})
	res, err := http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// TestReadyz asks /readyz over HTTP against the real stack: everything
// answers → 200; S3 on a closed port → 503 naming s3 only, with a fixed
// phrase and nothing about where or how (no endpoint, key or error text).
func TestReadyz(t *testing.T) {
	env := apptest.New(t)

	code, body := getReadyz(t, env.App)
	if want := `{"ready":true,"checks":{"postgres":"ok","openfga":"ok","s3":"ok"}}` + "\n"; code != 200 || body != want {
		t.Errorf("healthy: %d %q, want 200 %q", code, body, want)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	s := env.App.Settings
	s.S3Endpoint = closed
	bad := app.New(s, nil)
	bad.SetAuthz(env.FGA)
	t.Cleanup(bad.Close)

	code, body = getReadyz(t, bad)
	if want := `{"ready":false,"checks":{"postgres":"ok","openfga":"ok","s3":"unreachable"}}` + "\n"; code != 503 || body != want {
		t.Errorf("S3 down: %d %q, want 503 %q", code, body, want)
	}
	for _, secret := range []string{closed, s.S3SecretAccessKey, s.S3AccessKeyID, s.S3Bucket, s.DatabaseURL} {
		if strings.Contains(body, secret) {
			t.Errorf("/readyz reveals %q", secret)
		}
	}

	// /healthz stays the liveness answer, whatever the dependencies say.
	srv := httptest.NewServer((&api.Server{Readiness: bad.Readiness()}).Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("/healthz: %d", res.StatusCode)
	}
}
