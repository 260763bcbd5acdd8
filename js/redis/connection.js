// The connection of one RedisDelayQueue: its ioredis client (given, or opened from a URL or
// options; ioredis is loaded only then), its subscriber for the head channel, and running the
// scripts (js/redis/scripts.js) by SHA, loading one (EVAL) when the server lacks it
// (NOSCRIPT). Every script reply that starts with the server's time is a sample for the
// server clock (js/redis/clock.js).
//
// Order: calls reach Redis in the order they were made. The calls that one turn gathers into
// one script run (offers, acks: js/redis/batch.js) are sent before any other script is.

import { Batcher } from "./batch.js";
import { localNow, ServerClock } from "./clock.js";
import { SCRIPTS } from "./scripts.js";

/** @typedef {import("./scripts.js").Script} Script */

/**
 * What the queue needs of an ioredis `Redis` or `Cluster` (tests give either).
 * @typedef {object} Client
 * @property {(sha: string, numKeys: number, ...args: (string | number)[]) => Promise<any>} evalsha
 * @property {(source: string, numKeys: number, ...args: (string | number)[]) => Promise<any>} eval
 * @property {() => Client} duplicate
 * @property {(channel: string) => Promise<unknown>} subscribe
 * @property {(event: string, listener: (...args: any[]) => void) => unknown} on
 * @property {(event: string, listener: (...args: any[]) => void) => unknown} off
 * @property {() => Promise<unknown>} quit
 * @property {() => void} disconnect
 */

/**
 * Whether `redis` is a client (rather than a URL or options).
 * @param {unknown} redis
 * @returns {redis is Client}
 */
export function isClient(redis) {
  return (
    typeof redis === "object" &&
    redis !== null &&
    typeof (/** @type {any} */ (redis).evalsha) === "function" &&
    typeof (/** @type {any} */ (redis).duplicate) === "function"
  );
}

export class Connection {
  /** The server's clock as this process knows it. */
  clock = new ServerClock();
  /** @type {string | object} */
  #redis;
  /** @type {string[]} */
  #keys;
  /** @type {(error: unknown) => void} */
  #onerror;
  /** @type {Client | null} */
  #client = null;
  #ownsClient;
  /** @type {Client | null} */
  #subscriber = null;
  /** @type {Promise<void> | null} */
  #ready = null;
  #connected = false;
  /** @type {(() => void) | null} */
  #detach = null;
  /** @type {Map<string, Batcher<any, any>>} the gathered calls, by the script they run */
  #batchers = new Map();

  /**
   * @param {string | object} redis a URL, ioredis options, or a client (then used, not owned)
   * @param {string[]} keys the queue's keys, every script's KEYS
   * @param {(error: unknown) => void} onerror
   */
  constructor(redis, keys, onerror) {
    this.#redis = redis;
    this.#keys = keys;
    this.#onerror = onerror;
    this.#ownsClient = !isClient(redis);
    if (isClient(redis)) this.#client = redis;
  }

  /** Whether the first connection has been made (and the server's clock read once). */
  get connected() {
    return this.#connected;
  }

  /** Whether a subscriber listens to the head channel. */
  get subscribed() {
    return this.#subscriber !== null;
  }

  /**
   * Calls gathered per turn into runs of `script` of up to `size` entries each.
   * @template E, R
   * @param {Script} script
   * @param {number} size
   * @param {(entries: E[]) => Promise<R[]>} send
   * @returns {Batcher<E, R>}
   */
  batcher(script, size, send) {
    const b = new Batcher(size, send);
    this.#batchers.set(script.name, b);
    return b;
  }

