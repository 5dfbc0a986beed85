package authz

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/pgaddr"

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
		return nil, &UnreachableError{What: "the OpenFGA datastore (PostgreSQL)", Where: pgaddr.Host(uri, "CAPTURE_LEDGER_FGA_DATASTORE_URI"), Err: pgaddr.Cause(err)}
	}
	st, err := ds.IsReady(ctx)
	if err != nil || !st.IsReady {
		ds.Close()
		if err == nil {
			err = errors.New(st.Message)
		}
		return nil, fmt.Errorf("the OpenFGA datastore at %s is not ready (%v): run `ledgerctl fga deploy`, which migrates it", pgaddr.Host(uri, "CAPTURE_LEDGER_FGA_DATASTORE_URI"), err)
	}
	e, err := newEmbedded(ds, opts)
	if err != nil {
		return nil, err
	}
	e.where = pgaddr.Host(uri, "CAPTURE_LEDGER_FGA_DATASTORE_URI")
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
		return fmt.Errorf("migrate the OpenFGA datastore at %s: %w", pgaddr.Host(uri, "CAPTURE_LEDGER_FGA_DATASTORE_URI"), pgaddr.Cause(err))
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
			return fmt.Errorf("create the OpenFGA datastore database %q: %w", name, pgaddr.Cause(err))
		}
		return nil
	}
	return lastErr
}

func connect(ctx context.Context, uri string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(uri)
	if err != nil {
		return nil, fmt.Errorf("the OpenFGA datastore URL does not parse: %w", pgaddr.Cause(err))
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
				return nil, &UnreachableError{What: "the OpenFGA datastore (PostgreSQL)", Where: pgaddr.Host(uri, "CAPTURE_LEDGER_FGA_DATASTORE_URI"), Err: fmt.Errorf("%s (SQLSTATE %s)", pgErr.Message, pgErr.Code)}
			}
			return nil, fmt.Errorf("the OpenFGA datastore at %s refused the connection: %s", pgaddr.Host(uri, "CAPTURE_LEDGER_FGA_DATASTORE_URI"), pgErr.Message)
		}
		return nil, &UnreachableError{What: "the OpenFGA datastore (PostgreSQL)", Where: pgaddr.Host(uri, "CAPTURE_LEDGER_FGA_DATASTORE_URI"), Err: pgaddr.Cause(err)}
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
