-- tarry-queue/postgres, migration 3: schedule controls (docs/schedules.md "Controls"): the
-- limits maxRuns and stopAt, pauseSchedule/resumeSchedule, and trigger (a run now).
--
-- Apply with `queue.migrate()`, or `psql -v schema=tarry -f 003_schedule_controls.sql` after 002.
--
-- A schedule whose limits are reached ends: its last run places no next occurrence (due NULL,
-- succ 'infinity', so that no client is asked for one), and it stays, listed. A paused schedule
-- keeps `due`, the occurrence it waits for, with no item for it; resume (js/postgres/
-- schedules.js) places it again. A run now is an item '<id>@<now>' of the schedule, counted as
-- a run when it is added. Rows written before this migration read as no limits, not paused.

ALTER TABLE :"schema".schedules
  ADD COLUMN max_runs bigint,                    -- the runs after which it ends, NULL for none
  ADD COLUMN stop_at float8,                     -- no occurrence after it, NULL for none
  ADD COLUMN paused boolean NOT NULL DEFAULT false;

-- Whether schedule s, having made `runs` runs, ends rather than wait for occurrence t (NULL:
-- its rule has none): maxRuns reached, or t after stopAt (js/schedule/spec.js endsAt).
CREATE FUNCTION :"schema".ends(s :"schema".schedules, runs bigint, t float8) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT t IS NULL OR coalesce(runs >= s.max_runs, false) OR coalesce(t > s.stop_at, false)
$$;

-- Migration 2's advance(), with the limits (an occurrence that ends the schedule is not
-- placed) and pause (the occurrence is noted, with no item).
CREATE OR REPLACE FUNCTION :"schema".advance(q text, sid bytea, ver bigint, expected float8, keep float8, after float8)
RETURNS boolean LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE s schedules; first bigint := nextval('seq');
BEGIN
  SELECT * INTO s FROM schedules x WHERE x.queue = q AND x.id = sid AND x.version = ver
    AND x.due IS NOT DISTINCT FROM expected AND x.succ IS NULL FOR UPDATE;
  IF NOT FOUND THEN RETURN false; END IF;
  IF keep IS NOT NULL AND ends(s, s.runs, keep) THEN keep := NULL; END IF;
  IF keep IS DISTINCT FROM expected THEN
    DELETE FROM items i WHERE i.queue = q AND i.id = occurrence(sid, expected) AND i.state = 'p' AND i.schedule = sid;
    IF keep IS NOT NULL AND NOT s.paused THEN PERFORM place(q, sid, keep, s.value); END IF;
  END IF;
  UPDATE schedules x SET due = keep,
    succ = CASE WHEN keep IS NULL THEN 'infinity'::float8 ELSE coalesce(after, 'infinity') END
    WHERE x.queue = q AND x.id = sid;
  PERFORM tell_head(q, first);
  RETURN true;
END $$;

-- Migration 2's occur(), with the limits: a catch-up "one" past stopAt does not run, and the
-- next occurrence is not placed once the schedule ends.
CREATE OR REPLACE FUNCTION :"schema".occur(q text, item bytea, sid bytea, due float8, t float8) RETURNS boolean
LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE s schedules; run float8 := due; nxt float8; latest float8;
BEGIN
  SELECT * INTO s FROM schedules x WHERE x.queue = q AND x.id = sid FOR UPDATE;
  -- Not its schedule's pending occurrence (a retry, a run now, one of a rule replaced): handed out as it is.
  IF NOT FOUND OR s.paused OR s.due IS DISTINCT FROM due OR item <> occurrence(sid, due) THEN RETURN true; END IF;
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
  IF nxt IS NOT NULL AND ends(s, s.runs + CASE WHEN run IS NULL THEN 0 ELSE 1 END, nxt) THEN nxt := NULL; END IF;
  IF s.kind = 'c' AND s.succ IS NULL THEN
    -- The succ was never computed: no next yet; the client asked computes it (advance()).
    UPDATE schedules x SET due = NULL WHERE x.queue = q AND x.id = sid;
  ELSE
    IF nxt IS NOT NULL THEN PERFORM place(q, sid, nxt, s.value); END IF;
    UPDATE schedules x SET due = nxt, succ = CASE WHEN nxt IS NULL THEN 'infinity'::float8 END
      WHERE x.queue = q AND x.id = sid;
  END IF;
  IF run IS NOT NULL THEN
    UPDATE schedules x SET last = run, runs = x.runs + 1 WHERE x.queue = q AND x.id = sid;
  END IF;
  RETURN run IS NOT NULL;
END $$;

-- pauseSchedule(): takes the pending occurrence away and notes it (due stays). Returns
-- whether the schedule was running (false: paused already, ended, or none).
CREATE FUNCTION :"schema".pause_schedule(q text, sid bytea) RETURNS boolean LANGUAGE plpgsql
SET search_path = :"schema" AS $$
DECLARE d float8;
BEGIN
  UPDATE schedules x SET paused = true WHERE x.queue = q AND x.id = sid AND NOT x.paused AND x.due IS NOT NULL
    RETURNING x.due INTO d;
  IF NOT FOUND THEN RETURN false; END IF;
  DELETE FROM items i WHERE i.queue = q AND i.id = occurrence(sid, d) AND i.state = 'p' AND i.schedule = sid;
  RETURN true;
END $$;

-- trigger(): one extra run of the schedule now, an item '<id>@<now>' (after the latest run)
-- counted as a run; its last (maxRuns) ends the schedule. With overlap false, none while a
-- run of the schedule lasts (leased, or the latest waiting for its retry). A paused schedule
-- runs and stays paused. Returns the run's due time, or NULL when none was added.
CREATE FUNCTION :"schema".trigger_schedule(q text, sid bytea) RETURNS float8 LANGUAGE plpgsql
SET search_path = :"schema" AS $$
DECLARE s schedules; at float8 := ceil(clock()); first bigint := nextval('seq');
BEGIN
  SELECT * INTO s FROM schedules x WHERE x.queue = q AND x.id = sid FOR UPDATE;
  IF NOT FOUND OR (s.due IS NULL AND NOT s.paused) THEN RETURN NULL; END IF;
  IF NOT s.overlap AND EXISTS (SELECT 1 FROM items i WHERE i.queue = q AND i.schedule = sid
      AND (i.state = 'l' OR (i.state = 'p' AND i.id = occurrence(sid, s.last)))) THEN
    RETURN NULL;
  END IF;
  at := greatest(at, s.last + 1);
  -- The pending occurrence due this very ms: it runs anyway.
  IF EXISTS (SELECT 1 FROM items i WHERE i.queue = q AND i.id = occurrence(sid, at)) THEN RETURN NULL; END IF;
  INSERT INTO items (queue, id, state, deadline, seq, value, schedule)
    VALUES (q, occurrence(sid, at), 'p', at, nextval('seq'), s.value, sid);
  UPDATE schedules x SET last = at, runs = x.runs + 1 WHERE x.queue = q AND x.id = sid;
  IF s.runs + 1 >= s.max_runs THEN
    DELETE FROM items i WHERE i.queue = q AND i.id = occurrence(sid, s.due) AND i.state = 'p' AND i.schedule = sid;
    UPDATE schedules x SET due = NULL, succ = 'infinity', paused = false WHERE x.queue = q AND x.id = sid;
  END IF;
  PERFORM tell_head(q, first);
  RETURN at;
END $$;

INSERT INTO :"schema".migrations (version) VALUES (3);
