// The connection of one RedisDelayQueue: its ioredis client (js/redis/client.js), the line of
// its calls, and running the scripts (js/redis/scripts.js). Every script reply that starts with
// the server's time is a sample for the server clock (js/engine/clock.js).
//
// Ground rules:
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
// - Cluster slot migrations are retried, in order. While the slot of the queue's keys moves
//   between the masters of a Redis Cluster, a script can be refused with TRYAGAIN (its keys
//   are split between the two nodes), ASK or MOVED (ioredis' Cluster follows these itself, a
//   bounded number of times, then hands the refusal on). A refused call did not run (Redis
//   runs a script all or nothing, and refuses it before it starts), so it is sent again, with
//   a back-off from RETRY_FIRST_MS doubling to RETRY_MAX_MS, until it is answered or its
//   commandTimeout is up. From the first refusal until every refused call has been answered,
//   no call is sent anew: the calls made meanwhile wait in line behind the refused ones; the
//   refused ones go again in call order, together, once no other call is on its way. Calls
//   already sent when the first refusal comes back are in ioredis' hands until they are
//   answered or refused in turn: one that ioredis still retries can run before a call made
//   earlier that it handed back (its retries are bounded per call). With a client that is no
//   Cluster, such a refusal means the server is a cluster node: the call rejects saying so.
// - Bounded, with flow control. At most WINDOW calls are on their way at once; the others wait
//   in line. A call still waiting for a connection `commandTimeout` ms after it was made
//   rejects, never sent, with the last connection error as its cause; a call that waited for
//   the window gets its `commandTimeout` from when it is sent, so the limit measures Redis not
//   answering, not this connection's own line; a call sent and not answered rejects saying it
//   may or may not have been applied, and the calls still waiting for the window behind it
//   reject at once, never sent; a call still refused because its slot was migrating rejects
//   saying so. WAIT (waitForReplicas) has its own timeout on top. One alarm
//   (js/engine/alarms.js, on the process's one host timer, not holding the process open) is
//   armed for the oldest call's limit while calls are on their way, none otherwise; one more
//   while refused calls wait to be sent again.
// - Permissions checked. Before its first call, each connection runs the probe script, which
//   finds what the Redis user may not do (an ACL without the queue's channel, keys or
//   commands) without changing anything; the calls waiting then reject with an error naming
//   the rules to add, and the next call probes again (so a fixed ACL is seen).
// - Errors said once. Connection errors go to `onerror` once per outage (repeats of the same
//   error are dropped until a call succeeds again); Redis errors that mean something for the
//   queue (a key of another type, a missing permission) are explained (js/redis/errors.js).
// - Closing waits for the calls on their way (each bounded), then lets go of the client: one
//   opened from settings is shared by the queues of the process with the same settings and
//   disconnected by the last of them to close (js/redis/client.js); a given one stays open.
//   Later calls reject with ClosedError.

import { ClosedError } from "../engine/errors.js";
import { redact } from "../engine/redact.js";
import { Alarm } from "../engine/alarms.js";
import { Batcher } from "../engine/batch.js";
import { ScriptRunner } from "./eval.js";
import { acquireClient, isClient } from "./client.js";
import { hubOf, newServer } from "./hub.js";
import { localNow } from "../engine/clock.js";
import {
  connectionLost,
  explain,
  isClusterRefusal,
  isLasting,
  isMigrating,
  lasting,
  migrating,
  noConnection,
  notACluster,
  noReply,
  notSent,
  redacted,
  refusedByAcl,
  selectFailed,
  shardsRefused,
} from "./errors.js";
import { SCRIPTS } from "./scripts.js";

/** @typedef {import("./scripts.js").Script} Script */
/** @typedef {import("./client.js").Client} Client */

/**
 * A call in the line.
 * @typedef {object} Call
 * @property {() => Promise<unknown>} send
 * @property {(value: any) => void} resolve
 * @property {(error: unknown) => void} reject
 * @property {number} deadline local ms by which it settles
 * @property {number} limit ms it has to settle once sent (commandTimeout, and what WAIT blocks)
 * @property {number} seq its place among the calls of this connection
 * @property {boolean} sent
 * @property {boolean} inflight sent and not answered yet
 * @property {unknown} refused the last refusal of a slot migration (TRYAGAIN, ASK, MOVED), if any
 * @property {boolean} done
 */

