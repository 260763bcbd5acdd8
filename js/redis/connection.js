// The connection of one RedisDelayQueue: its ioredis client (js/redis/client.js), the line of
// its calls, and running the scripts (js/redis/scripts.js). Every script reply that starts with
// the server's time is a sample for the server clock (js/engine/clock.js).
//
// Ground rules (the line's own, order, slot migrations retried and flow control: js/redis/line.js):
//
// - Order. Calls reach Redis in the order they were made, connected or not: each call takes
//   its place in the line when it is made, and the line is sent in order once the client is
//   ready (a call's arguments are built when it is sent, so a call made before the first
//   connection is stamped with what the connection learns). The calls that one turn gathers
//   into one script run (offers, acks: js/engine/batch.js) are sent before any other script is.
//   On a plain Redis the calls of every queue on the client sent in one turn go in one run
//   (js/redis/gather.js), each on its own keys, in the order they were sent.
// - Scripts by SHA, never overtaken (js/redis/eval.js). Redis runs every script as a function
//   of one library (js/redis/lua.js), so it has all of them or none. The first call after the connection is
//   made goes as EVAL, in its own place in the line (it loads the library for the calls behind
//   it); later ones by SHA (EVALSHA). A NOSCRIPT anyway (SCRIPT FLUSH while connected) then
//   comes back for every call on its way after it too, none of which ran: each is sent again,
//   in order, and the calls not sent yet wait until they have been.
// - Permissions checked. Before its first call, each connection runs the probe script
//   (js/redis/probe.js): what the Redis user may not do rejects the calls waiting, saying why.
// - Errors said once. Connection errors go to `onerror` once per outage (repeats of the same
//   error are dropped until a call succeeds again); Redis errors that mean something for the
//   queue (a key of another type, a missing permission) are explained (js/redis/errors.js).
// - Closing waits for the calls on their way (each bounded), then lets go of the client: one
//   opened from settings is shared by the queues of the process with the same settings and
//   disconnected by the last of them to close (js/redis/client.js); a given one stays open.
//   Later calls reject with ClosedError.

import { ClosedError } from "../engine/errors.js";
import { redact } from "../engine/redact.js";
import { Batcher } from "../engine/batch.js";
import { ScriptRunner } from "./eval.js";
import { acquireClient, isClient } from "./client.js";
import { hubOf, newServer } from "./hub.js";
import { explain, lasting, redacted, selectFailed } from "./errors.js";
import { Line } from "./line.js";
import { Probe } from "./probe.js";

/** @typedef {import("./scripts.js").Script} Script */
/** @typedef {import("./client.js").Client} Client */

