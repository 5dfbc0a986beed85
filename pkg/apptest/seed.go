package apptest

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/authz"
)

// Seeded is one archive SeedArchives inserted.
type Seeded struct {
	ID  string
	At  time.Time
	Org string
}

// SeedArchives inserts n archives whose organization orgOf(i) decides, a
// third of them sharing one captured_at, with their admission tuples in
// OpenFGA (written in batches of 100). It returns every row in list order:
// newest first, ties by id descending.
func SeedArchives(t testing.TB, env *Env, n int, orgOf func(i int) string) []Seeded {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var out []Seeded
	var rows [][]any
	var tuples []authz.Tuple
	var sources []Source
	for i := range n {
		id, task := uuid.NewString(), uuid.NewString()
		at := base.Add(time.Duration(i)*time.Minute + time.Duration(i)*time.Microsecond)
		if i%3 == 1 {
			at = base.Add(24 * time.Hour) // many rows on one timestamp
		}
		org := orgOf(i)
		out = append(out, Seeded{id, at, org})
		rows = append(rows, []any{id, task, env.Bucket, fmt.Sprintf("org/%s/%d.wacz", org, i), fmt.Sprintf("https://e.com/%d", i), at})
		tuples = append(tuples,
			authz.Tuple{User: authz.CaptureJob(task), Relation: "parent", Object: authz.Archive(id)},
			authz.Tuple{User: authz.Organization(org), Relation: "parent", Object: authz.CaptureJob(task)})
		sources = append(sources, Source{ArchiveID: id, TaskID: task, At: at, Kind: "organization", Principal: org})
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"archives"}, []string{"id", "task_id", "bucket", "object_key", "source_url", "captured_at"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	if err := CopySources(ctx, conn, sources); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(tuples); i += 100 {
		if err := env.FGA.Write(ctx, tuples[i:min(i+100, len(tuples))], nil); err != nil {
			t.Fatal(err)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.After(out[j].At)
		}
		return out[i].ID > out[j].ID
	})
	return out
}

// Source is one grantee the ledger records for an archive's job when it
// queues the job's tuples (migrations/000008_list_sources.up.sql): what a
// seeder that writes tuples straight to OpenFGA must record too, or the
// candidate list will not find the archive.
type Source struct {
	ArchiveID, TaskID string
	At                time.Time
	Kind, Principal   string // "organization" or "owner"
}

// Copier is a *pgx.Conn, a pgx.Tx or a *pgxpool.Pool.
type Copier interface {
	CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error)
}

// CopySources records src in job_sources and archive_sources by COPY. Each
// (task, kind, principal) must be given once per archive, as insertArchives
// records them.
func CopySources(ctx context.Context, c Copier, src []Source) error {
	jobs := map[[3]string]bool{}
	var jobRows, archRows [][]any
	for _, s := range src {
		k := [3]string{s.TaskID, s.Kind, s.Principal}
		if !jobs[k] {
			jobs[k] = true
			jobRows = append(jobRows, []any{s.TaskID, s.Kind, s.Principal})
		}
		archRows = append(archRows, []any{s.ArchiveID, s.At, s.Kind, s.Principal})
	}
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"job_sources"}, []string{"task_id", "kind", "principal"}, pgx.CopyFromRows(jobRows)); err != nil {
		return fmt.Errorf("copy job_sources: %w", err)
	}
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"archive_sources"}, []string{"archive_id", "captured_at", "kind", "principal"}, pgx.CopyFromRows(archRows)); err != nil {
		return fmt.Errorf("copy archive_sources: %w", err)
	}
	return nil
}
