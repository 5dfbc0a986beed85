-- When each capture's party first asked for its host's lease (its place in
-- the host's line, host_waiters.since), kept with the capture: with the
-- start and the delay it is the evidence that the round robin between
-- organizations held (`ledgerctl hosts politeness`: the most turns one other
-- organization took while an organization waited, ready, for its own).
-- NULL for captures recorded before this column existed.
ALTER TABLE host_captures ADD COLUMN asked_at timestamptz;

-- Taking and releasing a host's lease, each one statement (one round trip)
-- instead of a transaction of a dozen: the steps are those
-- store/postgres/hosts.go describes, in the same order and under the same
-- row lock of the host's host_pace row; every time is clock_timestamp()
-- taken once that lock is held.
CREATE FUNCTION host_lease_try(
    p_host text, p_holder uuid, p_kind text, p_org text, p_crawl uuid, p_url text,
    p_delay_us bigint, p_source text, p_robots_read boolean, p_crawl_delay_ms integer,
    p_at_once integer, p_ttl_us bigint, p_stale_us bigint, p_not_turn_us bigint,
    OUT ok boolean, OUT wait_us bigint, OUT lease_start timestamptz, OUT lease_delay_ms integer, OUT lease_source text)
LANGUAGE plpgsql AS $$
DECLARE
    v_last_end   timestamptz;
    v_hold_until timestamptz;
    v_hold_src   text;
    v_cd_ms      integer;
    v_now        timestamptz;
    v_my_delay   interval := p_delay_us * interval '1 microsecond';
    v_my_source  text := p_source;
    v_reaped     timestamptz;
    v_open       integer;
    v_ready      timestamptz;
    v_first      uuid;
    v_delay      interval;
BEGIN
    ok := false;
    wait_us := 0;
    INSERT INTO host_pace (host) VALUES (p_host) ON CONFLICT DO NOTHING;
    SELECT hp.last_end, hp.hold_until, hp.hold_source, hp.crawl_delay_ms, clock_timestamp()
      INTO v_last_end, v_hold_until, v_hold_src, v_cd_ms, v_now
      FROM host_pace hp WHERE hp.host = p_host FOR UPDATE;
    IF p_robots_read THEN
        v_cd_ms := p_crawl_delay_ms;
        UPDATE host_pace SET crawl_delay_ms = v_cd_ms WHERE host = p_host;
    END IF;
    IF v_cd_ms * interval '1 millisecond' > v_my_delay THEN
        v_my_delay := v_cd_ms * interval '1 millisecond';
        v_my_source := 'crawl-delay';
    END IF;
    -- A lease its process stopped renewing ends at its expiry.
    WITH x AS (
        UPDATE host_captures hc SET ended_at = greatest(hc.expires_at, hc.started_at), expired = true
        WHERE hc.host = p_host AND hc.ended_at IS NULL AND hc.expires_at < v_now
        RETURNING hc.ended_at)
    SELECT max(x.ended_at) INTO v_reaped FROM x;
    IF v_reaped IS NOT NULL AND (v_last_end IS NULL OR v_reaped > v_last_end) THEN
        v_last_end := v_reaped;
        UPDATE host_pace SET last_end = v_reaped WHERE host = p_host;
    END IF;
    DELETE FROM host_waiters WHERE host = p_host AND seen_at < v_now - p_stale_us * interval '1 microsecond';
    INSERT INTO host_waiters (host, holder, org_id, delay_ms, since, seen_at)
    VALUES (p_host, p_holder, p_org, floor(extract(epoch FROM v_my_delay) * 1000)::integer, v_now, v_now)
    ON CONFLICT (host, holder) DO UPDATE SET seen_at = excluded.seen_at, delay_ms = excluded.delay_ms;
    SELECT count(*)::integer INTO v_open FROM host_captures WHERE host = p_host AND ended_at IS NULL;
    IF v_open >= greatest(p_at_once, 1) THEN
        wait_us := 2 * p_not_turn_us;
        RETURN;
    END IF;
    v_ready := v_now;
    lease_source := v_my_source;
    IF v_last_end IS NOT NULL THEN
        v_ready := v_last_end + v_my_delay;
    END IF;
    IF v_hold_until IS NOT NULL AND v_hold_until > v_ready THEN
        v_ready := v_hold_until;
        IF v_hold_src IS NOT NULL THEN
            lease_source := v_hold_src;
        END IF;
    END IF;
    IF v_now < v_ready THEN
        wait_us := ceil(extract(epoch FROM v_ready - v_now) * 1000000)::bigint;
        lease_source := NULL;
        RETURN;
    END IF;
    -- Ready: the turn goes to the ready waiter of the organization served
    -- least recently on this host, the oldest within it.
    SELECT w.holder INTO v_first FROM host_waiters w
    LEFT JOIN host_turns t ON t.host = w.host AND t.org_id = w.org_id
    WHERE w.host = p_host AND (v_last_end IS NULL OR v_last_end + w.delay_ms * interval '1 millisecond' <= v_now)
    ORDER BY t.granted_at NULLS FIRST, w.since, w.holder
    LIMIT 1;
    IF v_first IS NOT NULL AND v_first <> p_holder THEN
        wait_us := p_not_turn_us;
        lease_source := NULL;
        RETURN;
    END IF;
    v_delay := v_my_delay;
    IF v_last_end IS NOT NULL THEN
        v_delay := v_ready - v_last_end;
    END IF;
    lease_delay_ms := floor(greatest(extract(epoch FROM v_delay), 0) * 1000)::integer;
    INSERT INTO host_captures (host, holder, kind, org_id, crawl_id, url, started_at, expires_at, prev_end, delay_ms, delay_source, asked_at)
    VALUES (p_host, p_holder, p_kind, p_org, p_crawl, p_url, v_now, v_now + p_ttl_us * interval '1 microsecond', v_last_end,
            lease_delay_ms, lease_source,
            (SELECT since FROM host_waiters WHERE host = p_host AND holder = p_holder));
    DELETE FROM host_waiters WHERE host = p_host AND holder = p_holder;
    INSERT INTO host_turns (host, org_id, granted_at) VALUES (p_host, p_org, v_now)
    ON CONFLICT (host, org_id) DO UPDATE SET granted_at = excluded.granted_at;
    ok := true;
    lease_start := v_now;
END
$$;

-- Ends the capture now (or finds it ended by the next party, its lease
-- expired) and asks every next capture of the host to keep p_hold_ms after
-- it. No capture under p_holder is an error (P0002).
CREATE FUNCTION host_lease_release(p_holder uuid, p_hold_ms integer, p_source text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_host text;
    v_now  timestamptz;
    v_end  timestamptz;
BEGIN
    SELECT host INTO v_host FROM host_captures WHERE holder = p_holder;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no host lease is held as %', p_holder USING ERRCODE = 'P0002';
    END IF;
    SELECT clock_timestamp() INTO v_now FROM host_pace WHERE host = v_host FOR UPDATE;
    UPDATE host_captures SET ended_at = greatest(v_now, started_at), hold_ms = p_hold_ms, hold_source = p_source
    WHERE holder = p_holder AND ended_at IS NULL
    RETURNING ended_at INTO v_end;
    IF v_end IS NULL THEN
        RETURN; -- expired, and ended by the next party
    END IF;
    UPDATE host_pace SET
        last_end = greatest(last_end, v_end),
        hold_source = CASE WHEN hold_until IS NULL OR hold_until < v_end + p_hold_ms * interval '1 millisecond' THEN p_source ELSE hold_source END,
        hold_until = greatest(hold_until, v_end + p_hold_ms * interval '1 millisecond')
    WHERE host = v_host;
END
$$;
