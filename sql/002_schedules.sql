-- tarry-queue/postgres, migration 2: schedules, and the take that advances their chains.
--
-- Apply with `queue.migrate()`, or `psql -v schema=tarry -f 002_schedules.sql` after 001.
--
-- A schedule (docs/schedules.md has the rules) has exactly one pending occurrence: an item of
-- the queue with the id '<schedule>@<due>' and `schedule` naming it. The take statement that
-- hands it out places the next one in the same transaction, so no process can die in
-- between. `every` is computed here (occurrence k at start + k * period, catchUp). Cron needs
-- time zones, which SQL here does not compute: a client computes the occurrence after the
-- pending one ahead of time (`succ`), and places it through advance(), a compare-and-set that
-- names the schedule's `version` (bumped when its rule changes) and the due time it was
-- computed for. The take places `succ` when it hands out the pending occurrence, and asks
-- a client (rows 'c') for the succ of the new one, or for the next when `succ` was not known.

CREATE TABLE :"schema".schedules (
  queue text NOT NULL,
  id bytea NOT NULL,
  kind "char" NOT NULL,          -- 'e' every, 'c' cron
  period float8,                 -- every: ms
  start float8,                  -- every: the first occurrence; cron: the start given, or NULL
  cron text,                     -- cron: the expression
  zone text,                     -- cron: the IANA time zone
  catch_up text NOT NULL,        -- 'one', 'all' or 'none'
  overlap boolean NOT NULL,
  value text NOT NULL,           -- JSON text every occurrence carries
  due float8,                    -- the pending occurrence, NULL when none is placed
  succ float8,                   -- cron: the occurrence after due, NULL while not known
  last float8,                   -- the due time of the latest run handed out
  runs bigint NOT NULL DEFAULT 0,
  skipped bigint NOT NULL DEFAULT 0,
  version bigint NOT NULL,
  PRIMARY KEY (queue, id)
);
CREATE INDEX schedules_asking ON :"schema".schedules (queue) WHERE kind = 'c' AND succ IS NULL;

-- The id of schedule sid's occurrence due at `due`, as js/schedule/spec.js names it.
CREATE FUNCTION :"schema".occurrence(sid bytea, due float8) RETURNS bytea LANGUAGE sql IMMUTABLE
  AS $$ SELECT sid || convert_to('@' || due::bigint::text, 'UTF8') $$;

