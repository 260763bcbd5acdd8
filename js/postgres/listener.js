// The one LISTEN connection of a process for a pool: a dedicated client (not one of the pool's:
// LISTEN needs a session that stays, which a pool or PgBouncer in transaction mode does not
// give), listening on the channel of each schema its consumers use, and handing each
// notification to the consumers of the queue it names. When the connection drops it
// reconnects (backing off up to 2 s) and every consumer looks again, since notifications sent
// meanwhile are lost. Opened with the first consumer of the pool, closed with the last.

import { Alarm } from "../engine/alarms.js";
import { redact } from "../engine/redact.js";
import { localNow } from "../engine/clock.js";
import { PostgresError } from "./connection.js";

/** @type {WeakMap<object, Listener>} */
const byPool = new WeakMap();

/**
 * What a listener tells a consumer.
 * @typedef {{ heard: (kind: "h" | "p" | "r", deadline: number) => void, lost: () => void }} Ear
 */

export class Listener {
  #pool;
  #onerror;
  /** @type {Map<string, Map<string, Set<Ear>>>} channel → queue → consumers */
  #ears = new Map();
  /** @type {any} */
  #client = null;
  /** @type {Promise<void> | null} */
  #connecting = null;
  #backoff = 50;
  #retry = new Alarm(false, () => this.#connect());
  #closed = false;

  /** The pool's listener, made on first use. @param {any} pool @param {(e: unknown) => void} onerror */
  static of(pool, onerror) {
    let l = byPool.get(pool);
    if (l === undefined || l.#closed) {
      l = new Listener(pool, onerror);
      byPool.set(pool, l);
    }
    return l;
  }

  /** @param {any} pool @param {(e: unknown) => void} onerror */
  constructor(pool, onerror) {
    this.#pool = pool;
    this.#onerror = onerror;
  }

  /**
   * Adds a consumer of `queue` on `channel`; resolves once the channel is listened to (or the
   * connection failed: it is retried, and the consumer looks again when it is back).
   * @param {string} channel @param {string} queue @param {Ear} ear
   */
  async add(channel, queue, ear) {
    let queues = this.#ears.get(channel);
    const fresh = queues === undefined;
    if (queues === undefined) this.#ears.set(channel, (queues = new Map()));
    let ears = queues.get(queue);
    if (ears === undefined) queues.set(queue, (ears = new Set()));
    ears.add(ear);
    if (this.#client === null) return this.#connect();
    if (fresh) await this.#client.query(`LISTEN "${channel}"`).catch((/** @type {unknown} */ e) => this.#lost(e));
  }

  /** @param {string} channel @param {string} queue @param {Ear} ear */
  remove(channel, queue, ear) {
    const queues = this.#ears.get(channel);
    const ears = queues?.get(queue);
    ears?.delete(ear);
    if (ears?.size === 0) queues?.delete(queue);
    if (queues?.size === 0) this.#ears.delete(channel);
    if (this.#ears.size === 0) this.#close();
  }

  #connect() {
    if (this.#connecting) return this.#connecting;
    this.#connecting = (async () => {
      const Client = this.#pool.Client;
      const client = new Client(this.#pool.options);
      client.on("error", (/** @type {unknown} */ e) => this.#lost(e, client));
      client.on("end", () => this.#lost(null, client));
      client.on("notification", (/** @type {{ channel: string, payload?: string }} */ n) => this.#heard(n));
      try {
        await client.connect();
        for (const channel of this.#ears.keys()) await client.query(`LISTEN "${channel}"`);
      } catch (e) {
        client.end().catch(() => {});
        this.#lost(e, client);
        return;
      }
      if (this.#closed) {
        client.end().catch(() => {});
        return;
      }
      this.#client = client;
      this.#backoff = 50;
      // Anything sent while no connection listened was lost: every consumer looks again.
      for (const queues of this.#ears.values()) for (const ears of queues.values()) for (const ear of ears) ear.lost();
    })().finally(() => {
      this.#connecting = null;
    });
    return this.#connecting;
  }

  /** @param {unknown} e @param {any} [client] */
  #lost(e, client) {
    if (client !== undefined && this.#client !== null && client !== this.#client) return;
    if (this.#client !== null) {
      this.#client.removeAllListeners("notification");
      this.#client.end().catch(() => {});
    }
    this.#client = null;
    if (this.#closed) return;
    if (e)
      this.#onerror(
        new PostgresError(
          `the LISTEN connection failed (reconnecting): ${redact(String(/** @type {any} */ (e)?.message ?? e))}`,
          e,
        ),
      );
    this.#retry.set(localNow() + this.#backoff);
    this.#backoff = Math.min(2000, this.#backoff * 2);
  }

  /** @param {{ channel: string, payload?: string }} n */
  #heard({ channel, payload = "" }) {
    const kind = payload[0];
    let deadline = Number.NaN;
    let queue;
    if (kind === "h") {
      const space = payload.indexOf(" ", 2);
      deadline = Number(payload.slice(2, space));
      queue = payload.slice(space + 1);
    } else queue = payload.slice(2);
    const ears = this.#ears.get(channel)?.get(queue);
    if (!ears || (kind !== "h" && kind !== "p" && kind !== "r")) return;
    for (const ear of ears) ear.heard(kind, deadline);
  }

  #close() {
    this.#closed = true;
    this.#retry.disarm();
    const c = this.#client;
    this.#client = null;
    c?.end().catch(() => {});
  }
}
