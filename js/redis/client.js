// The ioredis clients of tarry-queue/redis: the one a queue is given, or the one it opens from
// a URL or ioredis options (ioredis is loaded only then), and beside every client ONE hub that
// all the queues on it share (js/redis/hub.js: one listener per client event, one subscriber,
// one server clock, one gathered run of scripts per turn).
//
// Clients opened from settings are shared: the queues of a process opened with the same URL
// string, or with deep-equal ioredis options (functions and other non-plain objects by
// identity), and the same commandTimeout, share one client (so one connection pair, whatever
// the number of queues), counted: the last queue to close disconnects it. A client given to
// a queue is used as it is, never shared by settings and never closed by the queue.
// Finding a shared client costs O(1) for a URL, O(clients opened from options) otherwise.
//
// A client the queue opens gets defaults that fail fast and recover: each connection attempt
// gives up after `connectTimeout` ms and is retried with a back-off of at most 2 s for as long
// as the queue is open (the queue bounds each call itself: js/redis/connection.js). Options
// given as an object override them.

/**
 * What the queue needs of an ioredis `Redis` or `Cluster` (tests give either).
 * @typedef {object} Client
 * @property {string} status "wait", "connecting", "connect", "ready", "reconnecting", "end", ...
 * @property {boolean} [isCluster] true on an ioredis `Cluster`
 * @property {(sha: string, numKeys: number, ...args: (string | number)[]) => Promise<any>} evalsha
 * @property {(source: string, numKeys: number, ...args: (string | number)[]) => Promise<any>} eval
 * @property {() => Client} duplicate
 * @property {() => Promise<unknown>} connect
 * @property {(...channels: string[]) => Promise<unknown>} subscribe
 * @property {(...channels: string[]) => Promise<unknown>} unsubscribe
 * @property {(event: string, listener: (...args: any[]) => void) => unknown} on
 * @property {(event: string, listener: (...args: any[]) => void) => unknown} off
 * @property {() => void} disconnect
 * @property {(subcommand: "GET", parameter: string) => Promise<unknown>} config
 * @property {(replicas: number, timeout: number) => Promise<number>} wait
 * @property {() => Promise<(string | number)[]>} time
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

/**
 * A client for a URL or ioredis options, with the queue's defaults (options given override them).
 * @param {string | object} redis
 * @param {number} connectTimeout ms one connection attempt may take
 * @returns {Promise<Client>}
 */
export async function openClient(redis, connectTimeout) {
  let Redis;
  try {
    ({ Redis } = await import("ioredis"));
  } catch (e) {
    throw new Error("tarry-queue/redis needs the ioredis package (npm install ioredis) when given a URL", {
      cause: e,
    });
  }
  const defaults = {
    enableAutoPipelining: true,
    connectTimeout,
    // Keep reconnecting while the queue is open, at most 2 s apart: the queue recovers when
    // Redis comes back; each call is bounded by the queue (options.commandTimeout).
    retryStrategy: (/** @type {number} */ times) => Math.min(50 * 2 ** times, 2000),
  };
  return typeof redis === "string" ? new Redis(redis, defaults) : new Redis({ ...defaults, ...redis });
}

/**
 * A client opened from settings, and how many queues hold it.
 * @typedef {{ redis: string | object, connectTimeout: number, client: Promise<Client>, holders: number }} Shared
 */

/** @type {Map<string, Shared[]>} the clients opened from settings, by URL ("" for options) */
const shared = new Map();

/**
 * The client of `redis` (a URL or ioredis options) shared by the queues of this process with
 * the same settings, opened on first use; `release()` once the queue is done with it (the last
 * release disconnects it; a second release by the same holder does nothing).
 * @param {string | object} redis
 * @param {number} connectTimeout ms one connection attempt may take
 * @returns {{ client: Promise<Client>, release: () => void }}
 */
export function acquireClient(redis, connectTimeout) {
  const key = typeof redis === "string" ? redis : "";
  let list = shared.get(key);
  if (!list) shared.set(key, (list = []));
  let entry = list.find((e) => e.connectTimeout === connectTimeout && sameSettings(e.redis, redis));
  if (!entry) {
    const made = { redis, connectTimeout, client: openClient(redis, connectTimeout), holders: 0 };
    entry = made;
    list.push(made);
    // A client that could not be made (no ioredis) is forgotten: the next queue tries again.
    made.client.catch(() => forget(made));
  }
  entry.holders++;
  const held = entry;
  let released = false;
  return {
    client: held.client,
    release() {
      if (released) return;
      released = true;
      if (--held.holders > 0) return;
      forget(held);
      held.client.then(
        (c) => c.disconnect(),
        () => {},
      );
    },
  };
}

/** @param {Shared} entry */
function forget(entry) {
  const key = typeof entry.redis === "string" ? entry.redis : "";
  const list = shared.get(key);
  const i = list?.indexOf(entry) ?? -1;
  if (i < 0 || !list) return;
  list.splice(i, 1);
  if (list.length === 0) shared.delete(key);
}

/**
 * Whether two connection settings are the same: equal strings, or plain objects and arrays with
 * the same keys and deep-equal values; bytes (a TLS certificate) by content; anything else
 * (a function, a class instance) by identity.
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
export function sameSettings(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (ArrayBuffer.isView(a) && ArrayBuffer.isView(b)) {
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    return x.length === y.length && x.every((v, i) => v === y[i]);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const plain = (/** @type {object} */ o) => {
    const proto = Object.getPrototypeOf(o);
    return proto === Object.prototype || proto === null || proto === Array.prototype;
  };
  if (!plain(a) || !plain(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && sameSettings(/** @type {any} */ (a)[k], /** @type {any} */ (b)[k]));
}
