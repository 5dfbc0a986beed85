-- Shares and deletions (docs/shares.md).
--
-- shares is the audit trail of direct shares: who granted which archive to
-- whom, when, for how long, and who ended it when. The OpenFGA tuple of a
-- share (user:<u> or organization:<o>#member, viewer, archive:<id>, with the
-- non_expired_grant condition) is queued in fga_outbox in the same
-- transaction as the row; the row is the ledger's record of every viewer
-- tuple it wrote. A share's tuple is in OpenFGA exactly while revoked_at is
-- NULL: revoking, replacing (a new share to the same grantee) and deleting
-- the archive set revoked_at and queue the tuple's delete. Expired shares keep
-- their row (and their tuple, whose condition is false from then on).
-- No foreign key to archives: the trail outlives a deleted archive.
CREATE TABLE shares (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    archive_id     uuid NOT NULL,
    grantee_type   text NOT NULL CHECK (grantee_type IN ('user', 'organization')),
    grantee        text NOT NULL CHECK (grantee <> ''),
    granted_by     text NOT NULL CHECK (granted_by <> ''),
    granted_at     timestamptz NOT NULL,
    duration_s     bigint NOT NULL CHECK (duration_s > 0),
    expires_at     timestamptz NOT NULL,
    revoked_at     timestamptz,
    revoked_by     text,
    revoke_reason  text CHECK (revoke_reason IN ('revoked', 'replaced', 'archive-deleted')),
    -- Deferred: the replacing share is inserted after the one it replaces ends.
    replaced_by    uuid REFERENCES shares (id) DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT shares_expiry CHECK (expires_at = granted_at + make_interval(secs => duration_s)),
    CONSTRAINT shares_revoked_together CHECK (
        (revoked_at IS NULL) = (revoked_by IS NULL) AND (revoked_at IS NULL) = (revoke_reason IS NULL)),
    CONSTRAINT shares_replaced_only_when_replaced CHECK ((replaced_by IS NULL) = (revoke_reason IS DISTINCT FROM 'replaced'))
);
-- An archive's shares, newest first (GET /api/archives/{id}/shares).
CREATE INDEX shares_archive_idx ON shares (archive_id, granted_at DESC, id DESC);
-- What is shared with a grantee now: the tuples still in OpenFGA, by
-- grantee (a user, or each organization of the caller), with the archive
-- and the expiry at hand.
CREATE INDEX shares_grantee_idx ON shares (grantee_type, grantee, expires_at DESC)
    INCLUDE (archive_id) WHERE revoked_at IS NULL;
-- At most one tuple per grantee and archive: OpenFGA keys a tuple by user,
-- relation and object, whatever its condition.
CREATE UNIQUE INDEX shares_one_tuple_idx ON shares (archive_id, grantee_type, grantee) WHERE revoked_at IS NULL;
-- Every share, newest first (`ledgerctl share list` without an archive).
CREATE INDEX shares_granted_at_idx ON shares (granted_at DESC, id DESC);

-- A deleted archive. The archives row goes (every reader stops seeing it at
-- once); the tombstone keeps who deleted it, when, and where its objects
-- were, so that no admission path registers that object key or task again.
-- Deleting is a persisted state machine: the tombstone, the removal of the
-- archives row, the share rows' end and the outbox rows deleting the tuples
-- are one transaction; objects_deleted_at stays NULL until every key in
-- object_keys is gone from the bucket, and whoever runs next (the same
-- delete again, `ledgerctl archives delete --pending`) finishes it.
CREATE TABLE archive_tombstones (
    archive_id          uuid PRIMARY KEY,
    task_id             uuid NOT NULL,
    bucket              text NOT NULL CHECK (bucket <> ''),
    object_key          text NOT NULL CHECK (object_key <> ''),
    source_url          text NOT NULL,
    captured_at         timestamptz NOT NULL,
    deleted_by          text NOT NULL CHECK (deleted_by <> ''),
    deleted_at          timestamptz NOT NULL,
    object_keys         text[] NOT NULL CHECK (cardinality(object_keys) >= 1),
    objects_deleted_at  timestamptz,
    attempts            integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error          text,
    CONSTRAINT archive_tombstones_bucket_object_key_key UNIQUE (bucket, object_key)
);
CREATE INDEX archive_tombstones_task_id_idx ON archive_tombstones (task_id);
CREATE INDEX archive_tombstones_pending_idx ON archive_tombstones (deleted_at, archive_id)
    WHERE objects_deleted_at IS NULL;

-- Whatever path inserts an archive (a level report, reconcile, archives add),
-- a tombstoned object key is never registered again: the row is skipped, as
-- a conflict would be, so a batch of a level report still admits the rest.
CREATE FUNCTION archives_skip_tombstoned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM archive_tombstones t
               WHERE (t.bucket = NEW.bucket AND t.object_key = NEW.object_key) OR t.task_id = NEW.task_id) THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER archives_skip_tombstoned BEFORE INSERT ON archives
    FOR EACH ROW EXECUTE FUNCTION archives_skip_tombstoned();
