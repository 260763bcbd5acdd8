// A queue's calls on Postgres: the pool (the caller's pg.Pool, or one this module opens for a
// postgres:// URL and shares between the queues of the process with the same URL, counted),
// and running one statement within `commandTimeout`, on a client of the pool or on the
// caller's own client (inside its transaction).
//
// - Every client taken from the pool gets an 'error' listener: pg.Pool removes its own from a
//   checked-out client, and a connection dropped between two statements (pg_terminate_backend,
//   a restart) would otherwise raise an unhandled 'error' that ends the process.
// - A call that found no connection within commandTimeout rejects saying so (nothing was
//   sent); one sent and not answered in time rejects saying it may or may not have taken
//   effect, and its connection is destroyed rather than handed back. The times are alarms of
//   the process's one host timer (../engine/alarms.js), not timers of their own.
// - Messages never quote a credential (../engine/redact.js).

import { redact } from "../engine/redact.js";
import { Alarm } from "../engine/alarms.js";
import { localNow } from "../engine/clock.js";

/** Pools this module opened, by URL: shared by the queues of a process, counted. @type {Map<string, { pool: any, refs: number }>} */
const opened = new Map();

/** Clients that have our 'error' listener. @type {WeakSet<object>} */
const listened = new WeakSet();
/** Clients that have the silent 'error' listener of guard(). @type {WeakSet<object>} */
const guarded = new WeakSet();

/**
 * Gives a client taken from the pool for a transaction of its own (migrate, offerMany) a silent
 * 'error' listener, once per client however often it is taken: the statement that meets the
 * lost connection rejects with its error, and the client is then released as broken.
 * @param {any} client
 */
export function guard(client) {
  if (guarded.has(client)) return;
  guarded.add(client);
  client.on("error", () => {});
}

/** An error of tarry-queue/postgres, with the driver's error (redacted) as its cause. */
export class PostgresError extends Error {
  /** @param {string} message @param {unknown} [cause] */
  constructor(message, cause) {
    super(redact(message), cause === undefined ? undefined : { cause });
    this.name = "PostgresError";
    if (cause && typeof cause === "object" && "code" in cause) this.code = /** @type {any} */ (cause).code;
  }
}

/** The driver's message, redacted. @param {unknown} e */
const said = (e) => redact(String(/** @type {any} */ (e)?.message ?? e));

/** Loads `pg` (an optional peer dependency) when a URL is given instead of a pool. */
async function loadPg() {
  try {
    // A specifier in a variable: the types check this file without pg's types installed.
    const name = "pg";
    const mod = await import(name);
    return mod.default ?? mod;
  } catch (e) {
    throw new PostgresError(
      'tarry-queue/postgres needs the package "pg" (npm install pg) to connect by URL; or pass a pg.Pool as options.pg',
      e,
    );
  }
}

export class Connection {
  /** @type {Promise<any>} the pool */
  pool;
  #url;
  #timeout;
  #onerror;
  #own = false;
  #released = false;

  /**
   * @param {string | object} pg a postgres:// URL or a pg.Pool
   * @param {number} commandTimeout
   * @param {(e: unknown) => void} onerror
   */
  constructor(pg, commandTimeout, onerror) {
    this.#timeout = commandTimeout;
    this.#onerror = onerror;
    if (typeof pg === "string") {
      this.#url = pg;
      this.#own = true;
      let entry = opened.get(pg);
      if (entry === undefined) {
        const pool = loadPg().then((m) => {
          // A connection attempt gives up with the call (its commandTimeout), so that nothing
          // waits on a server that never answers, close() included.
          const p = new m.Pool({ connectionString: pg, max: 10, connectionTimeoutMillis: commandTimeout });
          p.on("error", () => {}); // an idle client's error: the next call reconnects
          return p;
        });
        pool.catch(() => {});
        entry = { pool, refs: 0 };
        opened.set(pg, entry);
      }
      entry.refs++;
      this.pool = entry.pool;
    } else {
      this.pool = Promise.resolve(pg);
    }
  }

  /** Listens for a connection's errors once: it is then dropped by the call that meets it. @param {any} client */
  #listen(client) {
    if (listened.has(client)) return;
    listened.add(client);
    client.on("error", (/** @type {unknown} */ e) =>
      this.#onerror(new PostgresError(`connection lost: ${said(e)}`, e)),
    );
  }

  /**
   * Runs one statement. With `client` (the caller's), on it, inside whatever transaction it has
   * open; else on a client of the pool, as its own transaction.
   * @param {string} what the call, for messages
   * @param {string | import("./statements.js").Prepared} text (a named statement: prepared once per connection)
   * @param {unknown[] | (() => unknown[])} values (a function: made as the statement is sent)
   * @param {any} [client]
   * @returns {Promise<any[]>} the rows
   */
  async query(what, text, values, client) {
    const limit = localNow() + this.#timeout;
    let late = /** @type {null | ((e: Error) => void)} */ (null);
    let phase = "connect";
    const alarm = new Alarm(false, () => late?.(this.#late(what, phase)));
    alarm.set(limit);
    const timed = new Promise((_, reject) => {
      late = reject;
    });
    timed.catch(() => {});
    let held = client;
    try {
      if (held === undefined) {
        const pool = await Promise.race([this.pool, timed]);
        const connecting = pool.connect();
        held = await Promise.race([connecting, timed]).catch((e) => {
          // Too late: a connection that comes after all goes back to the pool unused.
          connecting.then(
            (/** @type {any} */ c) => c.release(),
            () => {},
          );
          if (e instanceof PostgresError) throw e;
          throw new PostgresError(`${what} could not reach Postgres: ${said(e)}`, e);
        });
        this.#listen(held);
      }
      phase = "sent";
      const result = await Promise.race([
        held.query(text, typeof values === "function" ? values() : values),
        timed,
      ]).catch((e) => {
        if (e instanceof PostgresError) throw e;
        if (client === undefined) throw new PostgresError(`${what} failed: ${said(e)}`, e);
        throw e; // the caller's own client: its error as the driver gave it
      });
      if (client === undefined) held.release();
      held = null;
      return Array.isArray(result) ? result.at(-1).rows : result.rows;
    } catch (e) {
      // A client of ours that failed or did not answer is destroyed, not handed back.
      if (client === undefined && held) held.release(true);
      throw e;
    } finally {
      alarm.disarm();
    }
  }

  /** @param {string} what @param {string} phase */
  #late(what, phase) {
    return new PostgresError(
      phase === "connect"
        ? `${what}: no connection to Postgres within ${this.#timeout} ms (commandTimeout); nothing was sent`
        : `${what}: Postgres did not answer within ${this.#timeout} ms (commandTimeout); it may or may not have taken effect`,
    );
  }

  /** Gives the pool back: a pool this module opened ends with the last queue that used it. */
  async close() {
    if (this.#released) return;
    this.#released = true;
    if (!this.#own) return;
    const entry = opened.get(/** @type {string} */ (this.#url));
    if (entry === undefined || --entry.refs > 0) return;
    opened.delete(/** @type {string} */ (this.#url));
    const pool = await entry.pool.catch(() => null);
    await pool?.end();
  }
}
