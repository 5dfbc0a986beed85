package testenv

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Outage makes the database of dsn (one of EmptyDatabase's or Database's)
// really unavailable and available again: Stop refuses new connections
// (ALTER DATABASE … ALLOW_CONNECTIONS false) and terminates the open ones,
// Start allows connections again. The test ends with it available.
type Outage struct {
	t    testing.TB
	name string
}

// NewOutage returns the switch for dsn's database.
func NewOutage(t testing.TB, dsn string) *Outage {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	o := &Outage{t: t, name: strings.TrimPrefix(u.Path, "/")}
	t.Cleanup(o.Start)
	return o
}

// Stop refuses new connections and ends every open one.
func (o *Outage) Stop() {
	o.exec("ALTER DATABASE "+pgx.Identifier{o.name}.Sanitize()+" ALLOW_CONNECTIONS false",
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '"+o.name+"' AND pid <> pg_backend_pid()")
}

// Start allows connections again.
func (o *Outage) Start() {
	o.exec("ALTER DATABASE " + pgx.Identifier{o.name}.Sanitize() + " ALLOW_CONNECTIONS true")
}

func (o *Outage) exec(stmts ...string) {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, AdminURL(o.t))
	if err != nil {
		o.t.Fatalf("connect to the test cluster: %v", err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			o.t.Fatalf("%s: %v", s, err)
		}
	}
}
