// Package testenv gives tests their own fresh database (migrated) and their
// own bucket on the dev stack that `make test` starts. A test that needs a
// service fails when CI=true and the service is missing, and skips otherwise,
// naming the variable that was not set.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
)

// need returns the value of the environment variable name, or stops the test:
// fatally under CI (a missing service must never pass silently), else a skip.
func need(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v != "" {
		return v
	}
	msg := fmt.Sprintf("%s is not set: run the tests with `make test`, which starts PostgreSQL and versitygw", name)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// RandomName returns prefix followed by 12 random lowercase hex characters.
func RandomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// AdminURL is the superuser URL of the test cluster.
func AdminURL(t testing.TB) string { return need(t, "LEDGER_TEST_PG_URL") }

// EmptyDatabase creates a database with no schema and drops it when the test
// ends. It returns the database's URL.
func EmptyDatabase(t testing.TB) string {
	t.Helper()
	admin := AdminURL(t)
	name := RandomName("t_")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to the test cluster: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Logf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
	})
	return WithDatabase(admin, name)
}

// WithDatabase returns url with its database name replaced.
func WithDatabase(url, name string) string {
	rest := ""
	if i := strings.IndexByte(url, '?'); i >= 0 {
		url, rest = url[:i], url[i:]
	}
	i := strings.LastIndexByte(url, '/')
	return url[:i+1] + name + rest
}

// Database creates a fresh database with the ledger schema applied.
func Database(t testing.TB) string {
	t.Helper()
	dsn := EmptyDatabase(t)
	m, err := postgres.NewMigrator(context.Background(), dsn)
	if err != nil {
		t.Fatalf("migrator: %v", err)
	}
	defer m.Close()
	if err := m.Up(); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	return dsn
}

// S3Config is the test S3 server's configuration.
func S3Config(t testing.TB) blob.Config {
	t.Helper()
	return blob.Config{
		Endpoint:        need(t, "LEDGER_TEST_S3_ENDPOINT"),
		Region:          "us-east-1",
		AccessKeyID:     need(t, "LEDGER_TEST_S3_ACCESS_KEY"),
		SecretAccessKey: need(t, "LEDGER_TEST_S3_SECRET_KEY"),
		ForcePathStyle:  true,
	}
}

// Bucket creates a bucket with a random name, emptied and removed when the
// test ends, and returns a client for it.
func Bucket(t testing.TB) (*blob.Client, string, blob.Config) {
	t.Helper()
	cfg := S3Config(t)
	c := blob.New(cfg)
	name := RandomName("t-")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.CreateBucket(ctx, name); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := c.DeleteBucket(ctx, name); err != nil {
			t.Logf("delete bucket %s: %v", name, err)
		}
	})
	return c, name, cfg
}

// RefusedOnce wraps a test site's handler so its first request answers
// 429 with Retry-After: 1 and later ones reach h: a host under a 429 storm
// that a page's one retry gets through.
func RefusedOnce(h http.HandlerFunc) http.HandlerFunc {
	var mu sync.Mutex
	refused := false
	return func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first := !refused
		refused = true
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		h(w, r)
	}
}
