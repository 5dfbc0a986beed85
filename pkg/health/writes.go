package health

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
)

// Names of the doctor's checks that prove a dependency can do what serve
// needs of it, beyond answering.
const (
	PostgresWrite = "postgres-write"
	S3Write       = "s3-write"
	FGACheck      = "fga-check"
)

// ProbePrefix is where the S3 write check puts (and deletes) its probe
// object in the bucket.
const ProbePrefix = ".ledgerctl-doctor/"

// probePayload is the outbox row the PostgreSQL write check inserts (and
// rolls back): a payload naming no tuple, which the drain would skip.
const probePayload = `{"writes": [], "deletes": []}`

// postgresWrite writes a row and reads it back in a transaction it rolls
// back: a row of fga_outbox, whose insert runs the trigger serve's writes
// run (PL/pgSQL), else, before the schema exists, a row of a temporary
// table. SELECT 1 answers on a server that cannot write: read-only by
// default, a standby, a full disk, or packages upgraded under the running
// server (a PL/pgSQL library that no longer loads).
func (c *Checker) postgresWrite(ctx context.Context) Result {
	host := postgres.HostOf(c.App.Config().DatabaseURL)
	st, err := c.App.Store(ctx)
	if err != nil {
		return failed(err, "error", "check DATABASE_URL", "is the stack up? `make stack-up` (local), or check DATABASE_URL")
	}
	where, err := writeReadBack(ctx, st.Pool)
	if err != nil {
		if ctx.Err() != nil {
			return Result{Status: Fail, Detail: "no answer: " + oneLine(err.Error())}
		}
		r := Result{Status: Fail, Reason: "refuses writes",
			Detail: fmt.Sprintf("PostgreSQL at %s answers but refused a write: %s", host, oneLine(err.Error())),
			Hint:   "see the detail: a server whose packages were upgraded under it needs a restart (`make stack-down && make stack-up` locally, else restart the PostgreSQL service)"}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			switch pgErr.Code {
			case "25006": // read_only_sql_transaction
				r.Hint = "the database or role makes transactions read-only (default_transaction_read_only), or DATABASE_URL names a standby: `ALTER DATABASE <db> SET default_transaction_read_only = off` (then reconnect), or point DATABASE_URL at the primary"
			case "53100": // disk_full
				r.Hint = "the database server's disk is full: free space on it"
			case "42501": // insufficient_privilege
				r.Hint = "the role of DATABASE_URL may not write: GRANT it INSERT on the ledger's tables (`ledgerctl migrate up` as the owner)"
			}
		}
		return r
	}
	return Result{Status: OK, Detail: fmt.Sprintf("wrote and read back a row of %s at %s (rolled back)", where, host)}
}

// writeReadBack is postgresWrite's transaction; it names the table used.
func writeReadBack(ctx context.Context, db interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}) (string, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // the point: nothing is kept

	sp, err := tx.Begin(ctx) // a savepoint: an absent table must not abort the transaction
	if err != nil {
		return "", err
	}
	var id int64
	err = sp.QueryRow(ctx, `INSERT INTO fga_outbox (payload) VALUES ($1::jsonb) RETURNING id`, probePayload).Scan(&id)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table: no schema yet
		if err := sp.Rollback(ctx); err != nil {
			return "", err
		}
		if _, err := tx.Exec(ctx, `CREATE TEMPORARY TABLE ledgerctl_doctor_probe (v text) ON COMMIT DROP`); err != nil {
			return "", err
		}
		var v string
		if err := tx.QueryRow(ctx, `INSERT INTO ledgerctl_doctor_probe (v) VALUES ('probe') RETURNING v`).Scan(&v); err != nil {
			return "", err
		}
		if err := tx.QueryRow(ctx, `SELECT v FROM ledgerctl_doctor_probe`).Scan(&v); err != nil || v != "probe" {
			return "", fmt.Errorf("read back %q from a temporary table: %v", v, err)
		}
		return "a temporary table", nil
	}
	if err != nil {
		return "", err
	}
	var same bool
	if err := sp.QueryRow(ctx, `SELECT payload = $2::jsonb FROM fga_outbox WHERE id = $1`, id, probePayload).Scan(&same); err != nil {
		return "", fmt.Errorf("read back outbox row %d: %w", id, err)
	}
	if !same {
		return "", fmt.Errorf("outbox row %d read back different", id)
	}
	return "fga_outbox", nil
}

