package authz

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/openfga/openfga/pkg/storage/migrate"
	"github.com/openfga/openfga/pkg/storage/postgres"
	"github.com/openfga/openfga/pkg/storage/sqlcommon"
)

// DatastoreMaxOpenConns is the connection limit of the embedded Postgres
// datastore: OpenFGA's standalone default, not its embedded default of 4.
const DatastoreMaxOpenConns = 30

// ErrDatastoreMissing says the embedded OpenFGA's database does not exist.
var ErrDatastoreMissing = errors.New("the OpenFGA datastore database does not exist: run `ledgerctl fga deploy`, which creates and migrates it")

// NewPostgres starts an embedded OpenFGA on its PostgreSQL datastore at uri
// (a postgres:// URL of its own database). The database must exist and be
// migrated (see PreparePostgres).
func NewPostgres(ctx context.Context, uri string, opts Options) (*Embedded, error) {
	if err := pingPostgres(ctx, uri); err != nil {
		return nil, err
	}
	ds, err := postgres.New(uri, sqlcommon.NewConfig(
		sqlcommon.WithMaxOpenConns(DatastoreMaxOpenConns),
		sqlcommon.WithPingTimeout(5*time.Second),
		sqlcommon.WithPingRetryMaxElapsedTime(10*time.Second),
	))
	if err != nil {
		return nil, &UnreachableError{What: "the OpenFGA datastore (PostgreSQL)", Where: pgHost(uri), Err: pgCause(err)}
	}
	st, err := ds.IsReady(ctx)
	if err != nil || !st.IsReady {
		ds.Close()
		if err == nil {
			err = errors.New(st.Message)
		}
		return nil, fmt.Errorf("the OpenFGA datastore at %s is not ready (%v): run `ledgerctl fga deploy`, which migrates it", pgHost(uri), err)
	}
	e, err := newEmbedded(ds, opts)
	if err != nil {
		return nil, err
	}
	e.where = pgHost(uri)
	return e, nil
}

// migrateMu serialises OpenFGA's migrations: goose keeps global state.
var migrateMu sync.Mutex

// PreparePostgres creates the datastore database named in uri when it is
// missing and brings its schema up to date with OpenFGA's own migrations.
func PreparePostgres(ctx context.Context, uri string) error {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return errors.New("the OpenFGA datastore must be a postgres:// URL (CAPTURE_LEDGER_FGA_DATASTORE_URI)")
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return errors.New("the OpenFGA datastore URL names no database (CAPTURE_LEDGER_FGA_DATASTORE_URI)")
	}
	if err := pingPostgres(ctx, uri); errors.Is(err, ErrDatastoreMissing) {
		if err := createDatabase(ctx, u, name); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	migrateMu.Lock()
	defer migrateMu.Unlock()
	err = migrate.RunMigrations(migrate.MigrationConfig{
		Engine:      "postgres",
		URI:         uri,
		Timeout:     30 * time.Second,
		PingTimeout: 5 * time.Second, // zero fails at once with "context deadline exceeded"
	})
	if err != nil {
		return fmt.Errorf("migrate the OpenFGA datastore at %s: %w", pgHost(uri), pgCause(err))
	}
	return nil
}

func createDatabase(ctx context.Context, u *url.URL, name string) error {
	admin := *u
	var lastErr error
	for _, db := range []string{"postgres", "template1"} {
		admin.Path = "/" + db
		conn, err := connect(ctx, admin.String())
		if err != nil {
			lastErr = err
			continue
		}
		defer conn.Close(context.WithoutCancel(ctx))
		_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // created meanwhile
			return nil
		}
		if err != nil {
			return fmt.Errorf("create the OpenFGA datastore database %q: %w", name, pgCause(err))
		}
		return nil
	}
	return lastErr
}

func connect(ctx context.Context, uri string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(uri)
	if err != nil {
		return nil, fmt.Errorf("the OpenFGA datastore URL does not parse: %w", pgCause(err))
	}
	cfg.ConnectTimeout = 5 * time.Second
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			if pgErr.Code == "3D000" { // invalid_catalog_name
				return nil, ErrDatastoreMissing
			}
			if outageCode(pgErr.Code) {
				return nil, &UnreachableError{What: "the OpenFGA datastore (PostgreSQL)", Where: pgHost(uri), Err: fmt.Errorf("%s (SQLSTATE %s)", pgErr.Message, pgErr.Code)}
			}
			return nil, fmt.Errorf("the OpenFGA datastore at %s refused the connection: %s", pgHost(uri), pgErr.Message)
		}
		return nil, &UnreachableError{What: "the OpenFGA datastore (PostgreSQL)", Where: pgHost(uri), Err: pgCause(err)}
	}
	return conn, nil
}

func pingPostgres(ctx context.Context, uri string) error {
	conn, err := connect(ctx, uri)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// pgHost is host:port of a PostgreSQL URL, for messages (never a password).
func pgHost(uri string) string {
	cfg, err := pgconn.ParseConfig(uri)
	if err != nil {
		if u, uerr := url.Parse(uri); uerr == nil && u.Host != "" {
			return u.Host
		}
		return "(unparsable CAPTURE_LEDGER_FGA_DATASTORE_URI)"
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return fmt.Sprintf("%s (socket, port %d)", cfg.Host, cfg.Port)
	}
	return net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))
}

// pgCause is the part of a driver error worth showing: PostgreSQL's own
// message, or the network error under a failed dial. (The ledger's store
// has its own; an adapter does not import another.)
func pgCause(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return errors.New(pgErr.Message)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return opErr.Err
	}
	return err
}
