package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers pgx5://
	"github.com/golang-migrate/migrate/v4/source/iofs"

	"github.com/capture-ledger/ledgerctl/migrations"
)

// MigrationStatus is where a database stands against the embedded migrations.
type MigrationStatus struct {
	Current   uint   `json:"current"`
	Dirty     bool   `json:"dirty"`
	Latest    uint   `json:"latest"`
	Available []uint `json:"available"`
}

// Pending is the number of migrations not applied yet.
func (s MigrationStatus) Pending() int {
	n := 0
	for _, v := range s.Available {
		if v > s.Current {
			n++
		}
	}
	return n
}

// Migrator runs the embedded migrations against one database.
type Migrator struct {
	m   *migrate.Migrate
	dsn string
}

// NewMigrator checks the database is reachable, then opens golang-migrate on it.
func NewMigrator(ctx context.Context, dsn string) (*Migrator, error) {
	pool, err := Open(ctx, dsn, 1)
	if err != nil {
		return nil, err
	}
	pool.Close()
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return nil, err
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, migrateURL(dsn))
	if err != nil {
		return nil, &UnreachableError{Host: HostOf(dsn), Err: err}
	}
	return &Migrator{m: m, dsn: dsn}, nil
}

// migrateURL rewrites postgres:// to the pgx5:// scheme golang-migrate uses.
func migrateURL(dsn string) string {
	for _, p := range []string{"postgresql://", "postgres://"} {
		if strings.HasPrefix(dsn, p) {
			return "pgx5://" + strings.TrimPrefix(dsn, p)
		}
	}
	return dsn
}

// Close releases the migrator's connection.
func (m *Migrator) Close() error {
	se, de := m.m.Close()
	return errors.Join(se, de)
}

// Up applies every pending migration; a database already at the latest
// version is not an error.
func (m *Migrator) Up() error {
	if err := m.m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate up: %w", err)
	}
	return nil
}

// Down reverts exactly one migration.
func (m *Migrator) Down() error {
	if err := m.m.Steps(-1); err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, migrate.ErrNoChange) {
			return errors.New("migrate down: nothing to revert (the database has no migration applied)")
		}
		return fmt.Errorf("migrate down: %w", err)
	}
	return nil
}

// Force sets the recorded version without running anything (to recover from a
// dirty state after a failed migration was repaired by hand).
func (m *Migrator) Force(version int) error {
	st, err := m.Status()
	if err != nil {
		return err
	}
	if version != -1 && version != 0 {
		found := false
		for _, v := range st.Available {
			found = found || int(v) == version
		}
		if !found {
			return fmt.Errorf("migrate force: no migration %d (available: %v)", version, st.Available)
		}
	}
	if version == 0 {
		version = -1 // golang-migrate spells "nothing applied" as -1
	}
	return m.m.Force(version)
}

// Status reports the current version and the migrations the binary carries.
func (m *Migrator) Status() (MigrationStatus, error) {
	st := MigrationStatus{Available: Available()}
	if len(st.Available) > 0 {
		st.Latest = st.Available[len(st.Available)-1]
	}
	v, dirty, err := m.m.Version()
	if err != nil && !errors.Is(err, migrate.ErrNilVersion) {
		return st, fmt.Errorf("migrate status: %w", err)
	}
	st.Current, st.Dirty = v, dirty
	return st, nil
}

// Available lists the versions of the embedded migrations, ascending.
func Available() []uint {
	entries, _ := fs.ReadDir(migrations.FS, ".")
	seen := map[uint]bool{}
	var out []uint
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if !ok {
			continue
		}
		if v, err := strconv.ParseUint(num, 10, 32); err == nil && !seen[uint(v)] {
			seen[uint(v)] = true
			out = append(out, uint(v))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
