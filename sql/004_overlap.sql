-- tarry-queue/postgres, migration 4: overlap false covers retries, and a catch-up waits;
-- `every` computed exactly as in JS, ending at the latest instant.
--
-- Apply with `queue.migrate()`, or `psql -v schema=tarry -f 004_overlap.sql` after 003.
--
-- overlap false (docs/schedules.md): a run lasts from its first delivery until it is acked or
-- dead-lettered, its retries included (waiting for the retry, or running it). Two runs of one
-- schedule are never leased at once: an occurrence that comes due while a run lasts is
-- skipped and counted, or waits for it (a catch-up "all" occurrence, due before that run
-- began: `began`, the server time the latest run was handed out); a retry waits while another
-- run of its schedule is leased. A waiting occurrence goes back to pending at the lease's
-- expiry or the retry's deadline, and `wait` marks it, so that the ack or the dead-lettering of
-- the latest run makes it due at once (ended()).

ALTER TABLE :"schema".schedules ADD COLUMN began float8, ADD COLUMN wait boolean NOT NULL DEFAULT false;

-- every, as js/schedule/rule.js EveryRule computes it (tests/postgres/schedules.test.mjs
-- compares the two on random cases): the same float8 operations in the same order, the
-- remainder exact (as JS's %) through bigint, since the period and the start are whole ms;
-- and the rule ends at the latest instant every engine holds, 2189-01-01
-- (js/arguments.js LATEST_INSTANT): no occurrence after it.
CREATE FUNCTION :"schema".latest_instant() RETURNS float8 LANGUAGE sql IMMUTABLE AS $$ SELECT 6911049600000::float8 $$;

-- d % p for d >= 0 and a whole p, exactly.
CREATE FUNCTION :"schema".every_rem(d float8, p float8) RETURNS float8 LANGUAGE sql IMMUTABLE
  AS $$ SELECT (floor(d)::bigint % p::bigint)::float8 + (d - floor(d)) $$;

CREATE OR REPLACE FUNCTION :"schema".every_next(start float8, period float8, after float8) RETURNS float8
LANGUAGE sql IMMUTABLE SET search_path = :"schema" AS $$
  SELECT CASE WHEN t <= latest_instant() THEN t END FROM (SELECT CASE WHEN after < start THEN start
    ELSE start + ((after - start) - every_rem(after - start, period)) + period END AS t) x
$$;
CREATE OR REPLACE FUNCTION :"schema".every_latest(start float8, period float8, at float8) RETURNS float8
LANGUAGE sql IMMUTABLE SET search_path = :"schema" AS $$
  SELECT CASE WHEN at < start THEN NULL ELSE start + (d - every_rem(d, period)) END
    FROM (SELECT least(at, latest_instant()) - start AS d) x
$$;

-- overlap false: until when a run of schedule sid other than item lasts, as far as is known
-- now: its lease expiry while it is leased, its retry's deadline while it waits for it (a
-- retry this take leased and has not decided yet, `undecided`, still waits); NULL when no run
-- lasts. `chain` is the schedule's pending occurrence, which is not a run.
CREATE FUNCTION :"schema".run_lasts(q text, sid bytea, item bytea, chain bytea, undecided bytea[])
RETURNS float8 LANGUAGE sql STABLE SET search_path = :"schema" AS $$
  SELECT coalesce(
    (SELECT max(i.expiry) FROM items i WHERE i.queue = q AND i.schedule = sid AND i.state = 'l'
      AND i.id <> item AND NOT (i.id = ANY(undecided))),
    (SELECT min(i.deadline) FROM items i WHERE i.queue = q AND i.schedule = sid
      AND (i.state = 'p' OR i.id = ANY(undecided)) AND i.id <> item AND i.id IS DISTINCT FROM chain))
$$;

-- The take leased item (of schedule sid) and gives it back: pending at `at`, as it was before.
CREATE FUNCTION :"schema".put_back(q text, item bytea, at float8) RETURNS void LANGUAGE sql
SET search_path = :"schema" AS $$
  UPDATE items i SET state = 'p', attempt = i.attempt - 1, token = NULL, expiry = NULL, deadline = at
    WHERE i.queue = q AND i.id = item
$$;