-- every: the first occurrence strictly after `after`, and the last at or before `at`.
CREATE FUNCTION :"schema".every_next(start float8, period float8, after float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN after < start THEN start ELSE start + (floor((after - start) / period) + 1) * period END
$$;
CREATE FUNCTION :"schema".every_latest(start float8, period float8, at float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN at < start THEN NULL ELSE start + floor((at - start) / period) * period END
$$;

-- Places schedule (q, sid)'s pending occurrence at `due` (an item of that id present stays:
-- one a caller offered under it).
CREATE FUNCTION :"schema".place(q text, sid bytea, due float8, val text) RETURNS void LANGUAGE sql
SET search_path = :"schema" AS $$
  INSERT INTO items (queue, id, state, deadline, seq, value, schedule)
    VALUES (q, occurrence(sid, due), 'p', due, nextval('seq'), val, sid) ON CONFLICT (queue, id) DO NOTHING
$$;

-- A client's cron answer: the schedule, still at version `ver` and due `expected`, gets its
-- pending occurrence at `keep` (placed when it differs from `expected`: a catch-up, or none
-- was placed) and `after` as its succ. Returns whether it was taken (false: someone else's
-- answer, or a new rule, came first).
CREATE FUNCTION :"schema".advance(q text, sid bytea, ver bigint, expected float8, keep float8, after float8)
RETURNS boolean LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE s schedules; first bigint := nextval('seq');
BEGIN
  SELECT * INTO s FROM schedules x WHERE x.queue = q AND x.id = sid AND x.version = ver
    AND x.due IS NOT DISTINCT FROM expected AND x.succ IS NULL FOR UPDATE;
  IF NOT FOUND THEN RETURN false; END IF;
  IF keep IS DISTINCT FROM expected THEN
    DELETE FROM items i WHERE i.queue = q AND i.id = occurrence(sid, expected) AND i.state = 'p' AND i.schedule = sid;
    IF keep IS NOT NULL THEN PERFORM place(q, sid, keep, s.value); END IF;
  END IF;
  UPDATE schedules x SET due = keep, succ = coalesce(after, 'infinity') WHERE x.queue = q AND x.id = sid;
  PERFORM tell_head(q, first);
  RETURN true;
END $$;

-- What the take decides for the occurrence it leased (row id `item`, due `due`) of schedule
-- sid at time t: catchUp (every; cron hands the due one out and places succ), overlap (false:
-- skipped while an earlier run of the schedule is in flight), and the next one placed.
-- Returns false when the occurrence is not to be handed out (then it is gone).
CREATE FUNCTION :"schema".occur(q text, item bytea, sid bytea, due float8, t float8) RETURNS boolean
LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE s schedules; run float8 := due; nxt float8; latest float8;
BEGIN
  SELECT * INTO s FROM schedules x WHERE x.queue = q AND x.id = sid FOR UPDATE;
  -- Not its schedule's pending occurrence (a retry, one of a rule replaced): handed out as it is.
  IF NOT FOUND OR s.due IS DISTINCT FROM due OR item <> occurrence(sid, due) THEN RETURN true; END IF;
  IF s.kind = 'e' THEN
    nxt := every_next(s.start, s.period, due);
    IF nxt <= t AND s.catch_up <> 'all' THEN
      latest := coalesce(every_latest(s.start, s.period, t), nxt);
      run := CASE WHEN s.catch_up = 'one' THEN latest END;
      nxt := every_next(s.start, s.period, latest);
    END IF;
  ELSE
    nxt := CASE WHEN s.succ = 'infinity' THEN NULL ELSE s.succ END;
  END IF;
  IF run IS NOT NULL AND NOT s.overlap AND EXISTS (SELECT 1 FROM items i WHERE i.queue = q AND i.state = 'l'
      AND i.schedule = sid AND i.id <> item) THEN
    run := NULL;
    UPDATE schedules x SET skipped = x.skipped + 1 WHERE x.queue = q AND x.id = sid;
  END IF;
  IF run IS NULL THEN
    DELETE FROM items i WHERE i.queue = q AND i.id = item;
  ELSIF run <> due AND NOT EXISTS (SELECT 1 FROM items i WHERE i.queue = q AND i.id = occurrence(sid, run)) THEN
    -- "one": the latest missed occurrence runs instead, under its own id and due time.
    UPDATE items i SET id = occurrence(sid, run), deadline = run WHERE i.queue = q AND i.id = item;
  ELSE
    run := due;
  END IF;
  IF s.kind = 'c' AND s.succ IS NULL THEN
    -- The succ was never computed: no next yet; the client asked computes it (advance()).
    UPDATE schedules x SET due = NULL WHERE x.queue = q AND x.id = sid;
  ELSE
    IF nxt IS NOT NULL THEN PERFORM place(q, sid, nxt, s.value); END IF;
    UPDATE schedules x SET due = nxt, succ = NULL WHERE x.queue = q AND x.id = sid;
  END IF;
  IF run IS NOT NULL THEN
    UPDATE schedules x SET last = run, runs = x.runs + 1 WHERE x.queue = q AND x.id = sid;
  END IF;
  RETURN run IS NOT NULL;
END $$;

-- The take of migration 1, with the occurrences it leases passed through occur(), and rows
-- 'c' asking for cron successors (id the schedule, value its rule as JSON text, deadline its
-- due, seq its version, expiry its last run).
CREATE OR REPLACE FUNCTION :"schema".take(q text, n int, lease float8, max_attempts int)
RETURNS TABLE (kind "char", id bytea, value text, deadline float8, attempt int, token bigint,
  schedule bytea, reason text, seq bigint, expiry float8, at float8)
LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE t float8 := clock(); stopped boolean; first bigint; r record; taken int;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY
    UPDATE items i SET
      state = CASE WHEN i.attempt >= max_attempts THEN 'd' ELSE 'p' END::"char",
      died = CASE WHEN i.attempt >= max_attempts THEN t END,
      reason = CASE WHEN i.attempt >= max_attempts THEN '"lease expired"' END,
      token = NULL, expiry = NULL
    WHERE i.ctid = ANY(ARRAY(SELECT x.ctid FROM items x WHERE x.queue = q AND x.state = 'l'
      AND x.expiry <= t ORDER BY x.expiry LIMIT 1000 FOR UPDATE SKIP LOCKED))
    RETURNING CASE WHEN i.state = 'd' THEN 'd' ELSE 'r' END::"char", i.id, NULL::text, i.deadline,
      i.attempt, NULL::bigint, i.schedule, i.reason, i.seq, NULL::float8, t;
  stopped := coalesce((SELECT x.paused FROM queues x WHERE x.queue = q), false);
  IF n > 0 AND NOT stopped THEN
    first := nextval('seq');
    UPDATE items i SET state = 'l', attempt = i.attempt + 1, token = nextval('seq'), expiry = t + lease
      WHERE i.ctid = ANY(ARRAY(SELECT x.ctid FROM items x WHERE x.queue = q AND x.state = 'p'
        AND x.deadline <= t ORDER BY x.deadline, x.seq LIMIT n FOR UPDATE SKIP LOCKED));
    GET DIAGNOSTICS taken = ROW_COUNT;
    IF taken > 0 THEN
      FOR r IN SELECT x.id, x.schedule, x.deadline FROM items x WHERE x.queue = q AND x.state = 'l'
          AND x.expiry = t + lease AND x.token > first AND x.schedule IS NOT NULL AND x.attempt = 1 LOOP
        PERFORM occur(q, r.id, r.schedule, r.deadline, t);
      END LOOP;
      RETURN QUERY SELECT 't'::"char", x.id, x.value, x.deadline, x.attempt, x.token, x.schedule, NULL::text,
          x.seq, x.expiry, t
        FROM items x WHERE x.queue = q AND x.state = 'l' AND x.expiry = t + lease AND x.token > first;
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

INSERT INTO :"schema".migrations (version) VALUES (2);