/** The first wait before a call refused by a slot migration is sent again, and the longest. */
const RETRY_FIRST_MS = 20;
const RETRY_MAX_MS = 320;

/**
 * Calls on their way at most (flow control): a batch of many scripts (offerMany of 10^5 items
 * is 200) goes a few at a time, each with its own time limit from when it is sent, so that a
 * time limit measures Redis not answering, not the calls in line before it. Eight keep Redis
 * busy: a script takes far longer to run than a reply to arrive.
 */
const WINDOW = 8;

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
  #channel;
  #where;
  /** The number of shards the probe checks the queue was created with, or 0 (js/redis/shards.js). */
  #shards;
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
  /** The calls on their way, in call order: those sent first, then those waiting to be sent. */
  /** @type {Call[]} */
  #line = [];
  #head = 0; // first call of #line that may still be live
  #unsent = 0; // first call of #line not sent yet
  #timer = new Alarm(false, () => this.#expire());
  #seq = 0;
  /** The calls refused by a slot migration and not settled yet: while there are any, no call is sent anew. */
  /** @type {Set<Call>} */
  #held = new Set();
  /** Those of them waiting to be sent again (when #retry fires), and the wait before the next round. */
  /** @type {Call[]} */
  #again = [];
  #backoff = RETRY_FIRST_MS;
  /** Calls sent and not answered: refused calls go again only once there are none (so in one batch, in order). */
  #inflight = 0;
  /** Whether calls wait to be sent only because WINDOW calls are on their way. */
  #windowed = false;
  #retry = new Alarm(false, () => this.#sendAgain());
  /** Whether the probe found nothing refused on this connection; whether it runs now. */
  #probed = false;
  #probing = false;
  /** The last refusal of the probe by a slot migration, until it runs. */
  /** @type {unknown} */
  #probeRefused = null;
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
      this.#probed = false; // nor, maybe, the same ACL
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
    this.#shards = shards;
    this.#redis = redis;
    this.#keys = keys;
    this.#channel = channel;
    this.#where = { keys, prefix, url: typeof redis === "string" ? redact(redis) : undefined };
    this.#onerror = onerror;
    this.#commandTimeout = commandTimeout;
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
      await Promise.all(
        this.#line.slice(this.#head).map((c) => c.done || new Promise((r) => this.#settled(c, () => r(undefined)))),
      );
      this.#timer.disarm();
      this.#retry.disarm();
      for (const [listener, channel] of this.#subscriptions) this.#hub?.unsubscribe(channel, listener);
      this.#hub?.leave(this.#member);
      this.#release?.();
    })();
    return this.#closing;
  }

  // --- the line -------------------------------------------------------------------------

  /**
   * A call in its place in the line: sent when every call before it has been, once the client is ready.
   * @param {() => Promise<any>} send
   * @param {number} [blocks] ms it may block on the server beyond commandTimeout (WAIT)
   */
  #call(send, blocks = 0) {
    if (this.#closed) return Promise.reject(new ClosedError("RedisDelayQueue"));
    if (this.#fatal) return Promise.reject(redacted(this.#fatal));
    return new Promise((resolve, reject) => {
      /** @type {Call} */
      const call = {
        send,
        resolve,
        reject: (e) => reject(redacted(e)),
        deadline: localNow() + this.#commandTimeout + blocks,
        limit: this.#commandTimeout + blocks,
        seq: this.#seq++,
        sent: false,
        inflight: false,
        refused: null,
        done: false,
      };
      this.#line.push(call);
      if (this.#line.length - this.#head === 1) this.#timer.set(call.deadline);
      if (!this.#client) this.#open();
      else this.#send();
    });
  }

  /** Sends the waiting calls, in order, if the client is ready. */
  #send() {
    const client = this.#client;
    if (this.#fatal) return;
    if (client?.status !== "ready") {
      if (client?.status === "wait") client.connect().catch(() => {}); // a given client with lazyConnect
      return;
    }
    if (!this.#probed) return this.#probe();
    if (this.#scripts.reloading || this.#held.size > 0) return;
    while (this.#unsent < this.#line.length && this.#inflight < WINDOW) {
      const call = this.#line[this.#unsent++];
      if (call.done) continue;
      // A call that waited for the window (not for a connection) has its time limit from now:
      // the limit measures Redis not answering, not this connection's own line.
      if (this.#windowed) call.deadline = Math.max(call.deadline, localNow() + call.limit);
      this.#dispatch(call);
    }
    this.#windowed = this.#unsent < this.#line.length;
  }

  /**
   * Sends `call` (for the first time, or again after a slot migration refused it).
   * @param {Call} call
   */
  #dispatch(call) {
    call.sent = true;
    call.inflight = true;
    this.#inflight++;
    let sending;
    try {
      sending = call.send();
    } catch (e) {
      sending = Promise.reject(e);
    }
    sending.then(
      (value) => {
        this.#answered(call);
        this.#reported = null;
        this.#finish(call, () => call.resolve(value));
      },
      (e) => {
        this.#answered(call);
        if (call.done) return;
        if (!this.#client?.isCluster && isClusterRefusal(e))
          return this.#finish(call, () => call.reject(notACluster(e)));
        if (!isMigrating(e)) return this.#finish(call, () => call.reject(connectionLost(e, this.#where)));
        this.#refuse(call, e);
      },
    );
  }

  /**
   * `call` has its reply; once no call is on its way, the refused ones may go again.
   * @param {Call} call
   */
  #answered(call) {
    call.inflight = false;
    if (--this.#inflight === 0 && this.#again.length > 0 && !this.#retry.armed)
      this.#retry.set(localNow() + this.#backoff);
    if (this.#windowed) queueMicrotask(() => this.#send());
  }

  /**
   * A slot migration refused `call`. Redis refuses a script that names a key of a migrating
   * slot before running any of it, and runs a script all or nothing, so the refused call did
   * not take effect and sending it again is safe; it goes again after the back-off, in call
   * order with the other refused calls, and no call is sent anew until they have been answered.
   * @param {Call} call
   * @param {unknown} e
   */
  #refuse(call, e) {
    call.refused = e;
    this.#held.add(call);
    this.#again.push(call);
    if (this.#inflight === 0 && !this.#retry.armed) this.#retry.set(localNow() + this.#backoff);
  }

  /** The retry timer: the refused calls go again, in call order; the next round waits longer. */
  #sendAgain() {
    if (this.#probeRefused && !this.#probed) {
      this.#backoff = Math.min(this.#backoff * 2, RETRY_MAX_MS);
      this.#send(); // probes again
    }
    if (this.#again.length === 0 || this.#inflight > 0) return; // re-armed when the last call on its way is answered
    if (this.#client?.status !== "ready") {
      this.#retry.set(localNow() + this.#backoff); // reconnecting: the next round then
      return;
    }
    const calls = this.#again.filter((c) => !c.done).sort((a, b) => a.seq - b.seq);
    this.#again = [];
    this.#backoff = Math.min(this.#backoff * 2, RETRY_MAX_MS);
    for (const call of calls) this.#dispatch(call);
  }

  /** Runs the probe script, then sends the line; if the Redis user lacks a permission, the calls waiting reject. */
  #probe() {
    if (this.#probing || this.#unsent === this.#line.length) return;
    this.#probing = true;
    const probe = SCRIPTS.probe;
    this.#scripts
      .run(probe, probe.argv({ channel: this.#channel, shards: this.#shards }))
      .then((reply) => {
        const found = probe.reply(reply);
        const refused = shardsRefused(found, this.#where, this.#shards) ?? refusedByAcl(found, this.#where);
        if (refused) throw refused;
        this.#probed = true;
        this.#probeRefused = null;
        if (this.#held.size === 0) this.#backoff = RETRY_FIRST_MS;
      })
      .catch((e) => {
        // A permission missing, or a cluster node reached through a client that is no Cluster:
        // the calls waiting fail now (the next call probes again).
        // A slot migration refused it (it changes nothing, so it may go again): it goes again
        // after the back-off. Anything else (the connection dropped): they wait for the next
        // connection.
        if (isLasting(e)) this.#reject(this.#unsent, /** @type {Error} */ (e));
        else if (!this.#client?.isCluster && isClusterRefusal(e)) this.#reject(this.#unsent, notACluster(e));
        else if (isMigrating(e) && this.#client?.isCluster) {
          this.#probeRefused = e;
          if (!this.#retry.armed) this.#retry.set(localNow() + this.#backoff);
        }
      })
      .finally(() => {
        this.#probing = false;
        if (this.#probed) this.#send();
      });
  }

  /**
   * @param {Call} call
   * @param {() => void} settle
   */
  #finish(call, settle) {
    if (this.#settle(call, settle)) this.#advance();
  }

  /**
   * Settles `call` unless it has been (it expired: its caller was told already).
   * @param {Call} call
   * @param {() => void} settle
   */
  #settle(call, settle) {
    if (call.done) return false;
    call.done = true;
    settle();
    if (this.#held.delete(call) && this.#held.size === 0) {
      // The refused calls have all been answered (or timed out): the line moves on.
      this.#backoff = RETRY_FIRST_MS;
      this.#again = [];
      this.#retry.disarm();
      queueMicrotask(() => this.#send());
    }
    return true;
  }

  /** Drops the settled calls at the head of the line, and arms the timer for the oldest live one. */
  #advance() {
    const line = this.#line;
    while (this.#head < line.length && line[this.#head].done) this.#head++;
    if (this.#head === line.length) {
      this.#line = [];
      this.#head = 0;
      this.#unsent = 0;
      this.#timer.disarm();
      return;
    }
    if (this.#head > 1024 && this.#head * 2 > line.length) {
      this.#line = line.slice(this.#head);
      this.#unsent -= this.#head;
      this.#head = 0;
    }
    this.#timer.set(this.#line[this.#head].deadline);
  }

  /** The timer: calls past their limit reject, unsent ones never to be sent. */
  #expire() {
    const now = localNow();
    let unanswered = false;
    for (let i = this.#head; i < this.#line.length; i++) {
      const call = this.#line[i];
      if (call.deadline > now) break;
      if (call.done) continue;
      // Waiting for the window: its limit starts when it is sent (or when those before it fail).
      if (!call.sent && this.#windowed && this.#client?.status === "ready") continue;
      const ms = this.#commandTimeout;
      if (call.sent && !call.refused) unanswered = true;
      const refused = call.refused ?? (call.sent ? null : this.#probeRefused);
      const error = refused
        ? migrating(ms, this.#where, refused, call.inflight)
        : call.sent
          ? noReply(ms, this.#where)
          : noConnection(ms, this.#where, this.#lastError);
      this.#settle(call, () => call.reject(error));
    }
    // Redis did not answer a call on its way: the calls waiting for the window behind it are
    // not sent (so they did not take effect) and reject now, not one window after another.
    if (unanswered && this.#windowed) this.#reject(this.#unsent, notSent(this.#commandTimeout, this.#where));
    else this.#advance();
  }

  /**
   * Every call not sent yet rejects with `error`, as will later ones until the next connection.
   * @param {Error} error
   */
  #fail(error) {
    this.#fatal = error;
    this.#reject(this.#unsent, error);
  }

  /**
   * The calls from `from` on (not sent yet) reject with `error`.
   * @param {number} from
   * @param {Error} error
   */
  #reject(from, error) {
    for (let i = from; i < this.#line.length; i++) {
      const call = this.#line[i];
      this.#settle(call, () => call.reject(error));
    }
    this.#advance();
  }

  /**
   * Resolves `resolve` once `call` has settled.
   * @param {Call} call
   * @param {() => void} resolve
   */
  #settled(call, resolve) {
    const { resolve: res, reject: rej } = call;
    call.resolve = (v) => {
      res(v);
      resolve();
    };
    call.reject = (e) => {
      rej(e);
      resolve();
    };
  }

  // --- the client -----------------------------------------------------------------------

  /** Opens the client of a URL or options (once; the calls wait in line meanwhile). */
  #open() {
    if (this.#opening) return;
    const { client, release } = acquireClient(this.#redis, this.#commandTimeout);
    this.#release = release;
    this.#opening = client.then(
      (client) => {
        if (this.#closed && this.#line.length === this.#head) return; // close() let it go
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