-- The run of item (an occurrence of schedule sid) ended, acked or dead-lettered: the
-- occurrence that waits for it is due now (never before its due time: a schedule() that
-- replaced the rule meanwhile placed a later one).
CREATE FUNCTION :"schema".ended(q text, sid bytea, item bytea) RETURNS void LANGUAGE plpgsql
SET search_path = :"schema" AS $$
DECLARE s schedules; first bigint := nextval('seq');
BEGIN
  SELECT * INTO s FROM schedules x WHERE x.queue = q AND x.id = sid FOR UPDATE;
  IF NOT FOUND OR NOT s.wait OR s.last IS NULL OR occurrence(sid, s.last) <> item THEN RETURN; END IF;
  UPDATE schedules x SET wait = false WHERE x.queue = q AND x.id = sid;
  UPDATE items i SET deadline = greatest(s.due, clock()), seq = nextval('seq')
    WHERE i.queue = q AND i.id = occurrence(sid, s.due) AND i.state = 'p' AND i.schedule = sid;
  PERFORM tell_head(q, first);
END $$;

-- What the take decides for item of schedule sid, which it leased at time t:
-- 'r' hand it out, 'g' it is gone (skipped, or none runs), 'w' it was put back to wait. The
-- schedule's pending occurrence: catchUp (every; cron hands the due one out and places succ),
-- overlap false (skipped or waits while another run lasts), and the next one placed. Any
-- other item (a retry, one released, one of a rule replaced): with overlap false, it waits
-- while another run of its schedule is leased.
DROP FUNCTION :"schema".occur(text, bytea, bytea, float8, float8);
CREATE FUNCTION :"schema".occur(q text, item bytea, sid bytea, t float8, undecided bytea[])
RETURNS "char" LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE s schedules; due float8; run float8; nxt float8; latest float8; lasts float8;
BEGIN
  SELECT * INTO s FROM schedules x WHERE x.queue = q AND x.id = sid FOR UPDATE;
  IF NOT FOUND THEN RETURN 'r'; END IF;
  -- Its due time is the one its id names (a wait moved its deadline).
  due := s.due;
  run := due;
  -- Not its schedule's pending occurrence (a retry, a run now, one of a rule replaced, any
  -- item of a paused schedule).
  IF due IS NULL OR s.paused OR item <> occurrence(sid, due) THEN
    IF s.overlap THEN RETURN 'r'; END IF;
    lasts := (SELECT max(i.expiry) FROM items i WHERE i.queue = q AND i.schedule = sid AND i.state = 'l'
      AND i.id <> item AND NOT (i.id = ANY(undecided)));
    IF lasts IS NULL THEN RETURN 'r'; END IF;
    PERFORM put_back(q, item, lasts);
    RETURN 'w';
  END IF;
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
  IF run > s.stop_at THEN run := NULL; END IF;
  IF run IS NOT NULL AND NOT s.overlap THEN
    lasts := run_lasts(q, sid, item, item, undecided);
    IF lasts IS NOT NULL THEN
      IF s.began IS NOT NULL AND run > s.began THEN
        run := NULL;
        UPDATE schedules x SET skipped = x.skipped + 1 WHERE x.queue = q AND x.id = sid;
      ELSE
        -- Due before the lasting run began (a catch-up "all"): it waits, still the pending one.
        UPDATE schedules x SET wait = true WHERE x.queue = q AND x.id = sid;
        PERFORM put_back(q, item, greatest(lasts, t));
        RETURN 'w';
      END IF;
    END IF;
  END IF;
  IF run IS NULL THEN
    DELETE FROM items i WHERE i.queue = q AND i.id = item;
  ELSIF run <> due AND NOT EXISTS (SELECT 1 FROM items i WHERE i.queue = q AND i.id = occurrence(sid, run)) THEN
    -- "one": the latest missed occurrence runs instead, under its own id and due time.
    UPDATE items i SET id = occurrence(sid, run), deadline = run WHERE i.queue = q AND i.id = item;
  ELSE
    run := due;
  END IF;
  -- The limits of migration 3: the next occurrence is not placed once the schedule ends.
  IF nxt IS NOT NULL AND ends(s, s.runs + CASE WHEN run IS NULL THEN 0 ELSE 1 END, nxt) THEN nxt := NULL; END IF;
  IF s.kind = 'c' AND s.succ IS NULL THEN
    -- The succ was never computed: no next yet; the client asked computes it (advance()).
    UPDATE schedules x SET due = NULL, wait = false WHERE x.queue = q AND x.id = sid;
  ELSE
    IF nxt IS NOT NULL THEN PERFORM place(q, sid, nxt, s.value); END IF;
    UPDATE schedules x SET due = nxt, succ = CASE WHEN nxt IS NULL THEN 'infinity'::float8 END, wait = false
      WHERE x.queue = q AND x.id = sid;
  END IF;
  IF run IS NULL THEN RETURN 'g'; END IF;
  UPDATE schedules x SET last = run, began = t, runs = x.runs + 1 WHERE x.queue = q AND x.id = sid;
  RETURN 'r';