export class Connection {
  /** What this queue knows of its server, until (or unless) its client's hub keeps it for every queue on the client. */
  #own = newServer();
  /** Running scripts by SHA, and sending them again after a NOSCRIPT (js/redis/eval.js). */
  #scripts = new ScriptRunner({
    keys: () => this.#keys,
    server: () => this.#hub?.server ?? this.#own,
    client: () => /** @type {Client} */ (this.#client),
    gather: () => this.#hub?.gather,
    explain: (e) => explain(e, this.#where),
    resume: () => this.#send(),
  });
  /** @type {string | object} */
  #redis;
  #keys;
  #where;
  #onerror;
  #commandTimeout;
  /** @type {Client | null} */
  #client = null;
  #owned;
  /** @type {import("./hub.js").Hub | null} */
  #hub = null;
  /** @type {Promise<void> | null} opening (or finding) the client this queue shares */
  #opening = null;
  /** @type {(() => void) | null} lets go of the shared client */
  #release = null;
  /** The calls in their places (js/redis/line.js). @type {Line} */
  #line;
  /** What the Redis user may not do, checked before the first call of each connection (js/redis/probe.js). @type {Probe} */
  #probe;
  /** The last connection error (the cause of a call that found no connection). */
  /** @type {unknown} */
  #lastError = null;
  /** What was last reported to onerror, until a call succeeds again. */
  /** @type {string | null} */
  #reported = null;
  /** An error that makes every call fail until the next connection (Redis refused the database). */
  /** @type {Error | null} */
  #fatal = null;
  #closed = false;
  /** @type {Promise<void> | null} */
  #closing = null;
  /** @type {Map<string, Batcher<any, any>>} the gathered calls, by the script they run */
  #batchers = new Map();
  /** @type {import("./hub.js").Member} */
  #member = {
    ready: () => {
      this.#own.loaded = false; // a new connection: a restarted server has no scripts (the hub's is reset by the hub)
      this.#probe.reset(); // nor, maybe, the same ACL
      this.#send();
      if (this.#readies++ > 0) for (const fn of this.#onReady) fn();
    },
    connect: () => {
      this.#fatal = null;
    },
    end: () => this.#fail(lasting(new Error("tarry-queue/redis: the ioredis client of this queue was closed"))),
    error: (e) => {
      this.#lastError = e;
      if (!selectFailed(e)) return this.report(e);
      const refused = /** @type {Error} */ (explain(e, this.#where));
      this.#fail(refused);
      this.report(refused);
    },
  };
  /** @type {Map<import("./hub.js").Listener, string>} the channel of each subscription */
  #subscriptions = new Map();

  /**
   * @param {string | object} redis a URL, ioredis options, or a client (then used, not owned)
   * @param {string[]} keys the queue's keys, every script's KEYS
   * @param {string} channel the queue's head channel
   * @param {{ prefix: string, onerror: (error: unknown) => void, commandTimeout: number, shards: number }} options
   *   (`shards`: what the probe checks the queue was created with; 0 for a shard that does not keep it)
   */
  constructor(redis, keys, channel, { prefix, onerror, commandTimeout, shards }) {
    this.#redis = redis;
    this.#keys = keys;
    this.#where = { keys, prefix, url: typeof redis === "string" ? redact(redis) : undefined };
    this.#onerror = onerror;
    this.#commandTimeout = commandTimeout;
    const cluster = () => Boolean(this.#client?.isCluster);
    const send = () => this.#send();
    this.#line = new Line(
      {
        resume: send,
        ready: () => this.#client?.status === "ready",
        cluster,
        retrying: () => this.#probe.retrying(),
        answered: () => {
          this.#reported = null;
        },
        probeRefused: () => this.#probe.refused,
        lastError: () => this.#lastError,
        redacted,
      },
      this.#where,
      commandTimeout,
    );
    const probing = { scripts: this.#scripts, channel, shards, where: this.#where, line: this.#line, cluster, send };
    this.#probe = new Probe(probing);
    this.#owned = !isClient(redis);
    if (isClient(redis)) this.#attach(redis);
  }

  /** The server's clock as this process knows it: the one of the client's hub (every queue on the client feeds it). */
  get clock() {
    return (this.#hub?.server ?? this.#own).clock;
  }

  /** @type {Set<() => void>} */
  #onReady = new Set();
  #readies = 0;

  /**
   * Runs `fn` whenever the client becomes ready again after a reconnection.
   * @param {() => void} fn
   */
  onReady(fn) {
    this.#onReady.add(fn);
  }

  /** Whether close() was called: calls reject with ClosedError. */
  get closed() {
    return this.#closed;
  }

  /**
   * Calls gathered per turn into runs of `script` of up to `size` entries each.
   * @template E, R
   * @param {Script} script
   * @param {number} size
   * @param {(entries: E[]) => Promise<R[]>} send
   * @param {boolean} [lazy] whether the first call of a turn waits for the others too (js/engine/batch.js)
   * @returns {Batcher<E, R>}
   */
  batcher(script, size, send, lazy = false) {
    const b = new Batcher(size, send, lazy);
    this.#batchers.set(script.name, b);
    return b;
  }

  /**
   * Runs `script` and resolves with its reply, read by the script's own reader. `params` (or
   * what the function gives, called when the call is sent) builds its ARGV.
   * @template P, R
   * @param {{ name: string, source: string, sha: string, timed: boolean, argv: (params: P) => (string | number)[], reply: (reply: any) => R }} script
   * @param {P | (() => P)} params
   * @returns {Promise<R>}
   */
  run(script, params) {
    // Calls reach Redis in the order they were made, gathered or not.
    for (const [name, b] of this.#batchers) if (name !== script.name) b.flushNow();
    return this.#call(() => {
      const p = typeof params === "function" ? /** @type {() => P} */ (params)() : params;
      return this.#scripts.run(script, script.argv(p)).then((reply) => script.reply(reply));
    });
  }

  /**
   * Runs a command that is no script (WAIT, CONFIG GET) in its place in the line, like a
   * script: after the script calls gathered before it (js/redis/gather.js). A command that
   * blocks on the server for up to `blocks` ms (WAIT's own timeout) has that much longer
   * than commandTimeout to answer, so that its limit measures Redis not answering, not the
   * wait it was asked for (the calls behind it, which wait behind it on the connection, may
   * then be told of their limit as late as its own).
   * @template R
   * @param {(client: Client) => Promise<R>} send
   * @param {number} [blocks]
   * @returns {Promise<R>}
   */
  command(send, blocks = 0) {
    return this.#call(() => {
      this.#hub?.gather?.flush(); // the scripts gathered go first (WAIT must follow the offer it waits for)
      return send(/** @type {Client} */ (this.#client));
    }, blocks);
  }

  /**
   * Runs a command that changes nothing in its place in the line, its reply shared with the
   * queues on the same client that ask the same (`key`) in the same turn.
   * @template R
   * @param {string} key
   * @param {(client: Client) => Promise<R>} send
   * @returns {Promise<R>}
   */
  ask(key, send) {
    return this.#call(() => {
      const client = /** @type {Client} */ (this.#client);
      return this.#hub ? this.#hub.ask(key, send) : send(client);
    });
  }

  /**
   * Subscribes to `channel` (through the client's hub: one subscriber for every queue on the
   * client). Resolves once Redis confirmed it, within commandTimeout.
   * @param {string} channel
   * @param {import("./hub.js").Listener} listener
   */
  subscribe(channel, listener) {
    return this.#call(async () => {
      const hub = /** @type {import("./hub.js").Hub} */ (this.#hub);
      this.#subscriptions.set(listener, channel);
      try {
        await hub.subscribe(channel, listener);
      } catch (e) {
        throw explain(e, this.#where);
      }
    });
  }

  /**
   * Tells `onerror` about `error`, unless it said the same since the last call that succeeded.
   * @param {unknown} error
   */
  report(error) {
    const root = /** @type {any} */ (error)?.cause ?? error;
    const said = String(root?.message ?? root);
    if (said === this.#reported) return;
    this.#reported = said;
    this.#onerror(redacted(error));
  }

  /** Rejects later calls; resolves once the calls on their way have settled and what the queue opened is closed. */
  close() {
    if (!this.#closed) for (const b of this.#batchers.values()) b.flushNow(); // what was gathered goes first
    this.#closed = true;
    this.#closing ??= (async () => {
      await this.#line.drain();
      for (const [listener, channel] of this.#subscriptions) this.#hub?.unsubscribe(channel, listener);
      this.#hub?.leave(this.#member);
      this.#release?.();
    })();
    return this.#closing;
  }

  // --- the line (js/redis/line.js) ---------------------------------------------------

  /**
   * A call in its place in the line: sent when every call before it has been, once the client is ready.
   * @param {() => Promise<any>} send
   * @param {number} [blocks] ms it may block on the server beyond commandTimeout (WAIT)
   */
  #call(send, blocks = 0) {
    if (this.#closed) return Promise.reject(new ClosedError("RedisDelayQueue"));
    if (this.#fatal) return Promise.reject(redacted(this.#fatal));
    const called = this.#line.push(send, blocks);
    if (!this.#client) this.#open();
    else this.#send();
    return called;
  }

  /** Sends the waiting calls, in order, if the client is ready (and the probe passed). */
  #send() {
    const client = this.#client;
    if (this.#fatal) return;
    if (client?.status !== "ready") {
      if (client?.status === "wait") client.connect().catch(() => {}); // a given client with lazyConnect
      return;
    }
    if (!this.#probe.passed) return this.#probe.run();
    if (this.#scripts.reloading) return;
    this.#line.send();
  }

  /**
   * Every call not sent yet rejects with `error`, as will later ones until the next connection.
   * @param {Error} error
   */
  #fail(error) {
    this.#fatal = error;
    this.#line.rejectUnsent(error);
  }

  // --- the client -----------------------------------------------------------------------

  /** Opens the client of a URL or options (once; the calls wait in line meanwhile). */
  #open() {
    if (this.#opening) return;
    const { client, release } = acquireClient(this.#redis, this.#commandTimeout);
    this.#release = release;
    this.#opening = client.then(
      (client) => {
        if (this.#closed && this.#line.empty) return; // close() let it go
        this.#attach(client);
        this.#send();
      },
      (e) => this.#fail(lasting(e)),
    );
  }

  /** @param {Client} client */
  #attach(client) {
    this.#client = client;
    // A shared client may be ready already: its next ready is a reconnection.
    if (client.status === "ready") this.#readies = 1;
    this.#hub = hubOf(client, this.#owned);
    this.#hub.join(this.#member);
  }

  /**
   * A client of its own for a blocking read (js/redis/observer.js): a duplicate of this
   * connection's, once that is ready (a place in the line, so within commandTimeout); its
   * caller closes it.
   * @returns {Promise<any>}
   */
  async duplicate() {
    await this.#call(async () => undefined);
    const c = /** @type {Client} */ (this.#client).duplicate();
    c.on("error", (/** @type {unknown} */ e) => this.report(e));
    return c;
  }
}