  /** Connects once (later calls share it; a failed attempt is tried again by the next call). */
  connect() {
    this.#ready ??= (async () => {
      if (!this.#client) {
        let Redis;
        try {
          ({ Redis } = await import("ioredis"));
        } catch (e) {
          throw new Error("tarry-queue/redis needs the ioredis package (npm install ioredis) when given a URL", {
            cause: e,
          });
        }
        const redis = this.#redis;
        this.#client =
          typeof redis === "string"
            ? new Redis(redis, { enableAutoPipelining: true })
            : new Redis({ enableAutoPipelining: true, ...redis });
        /** @type {Client} */ (this.#client).on("error", (e) => this.#onerror(e));
      }
      // A first reading of the server's clock, so that the first offer is stamped.
      await this.#eval(SCRIPTS.time, []);
      this.#connected = true;
    })();
    this.#ready.catch(() => {
      this.#ready = null;
    });
    return this.#ready;
  }

  /**
   * Runs `script` with `params` (connecting first when needed) and resolves with its reply,
   * read by the script's own reader.
   * @template P, R
   * @param {{ name: string, source: string, sha: string, timed: boolean, argv: (params: P) => (string | number)[], reply: (reply: any) => R }} script
   * @param {P} params
   * @returns {Promise<R>}
   */
  async run(script, params) {
    if (!this.#connected) await this.connect();
    // Calls reach Redis in the order they were made, gathered or not.
    for (const [name, b] of this.#batchers) if (name !== script.name) b.flushNow();
    return script.reply(await this.#eval(script, script.argv(params)));
  }

  /**
   * @param {Script} script
   * @param {(string | number)[]} args
   */
  async #eval(script, args) {
    const client = /** @type {Client} */ (this.#client);
    const keys = this.#keys;
    const sent = localNow();
    let reply;
    try {
      reply = await client.evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (e) {
      if (!String(/** @type {any} */ (e)?.message).startsWith("NOSCRIPT")) throw explain(e, keys);
      try {
        reply = await client.eval(script.source, keys.length, ...keys, ...args);
      } catch (e2) {
        throw explain(e2, keys);
      }
    }
    if (script.timed) {
      const server = Number(reply[0]);
      if (Number.isFinite(server)) this.clock.sample(sent, server, localNow());
    }
    return reply;
  }

  /**
   * Subscribes a duplicate of the client to `channel`. `onMessage` gets each message;
   * `onReady` runs whenever the client or the subscriber (re)connects, when messages may have
   * been missed.
   * @param {string} channel
   * @param {(message: string) => void} onMessage
   * @param {() => void} onReady
   */
  async subscribe(channel, onMessage, onReady) {
    if (!this.#connected) await this.connect();
    const client = /** @type {Client} */ (this.#client);
    const sub = client.duplicate();
    sub.on("error", (e) => this.#onerror(e));
    sub.on("message", (_channel, message) => onMessage(message));
    try {
      await sub.subscribe(channel);
    } catch (e) {
      sub.disconnect();
      throw e;
    }
    this.#subscriber = sub;
    sub.on("ready", onReady);
    client.on("ready", onReady);
    this.#detach = () => client.off("ready", onReady);
  }

  /**
   * A client of its own for a blocking read (js/redis/observer.js), a duplicate of this
   * connection's (connecting first when needed); its caller closes it.
   * @returns {Promise<any>}
   */
  async duplicate() {
    if (!this.#connected) await this.connect();
    const c = /** @type {Client} */ (this.#client).duplicate();
    c.on("error", (e) => this.#onerror(e));
    return c;
  }

  /** Closes the subscriber and the client this connection opened (a given client stays open). */
  async close() {
    this.#detach?.();
    /** @param {Client} c */
    const quit = (c) => c.quit().catch(() => c.disconnect());
    if (this.#subscriber) await quit(this.#subscriber);
    if (this.#ownsClient && this.#client) await quit(this.#client);
  }
}

/**
 * A Redis error, with what it means for this queue when that is clear.
 * @param {unknown} e
 * @param {string[]} keys
 */
function explain(e, keys) {
  if (String(/** @type {any} */ (e)?.message).startsWith("WRONGTYPE")) {
    return new Error(
      `tarry-queue/redis: a key of this queue holds another type of value (did something else write to ${keys.join(", ")}?)`,
      { cause: e },
    );
  }
  return e;
}
