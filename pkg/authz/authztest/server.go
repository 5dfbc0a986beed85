// Package authztest holds what tests of authz clients share: the conformance
// suite every Client implementation must pass, and a real OpenFGA HTTP API
// started in-process for the Remote client.
package authztest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/openfga/openfga/cmd/run"
	"github.com/openfga/openfga/pkg/logger"
	serverconfig "github.com/openfga/openfga/pkg/server/config"
)

// Server is an OpenFGA HTTP API on 127.0.0.1.
type Server struct {
	URL string // e.g. http://127.0.0.1:43127
	Key string // the preshared key it requires as a Bearer token
}

// StartServer runs OpenFGA's own standalone server — the code behind
// `openfga run` (cmd/run.ServerContext.Run): gRPC service, the grpc-gateway
// HTTP API, preshared-key authentication and the memory datastore — inside
// the test process on free 127.0.0.1 ports, and stops it when the test ends.
func StartServer(t testing.TB) Server {
	t.Helper()
	s := StartServerWith(t, ServerOptions{})
	return Server{URL: s.URL, Key: s.Key}
}

// ServerOptions choose the standalone server's datastore.
type ServerOptions struct {
	// DatastoreURI selects the postgres engine (migrated by the caller with
	// authz.PreparePostgres); empty uses the memory engine.
	DatastoreURI string
}

// Restartable is a standalone OpenFGA that can be stopped and started again
// on the same addresses, key and datastore (to test what clients do while it
// is away).
type Restartable struct {
	URL, Key string
	t        testing.TB
	cfg      *serverconfig.Config
	cancel   context.CancelFunc
	done     chan error
}

// StartServerWith starts a restartable server; it stops when the test ends.
func StartServerWith(t testing.TB, o ServerOptions) *Restartable {
	t.Helper()
	key := "test-key-" + fmt.Sprint(time.Now().UnixNano())
	cfg := serverconfig.DefaultConfig()
	cfg.Datastore.Engine = "memory"
	if o.DatastoreURI != "" {
		cfg.Datastore.Engine = "postgres"
		cfg.Datastore.URI = o.DatastoreURI
	}
	cfg.Authn.Method = "preshared"
	cfg.Authn.AuthnPresharedKeyConfig = &serverconfig.AuthnPresharedKeyConfig{Keys: []string{key}}
	cfg.GRPC.Addr = freeAddr(t)
	cfg.HTTP.Enabled = true
	cfg.HTTP.Addr = freeAddr(t)
	cfg.Playground.Enabled = false
	cfg.Metrics.Enabled = false
	cfg.Trace.Enabled = false
	cfg.ShutdownTimeout = 5 * time.Second
	if err := cfg.Verify(); err != nil {
		t.Fatalf("OpenFGA config: %v", err)
	}
	r := &Restartable{URL: "http://" + cfg.HTTP.Addr, Key: key, t: t, cfg: cfg}
	t.Cleanup(r.Stop)
	r.Start()
	return r
}

// Start runs the server and waits until it answers /healthz.
func (r *Restartable) Start() {
	r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	r.cancel, r.done = cancel, done
	go func() {
		done <- (&run.ServerContext{Logger: logger.NewNoopLogger()}).Run(ctx, r.cfg)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-done:
			r.t.Fatalf("OpenFGA stopped while starting: %v", err)
		default:
		}
		resp, err := http.Get(r.URL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("OpenFGA at %s not healthy after 30 s: %v", r.URL, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop shuts the server down and waits for it; stopping twice is fine.
func (r *Restartable) Stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		r.t.Log("OpenFGA did not stop within 10 s")
	}
	r.cancel = nil
}

// freeAddr returns a 127.0.0.1 address with a port that was free a moment
// ago (OpenFGA listens on addresses it is given, not on listeners).
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
