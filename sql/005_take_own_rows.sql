-- tarry-queue/postgres, migration 5: a take hands out exactly the items its own UPDATE leased;
-- pauseSchedule() pauses a cron schedule whose successor is being computed; a take carries
-- the acks gathered before it.
--
-- Apply with `queue.migrate()`, or `psql -v schema=tarry -f 005_take_own_rows.sql` after 004.
--
-- The take of migration 4 found the items it had just leased again by their lease (expiry =
-- its time + the lease, a token above one drawn before its UPDATE). Two takes that read the
-- same clock microsecond could match each other's rows: a take running beside another that
-- committed between its UPDATE and that SELECT handed out the other's items too, both as
-- attempt 1 (READ COMMITTED: each statement of a function sees what committed before it).
-- This take keeps the (id, token) pairs its UPDATE returned and reads back by those, through
-- the primary key: a token is drawn once, so no other take's row can match.
--
-- pauseSchedule() of migration 3 took a cron schedule whose next occurrence was not known
-- yet (its occurrence in flight, the successor not yet computed by a client: due and succ
-- NULL) for an ended one and did not pause it. It pauses it now; the successor a client
-- computes meanwhile is noted, not placed (advance() of migration 3), and resume places it.

CREATE OR REPLACE FUNCTION :"schema".take(q text, n int, lease float8, max_attempts int)
RETURNS TABLE (kind "char", id bytea, value text, deadline float8, attempt int, token bigint,
  schedule bytea, reason text, seq bigint, expiry float8, at float8)
LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE t float8 := clock(); stopped boolean; r record; ids bytea[]; tokens bigint[]; undecided bytea[];
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR r IN UPDATE items i SET
      state = CASE WHEN i.attempt >= max_attempts THEN 'd' ELSE 'p' END::"char",
      died = CASE WHEN i.attempt >= max_attempts THEN t END,
      reason = CASE WHEN i.attempt >= max_attempts THEN '"lease expired"' END,
      token = NULL, expiry = NULL
    WHERE i.ctid = ANY(ARRAY(SELECT x.ctid FROM items x WHERE x.queue = q AND x.state = 'l'
      AND x.expiry <= t ORDER BY x.expiry LIMIT 1000 FOR UPDATE SKIP LOCKED))
    RETURNING CASE WHEN i.state = 'd' THEN 'd' ELSE 'r' END::"char" AS k, i.id, i.deadline, i.attempt,
      i.schedule, i.reason, i.seq LOOP
    IF r.k = 'd' AND r.schedule IS NOT NULL THEN PERFORM ended(q, r.schedule, r.id); END IF;
    RETURN QUERY SELECT r.k, r.id, NULL::text, r.deadline, r.attempt, NULL::bigint, r.schedule, r.reason, r.seq,
      NULL::float8, t;
  END LOOP;
  stopped := coalesce((SELECT x.paused FROM queues x WHERE x.queue = q), false);
  IF n > 0 AND NOT stopped THEN
    WITH u AS (
      UPDATE items i SET state = 'l', attempt = i.attempt + 1, token = nextval('seq'), expiry = t + lease
        WHERE i.ctid = ANY(ARRAY(SELECT x.ctid FROM items x WHERE x.queue = q AND x.state = 'p'
          AND x.deadline <= t ORDER BY x.deadline, x.seq LIMIT n FOR UPDATE SKIP LOCKED))
        RETURNING i.id, i.token, i.schedule, i.deadline, i.seq)
    SELECT array_agg(u.id), array_agg(u.token),
        array_agg(u.id ORDER BY u.deadline, u.seq) FILTER (WHERE u.schedule IS NOT NULL)
      INTO ids, tokens, undecided FROM u;
    IF ids IS NOT NULL THEN
      undecided := coalesce(undecided, '{}');
      FOR r IN SELECT x.id, x.schedule FROM items x WHERE x.queue = q AND x.id = ANY(undecided)
          ORDER BY x.deadline, x.seq LOOP
        undecided := array_remove(undecided, r.id);
        PERFORM occur(q, r.id, r.schedule, t, undecided);
      END LOOP;
      -- Still leased by this take (occur() may have put an occurrence back or removed it).
      RETURN QUERY SELECT 't'::"char", x.id, x.value, x.deadline, x.attempt, x.token, x.schedule, NULL::text,
          x.seq, x.expiry, t
        FROM unnest(ids, tokens) AS a(id, token)
        JOIN items x ON x.queue = q AND x.id = a.id AND x.token = a.token AND x.state = 'l';
    END IF;
  END IF;
  RETURN QUERY SELECT 'c'::"char", x.id, json_build_object('cron', x.cron, 'timezone', x.zone,
      'catchUp', x.catch_up)::text, x.due, NULL::int, NULL::bigint, NULL::bytea, NULL::text, x.version,
      x.last, t
    FROM schedules x WHERE x.queue = q AND x.kind = 'c' AND x.succ IS NULL LIMIT 100;
  RETURN QUERY SELECT 'n'::"char", NULL::bytea, CASE WHEN stopped THEN 'paused' END, (SELECT x.deadline
    FROM items x WHERE x.queue = q AND x.state = 'p' ORDER BY x.deadline, x.seq LIMIT 1), NULL::int,
    NULL::bigint, NULL::bytea, NULL::text, NULL::bigint, (SELECT min(x.expiry) FROM items x
    WHERE x.queue = q AND x.state = 'l'), t;
END $$;

CREATE OR REPLACE FUNCTION :"schema".pause_schedule(q text, sid bytea) RETURNS boolean LANGUAGE plpgsql
SET search_path = :"schema" AS $$
DECLARE d float8;
BEGIN
  UPDATE schedules x SET paused = true WHERE x.queue = q AND x.id = sid AND NOT x.paused
    AND (x.due IS NOT NULL OR (x.kind = 'c' AND x.succ IS NULL))
    RETURNING x.due INTO d;
  IF NOT FOUND THEN RETURN false; END IF;
  IF d IS NOT NULL THEN
    DELETE FROM items i WHERE i.queue = q AND i.id = occurrence(sid, d) AND i.state = 'p' AND i.schedule = sid;
  END IF;
  RETURN true;
END $$;

-- A take that carries the process's acks gathered before it (ids and tokens, as ack() takes
-- them): one round trip and one transaction where an ack and the take after it were two. The
-- acks go first, so the take sees their outcomes (the end of a run that an occurrence waits
-- for); rows 'a' name the items acked (those whose token still held the lease).
CREATE FUNCTION :"schema".take(q text, n int, lease float8, max_attempts int, ack_ids bytea[], ack_tokens bigint[])
RETURNS TABLE (kind "char", id bytea, value text, deadline float8, attempt int, token bigint,
  schedule bytea, reason text, seq bigint, expiry float8, at float8)
LANGUAGE plpgsql SET search_path = :"schema" AS $$
BEGIN
  IF cardinality(ack_ids) > 0 THEN
    RETURN QUERY SELECT 'a'::"char", a.id, NULL::text, NULL::float8, NULL::int, NULL::bigint, a.schedule, NULL::text,
      NULL::bigint, NULL::float8, a.at FROM ack(q, ack_ids, ack_tokens) a;
  END IF;
  RETURN QUERY SELECT * FROM take(q, n, lease, max_attempts);
END $$;

INSERT INTO :"schema".migrations (version) VALUES (5);
