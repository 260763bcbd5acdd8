// Every statement tarry-queue/postgres sends, named and kept together, for one schema: the calls
// that change state are the functions of sql/ (one round trip, one transaction each), the
// others plain SELECTs and UPDATEs on the tables. Nobody else writes SQL. Parameters are
// always bound ($1 …), never spliced; only the schema's name (checked: ./options.js) is
// spliced, quoted.

/** @param {string} schema a checked schema name */
export function statementsOf(schema) {
  const s = `"${schema}"`;
  return {
    channel: `tarry.${schema}`,
    listen: `LISTEN "tarry.${schema}"`,
    offer: `SELECT head, at FROM ${s}.offer($1, $2::bytea[], $3::text[], $4::"char"[], $5::float8[], $6::"char"[], $7)`,
    reschedule: `SELECT found, head FROM ${s}.reschedule($1, $2, $3, $4)`,
    take: `SELECT kind, id, value, deadline, attempt, token::text AS token, schedule, reason, seq::text AS seq, expiry, at FROM ${s}.take($1, $2, $3, $4, $5::bytea[], $6::bigint[])`,
    ack: `SELECT id, schedule, at FROM ${s}.ack($1, $2::bytea[], $3::bigint[])`,
    nack: `SELECT outcome, deadline, schedule, at FROM ${s}.nack($1, $2, $3, $4, $5, $6)`,
    extend: `SELECT ${s}.extend($1, $2, $3, $4) AS expiry`,
    release: `SELECT ${s}.release($1, $2::bytea[], $3::bigint[]) AS released`,
    cancel: `DELETE FROM ${s}.items WHERE queue = $1 AND id = $2 AND state = 'p' AND schedule IS NULL RETURNING 1`,
    delayOf: `SELECT deadline - ${s}.clock() AS delay FROM ${s}.items WHERE queue = $1 AND id = $2 AND state = 'p'`,
    counts: `SELECT
        (SELECT count(*) FROM ${s}.items WHERE queue = $1 AND state = 'p')::int AS pending,
        (SELECT count(*) FROM ${s}.items WHERE queue = $1 AND state = 'l')::int AS "inFlight",
        (SELECT count(*) FROM ${s}.items WHERE queue = $1 AND state = 'd')::int AS dead,
        (SELECT deadline FROM ${s}.items WHERE queue = $1 AND state = 'p' ORDER BY deadline, seq LIMIT 1) - ${s}.clock() AS "headDelay",
        coalesce((SELECT paused FROM ${s}.queues WHERE queue = $1), false) AS paused`,
    get: `SELECT id, state, value, deadline, attempt, expiry, reason, died, schedule FROM ${s}.items WHERE queue = $1 AND id = $2`,
    pending: `SELECT id, state, value, deadline, attempt, schedule, seq::text AS seq FROM ${s}.items
      WHERE queue = $1 AND state = 'p' AND ($2::float8 IS NULL OR (deadline, seq) > ($2, $3::bigint))
      ORDER BY deadline, seq LIMIT $4`,
    inFlight: `SELECT id, state, value, deadline, attempt, schedule, expiry FROM ${s}.items
      WHERE queue = $1 AND state = 'l' AND ($2::float8 IS NULL OR (expiry, id) > ($2, decode($3, 'hex')))
      ORDER BY expiry, id LIMIT $4`,
    dead: `SELECT id, state, value, deadline, attempt, reason, died FROM ${s}.items
      WHERE queue = $1 AND state = 'd' AND ($2::float8 IS NULL OR (died, id) > ($2, decode($3, 'hex')))
      ORDER BY died, id LIMIT $4`,
    pause: `WITH q AS (INSERT INTO ${s}.queues AS x (queue, paused) VALUES ($1, true)
        ON CONFLICT (queue) DO UPDATE SET paused = true WHERE NOT x.paused RETURNING 1)
      SELECT count(*)::int AS changed, (SELECT pg_notify('tarry.${schema}', 'p ' || $1) FROM q) AS told FROM q`,
    resume: `WITH q AS (UPDATE ${s}.queues SET paused = false WHERE queue = $1 AND paused RETURNING 1)
      SELECT count(*)::int AS changed, (SELECT pg_notify('tarry.${schema}', 'r ' || $1) FROM q) AS told FROM q`,
    retryDead: `WITH r AS (UPDATE ${s}.items SET state = 'p', deadline = ${s}.clock(), seq = nextval('${s}.seq'),
        attempt = 0, reason = NULL, died = NULL WHERE queue = $1 AND id = $2 AND state = 'd' RETURNING deadline)
      SELECT deadline, pg_notify('tarry.${schema}', 'h ' || deadline || ' ' || $1) FROM r`,
    deleteDead: `DELETE FROM ${s}.items WHERE queue = $1 AND id = $2 AND state = 'd' RETURNING 1`,
    purgeDead: `WITH d AS (DELETE FROM ${s}.items WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${s}.items
        WHERE queue = $1 AND state = 'd' AND died <= ${s}.clock() - $2 LIMIT $3))
      RETURNING 1) SELECT count(*)::int AS n FROM d`,
    scheduleBegin: `SELECT ${s}.clock() AS now, nextval('${s}.seq')::text AS first`,
    scheduleRow: `SELECT * FROM ${s}.schedules WHERE queue = $1 AND id = $2 FOR UPDATE`,
    occurrenceHeld: `SELECT 1 FROM ${s}.items WHERE queue = $1 AND id = $2 AND schedule = $3`,
    unplace: `DELETE FROM ${s}.items WHERE queue = $1 AND id = $2 AND schedule = $3 AND state = 'p'`,
    place: `SELECT ${s}.place($1, $2, $3, $4)`,
    tellHead: `SELECT ${s}.tell_head($1, $2)`,
    scheduleUpsert: `INSERT INTO ${s}.schedules AS x (queue, id, kind, period, start, cron, zone, catch_up, overlap,
        value, due, succ, version, max_runs, stop_at, paused)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
      ON CONFLICT (queue, id) DO UPDATE SET kind = $3, period = $4, start = $5, cron = $6, zone = $7,
        catch_up = $8, overlap = $9, value = $10, due = $11, succ = $12, version = $13, max_runs = $14,
        stop_at = $15, paused = $16`,
    scheduleGet: `SELECT * FROM ${s}.schedules WHERE queue = $1 AND id = $2`,
    schedulePause: `SELECT ${s}.pause_schedule($1, $2) AS done`,
    scheduleResumed: `UPDATE ${s}.schedules SET paused = false, due = $3, succ = $4 WHERE queue = $1 AND id = $2`,
    scheduleTrigger: `SELECT ${s}.trigger_schedule($1, $2) AS at`,
    unschedule: `WITH x AS (DELETE FROM ${s}.schedules WHERE queue = $1 AND id = $2 RETURNING id, due),
      o AS (DELETE FROM ${s}.items i USING x WHERE i.queue = $1 AND i.id = ${s}.occurrence(x.id, x.due)
        AND i.state = 'p' AND i.schedule = x.id RETURNING 1)
      SELECT (SELECT count(*) FROM x)::int AS n`,
    scheduleList: `SELECT * FROM ${s}.schedules WHERE queue = $1 ORDER BY id`,
    advance: `SELECT ${s}.advance($1, $2, $3, $4, $5, $6) AS taken`,
    // The command line's look before it opens a queue (js/cli.js): the schema migrated, the
    // queue ever used, and the names of the queues there ($1 at most; a skip scan of the
    // items' primary key, one index probe per name, never a scan of the items).
    migrated: `SELECT to_regclass('${s}.schedules') IS NOT NULL AS migrated`,
    used: `SELECT EXISTS (SELECT 1 FROM ${s}.items WHERE queue = $1) OR EXISTS (SELECT 1 FROM ${s}.schedules
        WHERE queue = $1) OR EXISTS (SELECT 1 FROM ${s}.queues WHERE queue = $1) AS used`,
    queueNames: `WITH RECURSIVE q(name, n) AS (
        (SELECT queue, 1 FROM ${s}.items ORDER BY queue LIMIT 1)
        UNION ALL SELECT (SELECT i.queue FROM ${s}.items i WHERE i.queue > q.name ORDER BY i.queue LIMIT 1), q.n + 1
          FROM q WHERE q.name IS NOT NULL AND q.n < $1)
      SELECT name FROM (SELECT name FROM q WHERE name IS NOT NULL
        UNION (SELECT DISTINCT queue FROM ${s}.schedules ORDER BY queue LIMIT $1)
        UNION (SELECT queue FROM ${s}.queues ORDER BY queue LIMIT $1)) x ORDER BY name LIMIT $1 + 1`,
    clear: `WITH a AS (DELETE FROM ${s}.items WHERE queue = $1 RETURNING 1),
      b AS (DELETE FROM ${s}.schedules WHERE queue = $1 RETURNING 1) SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b) AS n`,
  };
}

/** @typedef {ReturnType<typeof statementsOf>} Statements */

/** An id as Postgres holds it: its UTF-8 bytes (text cannot hold U+0000). @param {string} id */
export const idBytes = (id) => Buffer.from(id, "utf8");
