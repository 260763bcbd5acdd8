// The events of every process of a queue, for a RedisDelayQueue made with `observe: true`.
//
// The scripts append each state change to the queue's capped stream (includes/meta.lua) only
// while its `observed` key exists; an observer keeps that key alive (an expiry it renews), so
// a queue nobody observes pays one EXISTS per script run and stores nothing. The observer
// reads the stream from where it stood when it started, on a client of its own (XREAD BLOCK
// holds its connection), and dispatches each entry once, in the stream's order: the order in
// which Redis ran the scripts, whichever process ran them. A process that dies (kill -9)
// loses nothing of this view: its deliveries were appended by the scripts that made them, and
// the expiry of its leases by the script of whichever process put them back.
//
// The stream keeps the last 100,000 events or so: an observer that falls further behind than
// that misses the oldest (it tells `error` when it notices). Costs: one XREAD per batch of up
// to 1000 events, one SET every RENEW_MS.

/** How long the observed key lives without renewal, and how often it is renewed (ms). */
const TTL_MS = 30_000;
const RENEW_MS = 10_000;
/** How long one XREAD waits for events (ms): the longest a close() waits for the loop. */
const BLOCK_MS = 1000;

/** Whether stream id a comes before b. @param {string} a @param {string} b */
function before(a, b) {
  const [am, as] = a.split("-").map(Number);
  const [bm, bs] = b.split("-").map(Number);
  return am < bm || (am === bm && as < bs);
}

/** Whether b is the id right after a (nothing can stand between them). @param {string} a @param {string} b */
function follows(a, b) {
  const [am, as] = a.split("-").map(Number);
  const [bm, bs] = b.split("-").map(Number);
  return am === bm && bs === as + 1;
}

/** Fields whose values are numbers. */
const NUMBERS = new Set(["attempt", "deadline", "lateness", "delayMs"]);

export class Observer {
  /** @type {import("./connection.js").Connection} */
  #conn;
  #events;
  #observed;
  /** @type {(type: string, detail: Record<string, unknown>) => void} */
  #tell;
  /** @type {(error: unknown) => void} */
  #onerror;
  /** @type {any} */
  #client = null;
  /** @type {Promise<void> | null} */
  #running = null;
  #closed = false;

  /**
   * @param {import("./connection.js").Connection} conn
   * @param {string[]} keys the queue's keys (js/redis/keys.js)
   * @param {(type: string, detail: Record<string, unknown>) => void} tell
   * @param {(error: unknown) => void} onerror
   */
  constructor(conn, keys, tell, onerror) {
    this.#conn = conn;
    this.#events = keys[7];
    this.#observed = keys[8];
    this.#tell = tell;
    this.#onerror = onerror;
  }

  /** Starts observing (once); resolves when the stream is being read. */
  start() {
    this.#running ??= this.#loop();
    return this.#running;
  }

  async #loop() {
    let last = "$";
    let renewAt = 0;
    let failures = 0;
    while (!this.#closed) {
      try {
        if (this.#client === null) {
          this.#client = await this.#conn.duplicate();
          if (this.#closed) break;
        }
        const client = this.#client;
        if (Date.now() >= renewAt) {
          await client.set(this.#observed, "1", "PX", TTL_MS);
          renewAt = Date.now() + RENEW_MS;
          if (last === "$") {
            // From the newest entry there is now: what comes after it, the scripts appended
            // knowing that this process observes.
            const [newest] = await client.xrevrange(this.#events, "+", "-", "COUNT", 1);
            last = newest?.[0] ?? "0-0";
          } else {
            const [oldest] = await client.xrange(this.#events, "-", "+", "COUNT", 1);
            if (oldest !== undefined && before(last, oldest[0]) && !follows(last, oldest[0])) {
              this.#onerror(
                new Error(
                  `tarry-queue/redis: events before ${oldest[0]} were trimmed from the stream before this process read them`,
                ),
              );
              this.#tell("error", { error: new Error("events were trimmed before they were read") });
            }
          }
        }
        const reply = await client.xread("COUNT", 1000, "BLOCK", BLOCK_MS, "STREAMS", this.#events, last);
        failures = 0;
        for (const [id, fields] of reply?.[0]?.[1] ?? []) {
          last = id;
          this.#dispatch(fields);
        }
      } catch (e) {
        if (this.#closed) break;
        this.#onerror(e);
        failures++;
        await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 50 * 2 ** Math.min(failures, 7))));
      }
    }
  }

  /** @param {string[]} fields t, type, then field, value, ... */
  #dispatch(fields) {
    const type = fields[1];
    /** @type {Record<string, unknown>} */
    const detail = {};
    for (let i = 2; i < fields.length; i += 2) {
      const k = fields[i];
      detail[k] = NUMBERS.has(k) ? Number(fields[i + 1]) : fields[i + 1];
    }
    this.#tell(type, detail);
  }

  /** Stops reading and closes its client (within one XREAD's wait). */
  async close() {
    this.#closed = true;
    const client = this.#client;
    if (client !== null) client.disconnect();
    await this.#running?.catch(() => {});
  }
}