// s3Write puts a small probe object under ProbePrefix, reads it back and
// deletes it: HEAD of the bucket answers for credentials that may only
// read, and for a bucket whose storage refuses writes.
func (c *Checker) s3Write(ctx context.Context, bc *blob.Client) Result {
	bucket := c.App.Config().S3Bucket
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	key := ProbePrefix + time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(rnd[:])
	body := []byte("ledgerctl doctor probe " + key)
	fail := func(op string, err error) Result {
		r := failed(err, "refused", "", "is the stack up? `make stack-up` (local), or check CAPTURE_LEDGER_S3_ENDPOINT")
		r.Detail = fmt.Sprintf("S3 at %s: %s of probe object s3://%s/%s failed: %s", bc.Endpoint(), op, bucket, key, oneLine(err.Error()))
		if !r.Unreachable {
			r.Hint = fmt.Sprintf("the credentials (CAPTURE_LEDGER_S3_ACCESS_KEY_ID) need s3:PutObject, s3:GetObject and s3:DeleteObject on bucket %s (captures write archives there, deletions remove them); check the bucket's policy and the gateway's storage", bucket)
		}
		return r
	}
	if err := bc.Put(ctx, bucket, key, "text/plain", body); err != nil {
		return fail("PUT", err)
	}
	got, err := bc.Get(ctx, bucket, key)
	if err == nil && string(got) != string(body) {
		err = fmt.Errorf("read back %d bytes that differ from the %d written", len(got), len(body))
	}
	derr := bc.Delete(context.WithoutCancel(ctx), bucket, key)
	if err != nil {
		return fail("GET", err)
	}
	if derr != nil {
		return fail("DELETE", derr)
	}
	return Result{Status: OK, Detail: fmt.Sprintf("put, read back and deleted s3://%s/%s at %s", bucket, key, bc.Endpoint())}
}

// fgaCheck asks the pinned model one question serve asks on every archive
// URL (may this person view this archive, with their organizations as
// contextual tuples and the current time for grant expiry): reading the
// model does not prove it can answer.
func (c *Checker) fgaCheck(ctx context.Context) Result {
	cl, err := c.App.Authz(ctx)
	if err != nil {
		return failed(err, "error", "`ledgerctl fga deploy`", "is the stack up? `make stack-up`")
	}
	storeID, modelID := cl.Target()
	allowed, err := cl.Check(ctx, authz.ArchiveCheck("ledgerctl-doctor", []string{"ledgerctl-doctor"}, "00000000-0000-0000-0000-000000000000", c.now()))
	if err != nil {
		r := failed(err, "check failed", "`ledgerctl fga deploy` (writes the model and pins CAPTURE_LEDGER_FGA_STORE_ID and _MODEL_ID in .env.local), then restart serve",
			"is the stack up? `make stack-up`; or check CAPTURE_LEDGER_FGA_API_URL")
		r.Detail = fmt.Sprintf("a can_view check against model %s of store %s failed: %s", modelID, storeID, oneLine(err.Error()))
		return r
	}
	if allowed {
		return Result{Status: Fail, Reason: "wrong answer",
			Detail: fmt.Sprintf("model %s allows a made-up person to view a made-up archive", modelID),
			Hint:   "the pinned model is not the one this ledgerctl carries: `ledgerctl fga deploy`, then restart serve"}
	}
	return Result{Status: OK, Detail: fmt.Sprintf("model %s answered a can_view check (denied, as it should)", modelID)}
}
