-- tarry-queue/postgres, migration 1: the queue's tables and the functions each call runs.
--
-- Apply with `queue.migrate()` (inside an advisory lock, once per schema), or yourself with
--   psql -v schema=tarry -f 001_queue.sql
-- (`:"schema"` is psql's quoted variable; migrate() puts the schema's quoted name there).
--
-- Layout: one table `items` for every queue of the schema, one row per item, its `state`
--   'p' pending: waiting for `deadline`, or due and not yet taken
--   'l' leased:  handed to a consumer until `expiry`, the delivery named by `token`
--   'd' dead:    out of attempts (`reason`, `died`)
-- Times are epoch ms (float8) by the server's clock_timestamp(), never a client's and never
-- now() (the transaction's start). Partial indexes per state keep "what is due", the leases
-- by expiry and the dead letters by death each an index range scan; `fillfactor` leaves room
-- for HOT updates. Ids and schedule ids are bytea (UTF-8): text cannot hold U+0000. Values
-- and reasons are JSON text, which JSON.stringify writes without U+0000 or lone surrogates.

CREATE SCHEMA IF NOT EXISTS :"schema";

CREATE TABLE IF NOT EXISTS :"schema".migrations (
  version int PRIMARY KEY,
  applied float8 NOT NULL DEFAULT extract(epoch FROM clock_timestamp()) * 1000
);

CREATE SEQUENCE :"schema".seq;

CREATE TABLE :"schema".items (
  queue text NOT NULL,
  id bytea NOT NULL,
  state "char" NOT NULL,
  deadline float8 NOT NULL,
  seq bigint NOT NULL,
  value text NOT NULL,
  attempt int NOT NULL DEFAULT 0,
  token bigint,
  expiry float8,
  reason text,
  died float8,
  schedule bytea,
  PRIMARY KEY (queue, id)
) WITH (fillfactor = 70);

CREATE INDEX items_due ON :"schema".items (queue, deadline, seq) WHERE state = 'p';
CREATE INDEX items_leased ON :"schema".items (queue, expiry, id) WHERE state = 'l';
CREATE INDEX items_dead ON :"schema".items (queue, died, id) WHERE state = 'd';

-- A queue's own state: paused, and the counts of every process's outcomes.
CREATE TABLE :"schema".queues (
  queue text PRIMARY KEY,
  paused boolean NOT NULL DEFAULT false
);

-- The server's clock, epoch ms.
CREATE FUNCTION :"schema".clock() RETURNS float8 LANGUAGE sql VOLATILE
  AS $$ SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 $$;


-- Each call's statement is one of the functions below (js/postgres/statements.js names them):
-- one round trip, one transaction (the caller's, when it passes its client). They run with
-- the schema as their search_path, so the same bodies serve any schema name. Tells the
-- consumers of every process on the channel 'tarry.<schema>' when an item became the head
-- ('h <deadline> <queue>'), and when a queue was paused or resumed ('p <queue>', 'r <queue>').

-- Tells the listeners when the pending head of `q` is (deadline d, seq s) and s >= first:
-- an item this call wrote is now the earliest. NOTIFY is sent at commit, never on rollback.
CREATE FUNCTION :"schema".tell_head(q text, first bigint) RETURNS float8 LANGUAGE plpgsql
SET search_path = :"schema" AS $$
DECLARE hd float8; hs bigint;
BEGIN
  SELECT i.deadline, i.seq INTO hd, hs FROM items i WHERE i.queue = q AND i.state = 'p'
    ORDER BY i.deadline, i.seq LIMIT 1;
  IF hs >= first THEN PERFORM pg_notify('tarry.' || current_schema(), 'h ' || hd || ' ' || q); END IF;
  RETURN hd;
END $$;

-- Offers items in order (a later one meets what an earlier one left). kinds[i]: 'd' ms[i] is a
-- delay counted from the call, which was `elapsed` ms before this statement ran (measured on
-- the caller's monotonic clock, so never early by any clock's skew); 'a' ms[i] is a deadline.
-- modes[i]: 'r' replace, 'k' keep, 'e' extend. Returns the head's deadline and the time.
CREATE FUNCTION :"schema".offer(q text, ids bytea[], vals text[], kinds "char"[], ms float8[],
  modes "char"[], elapsed float8)
RETURNS TABLE (head float8, at float8) LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE t float8 := clock(); first bigint := nextval('seq'); d float8;
BEGIN
  FOR i IN 1 .. coalesce(array_length(ids, 1), 0) LOOP
    d := CASE kinds[i] WHEN 'd' THEN t - elapsed + ms[i] ELSE ms[i] END;
    IF modes[i] = 'k' THEN
      INSERT INTO items AS x (queue, id, state, deadline, seq, value)
        VALUES (q, ids[i], 'p', d, nextval('seq'), vals[i]) ON CONFLICT (queue, id) DO NOTHING;
    ELSIF modes[i] = 'e' THEN
      INSERT INTO items AS x (queue, id, state, deadline, seq, value)
        VALUES (q, ids[i], 'p', d, nextval('seq'), vals[i])
        ON CONFLICT (queue, id) DO UPDATE SET
          value = excluded.value,
          deadline = CASE WHEN x.state = 'p' THEN greatest(x.deadline, excluded.deadline) ELSE excluded.deadline END,
          seq = CASE WHEN x.state = 'p' AND x.deadline >= excluded.deadline THEN x.seq ELSE excluded.seq END,
          attempt = CASE WHEN x.state = 'p' THEN x.attempt ELSE 0 END,
          state = 'p', token = NULL, expiry = NULL, reason = NULL, died = NULL, schedule = NULL;
    ELSE
      INSERT INTO items AS x (queue, id, state, deadline, seq, value)
        VALUES (q, ids[i], 'p', d, nextval('seq'), vals[i])
        ON CONFLICT (queue, id) DO UPDATE SET
          value = excluded.value, deadline = excluded.deadline, seq = excluded.seq, attempt = 0,
          state = 'p', token = NULL, expiry = NULL, reason = NULL, died = NULL, schedule = NULL;
    END IF;
  END LOOP;
  RETURN QUERY SELECT tell_head(q, first), t;
END $$;

-- A pending item's new delay, counted from the call (`elapsed` as for offer). found: it was pending.
CREATE FUNCTION :"schema".reschedule(q text, item bytea, ms float8, elapsed float8)
RETURNS TABLE (found boolean, head float8) LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE t float8 := clock(); first bigint := nextval('seq'); n int;
BEGIN
  UPDATE items i SET deadline = t - elapsed + ms, seq = nextval('seq')
    WHERE i.queue = q AND i.id = item AND i.state = 'p' AND i.schedule IS NULL;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN QUERY SELECT n > 0, tell_head(q, first);
END $$;

-- The take: leases that ran out go back (or, out of attempts, to the dead letters), then up to
-- n due items are leased for `lease` ms in deadline order (FIFO among ties), each with a new
-- token, unless the queue is paused. Rows: 'r' redelivered / 'd' dead (a lease ran out), 't'
-- taken, and last one 'n': the head's deadline, the earliest lease expiry, paused, the time.
-- Locked rows are skipped, never waited for: consumers never block one another. Its commit
-- does not wait for the WAL flush (synchronous_commit off for this transaction only): a take
-- lost in a crash leaves its items pending, so they are delivered again (at least once).
CREATE FUNCTION :"schema".take(q text, n int, lease float8, max_attempts int)
RETURNS TABLE (kind "char", id bytea, value text, deadline float8, attempt int, token bigint,
  schedule bytea, reason text, seq bigint, expiry float8, at float8)
LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE t float8 := clock(); stopped boolean;
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
    RETURN QUERY
      UPDATE items i SET state = 'l', attempt = i.attempt + 1, token = nextval('seq'), expiry = t + lease
      WHERE i.ctid = ANY(ARRAY(SELECT x.ctid FROM items x WHERE x.queue = q AND x.state = 'p'
        AND x.deadline <= t ORDER BY x.deadline, x.seq LIMIT n FOR UPDATE SKIP LOCKED))
      RETURNING 't'::"char", i.id, i.value, i.deadline, i.attempt, i.token, i.schedule, NULL::text,
        i.seq, i.expiry, t;
  END IF;
  RETURN QUERY SELECT 'n'::"char", NULL::bytea, CASE WHEN stopped THEN 'paused' END, (SELECT x.deadline
    FROM items x WHERE x.queue = q AND x.state = 'p' ORDER BY x.deadline, x.seq LIMIT 1), NULL::int,
    NULL::bigint, NULL::bytea, NULL::text, NULL::bigint, (SELECT min(x.expiry) FROM items x
    WHERE x.queue = q AND x.state = 'l'), t;
END $$;

-- Deliveries done: each item removed while its token still holds the lease. Returns those removed.
CREATE FUNCTION :"schema".ack(q text, ids bytea[], tokens bigint[])
RETURNS TABLE (id bytea, schedule bytea, at float8) LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE t float8 := clock();
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY DELETE FROM items i USING unnest(ids, tokens) AS a(id, token)
    WHERE i.queue = q AND i.id = a.id AND i.token = a.token AND i.state = 'l'
    RETURNING i.id, i.schedule, t;
END $$;

-- A delivery not done: pending again `delay` ms from now, or dead after its last attempt
-- (`why`: the reason as JSON text). outcome: 'p' retried, 'd' dead, NULL the lease was lost.
CREATE FUNCTION :"schema".nack(q text, item bytea, tok bigint, delay float8, why text, max_attempts int)
RETURNS TABLE (outcome "char", deadline float8, schedule bytea, at float8)
LANGUAGE plpgsql SET search_path = :"schema" AS $$
DECLARE t float8 := clock(); first bigint := nextval('seq');
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY UPDATE items i SET
      state = CASE WHEN i.attempt >= max_attempts THEN 'd' ELSE 'p' END::"char",
      deadline = CASE WHEN i.attempt >= max_attempts THEN i.deadline ELSE t + delay END,
      seq = nextval('seq'), token = NULL, expiry = NULL,
      died = CASE WHEN i.attempt >= max_attempts THEN t END,
      reason = CASE WHEN i.attempt >= max_attempts THEN why END
    WHERE i.queue = q AND i.id = item AND i.token = tok AND i.state = 'l'
    RETURNING i.state, i.deadline, i.schedule, t;
  PERFORM tell_head(q, first);
END $$;

-- A running delivery's lease, `ms` more from now while its token holds it. Returns the new expiry.
CREATE FUNCTION :"schema".extend(q text, item bytea, tok bigint, ms float8)
RETURNS float8 LANGUAGE sql SET search_path = :"schema" AS $$
  UPDATE items i SET expiry = clock() + ms
    WHERE i.queue = q AND i.id = item AND i.token = tok AND i.state = 'l' RETURNING i.expiry
$$;

-- Deliveries that no take received (it left while the take ran): pending again, as they were.
CREATE FUNCTION :"schema".release(q text, ids bytea[], tokens bigint[])
RETURNS int LANGUAGE sql SET search_path = :"schema" AS $$
  WITH r AS (UPDATE items i SET state = 'p', attempt = i.attempt - 1, token = NULL, expiry = NULL
    FROM unnest(ids, tokens) AS a(id, token)
    WHERE i.queue = q AND i.id = a.id AND i.token = a.token AND i.state = 'l' RETURNING 1)
  SELECT count(*)::int FROM r
$$;

INSERT INTO :"schema".migrations (version) VALUES (1);