END $$;

-- The take of migration 2, with every item of a schedule it leases passed through occur(), in
-- deadline order (a later one sees what an earlier one decided); a lease that ran out into
-- the dead letters ends its run.
CREATE OR REPLACE FUNCTION :"schema".take(q text, n int, lease float8, max_attempts int)
RETURNS TABLE (kind "char", id bytea, value text, deadline float8, attempt int, token bigint,
  schedule bytea, reason text, seq bigint, expiry float8, at float8)
LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE t float8 := clock(); stopped boolean; first bigint; r record; taken int; undecided bytea[];
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
    first := nextval('seq');
    UPDATE items i SET state = 'l', attempt = i.attempt + 1, token = nextval('seq'), expiry = t + lease
      WHERE i.ctid = ANY(ARRAY(SELECT x.ctid FROM items x WHERE x.queue = q AND x.state = 'p'
        AND x.deadline <= t ORDER BY x.deadline, x.seq LIMIT n FOR UPDATE SKIP LOCKED));
    GET DIAGNOSTICS taken = ROW_COUNT;
    IF taken > 0 THEN
      undecided := ARRAY(SELECT x.id FROM items x WHERE x.queue = q AND x.state = 'l' AND x.expiry = t + lease
        AND x.token > first AND x.schedule IS NOT NULL ORDER BY x.deadline, x.seq);
      FOR r IN SELECT x.id, x.schedule FROM items x WHERE x.queue = q AND x.id = ANY(undecided)
          ORDER BY x.deadline, x.seq LOOP
        undecided := array_remove(undecided, r.id);
        PERFORM occur(q, r.id, r.schedule, t, undecided);
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

-- The ack and the nack of migration 1, ending the run of a schedule's occurrence they remove
-- or dead-letter.
CREATE OR REPLACE FUNCTION :"schema".ack(q text, ids bytea[], tokens bigint[])
RETURNS TABLE (id bytea, schedule bytea, at float8) LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE t float8 := clock(); r record;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR r IN DELETE FROM items i USING unnest(ids, tokens) AS a(id, token)
      WHERE i.queue = q AND i.id = a.id AND i.token = a.token AND i.state = 'l'
      RETURNING i.id, i.schedule LOOP
    IF r.schedule IS NOT NULL THEN PERFORM ended(q, r.schedule, r.id); END IF;
    RETURN QUERY SELECT r.id, r.schedule, t;
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION :"schema".nack(q text, item bytea, tok bigint, delay float8, why text, max_attempts int)
RETURNS TABLE (outcome "char", deadline float8, schedule bytea, at float8)
LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE t float8 := clock(); first bigint := nextval('seq'); r record;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR r IN UPDATE items i SET
      state = CASE WHEN i.attempt >= max_attempts THEN 'd' ELSE 'p' END::"char",
      deadline = CASE WHEN i.attempt >= max_attempts THEN i.deadline ELSE t + delay END,
      seq = nextval('seq'), token = NULL, expiry = NULL,
      died = CASE WHEN i.attempt >= max_attempts THEN t END,
      reason = CASE WHEN i.attempt >= max_attempts THEN why END
    WHERE i.queue = q AND i.id = item AND i.token = tok AND i.state = 'l'
    RETURNING i.state, i.deadline, i.schedule LOOP
    IF r.state = 'd' AND r.schedule IS NOT NULL THEN PERFORM ended(q, r.schedule, item); END IF;
    RETURN QUERY SELECT r.state, r.deadline, r.schedule, t;
  END LOOP;
  PERFORM tell_head(q, first);
END $$;

INSERT INTO :"schema".migrations (version) VALUES (4);
