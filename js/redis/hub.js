// The hub of one ioredis client (js/redis/client.js): what all the queues of a process on that
// client share, ONE per client:
//
// - one listener per client event (ready, connect, end, error), whatever the number of
//   queues, so that ten thousand queues on one client add no listeners and print no
//   MaxListenersExceededWarning;
// - one subscriber connection (a duplicate() of the client, opened on first use) with one
//   subscription per queue channel, messages dispatched by channel: one connection for pub/sub
//   per client, not one per queue;
// - what the queues know of the one server behind the client: its clock (js/engine/clock.js),
//   fed by the replies of every queue on the client, so a queue's first call is stamped with
//   what the others learned; and whether the script library was sent since the client last
//   connected, so it is sent once per connection, not once per queue (a Cluster client talks
//   to several servers: there each queue keeps its own). While the clock's bounds are wider
//   than a few ms (replies that waited behind a burst), the hub reads the server's TIME
//   itself, one at a time, first 10 ms after a wide reply, backing off to 100 ms while they stay
//   wide: an idle process sends nothing, a busy one at most one TIME per 10 ms;
// - on a plain Redis (not a Cluster), the script calls its queues send in one turn, gathered
//   into one run (js/redis/gather.js), the channels subscribed in one turn in one SUBSCRIBE,
//   and a command that changes nothing (CONFIG GET) asked in one turn asked once.

import { setImmediate } from "node:timers";
import { Alarm } from "../engine/alarms.js";
import { localNow, moment, ServerClock, TIGHT_MS } from "../engine/clock.js";
import { Gather } from "./gather.js";

/** @typedef {import("./client.js").Client} Client */

/**
 * What a queue's connection hears from its client's hub.
 * @typedef {object} Member
 * @property {() => void} ready the client is ready (first time, or after a reconnection)
 * @property {() => void} connect the client's socket connected: a handshake begins
 * @property {() => void} end the client will not connect again (it was closed)
 * @property {(error: unknown) => void} error an error event of a client the queues opened, or of the subscriber
 */

/**
 * A queue listening to its channel.
 * @typedef {object} Listener
 * @property {(message: string) => void} onMessage
 * @property {() => void} onReady the subscriber reconnected: messages may have been missed
 */

/** @type {WeakMap<Client, Hub>} */
const hubs = new WeakMap();

/**
 * The hub of `client`, made on first use.
 * @param {Client} client
 * @param {boolean} owned whether the queues opened it (then its error events are theirs to report)
 */
export function hubOf(client, owned) {
  let hub = hubs.get(client);
  if (!hub) {
    hub = new Hub(client, owned);
    hubs.set(client, hub);
  }
  return hub;
}

/**
 * What the queues on one connection know of its server.
 * @typedef {{ clock: ServerClock, loaded: boolean }} Server
 */

/**
 * @param {() => void} [onSample] what the clock calls after each reply it learned from
 * @returns {Server}
 */
export function newServer(onSample) {
  return { clock: new ServerClock(onSample), loaded: false };
}

/** The first and the longest wait (ms) before the hub reads TIME to tighten its clock. */
const TIGHTEN_FIRST = 10;
const TIGHTEN_MAX = 100;

export class Hub {
  /** The server behind the client, shared by its queues (null for a Cluster: each queue keeps its own). */
  /** @type {Server | null} */
  server;
  /** The script calls of its queues gathered per turn (js/redis/gather.js); null for a Cluster. */
  /** @type {Gather | null} */
  gather;
  /** @type {Client} */
  #client;
  /** Reading TIME to tighten the clock: its timer (never holding the process open), the wait before the next, one at a time. */
  #tightenTimer = new Alarm(false, () => this.#readTime());
  #tightenWait = TIGHTEN_FIRST;
  #timing = false;
  /** @type {Set<Member>} */
  #members = new Set();
  /** @type {Record<string, (...args: any[]) => void>} */
  #listeners;
  /** @type {Client | null} */
  #subscriber = null;
  /** channel → the listeners of the queues on it, and the subscription's promise */
  /** @type {Map<string, { listeners: Set<Listener>, subscribed: Promise<unknown> }>} */
  #channels = new Map();

  /**
   * @param {Client} client
   * @param {boolean} owned
   */
  constructor(client, owned) {
    this.#client = client;
    // A Cluster's replies come from several servers, each with its own clock.
    const server = /** @type {any} */ (client).isCluster === true ? null : newServer(() => this.#tighten());
    this.server = server;
    this.gather = server ? new Gather(client) : null;
    const each = (/** @type {keyof Member} */ event) => (/** @type {unknown} */ arg) => {
      for (const m of this.#members) m[event](arg);
    };
    const ready = each("ready");
    this.#listeners = {
      ready: () => {
        if (server) server.loaded = false; // a new connection: a restarted server has no scripts
        ready(undefined);
      },
      connect: each("connect"),
      end: each("end"),
    };
    if (owned) this.#listeners.error = each("error");
    for (const [event, fn] of Object.entries(this.#listeners)) client.on(event, fn);
  }

  /** @type {Map<string, Promise<unknown>>} commands asked in this turn, by what they ask */
  #asked = new Map();

  /**
   * The reply of a command that changes nothing (CONFIG GET), asked once for every queue on
   * the client that asks it in the same turn.
   * @template R
   * @param {string} key what it asks
   * @param {(client: Client) => Promise<R>} send
   * @returns {Promise<R>}
   */
  ask(key, send) {
    let p = this.#asked.get(key);
    if (!p) {
      if (this.#asked.size === 0) setImmediate(() => this.#asked.clear());
      p = send(this.#client);
      this.#asked.set(key, p);
    }
    return /** @type {Promise<R>} */ (p);
  }

  /** @param {Member} member */
  join(member) {
    this.#members.add(member);
  }

  /** @param {Member} member */
  leave(member) {
    this.#members.delete(member);
    if (this.#members.size > 0) return;
    for (const [event, fn] of Object.entries(this.#listeners)) this.#client.off(event, fn);
    this.#tightenTimer.disarm();
    hubs.delete(this.#client);
  }

  /** A reply fed the clock: if its bounds are still wide, read TIME soon (once armed, nothing more to do). */
  #tighten() {
    const clock = this.server?.clock;
    if (!clock || this.#timing || this.#tightenTimer.armed || this.#members.size === 0) return;
    if (clock.width() <= TIGHT_MS) {
      this.#tightenWait = TIGHTEN_FIRST;
      return;
    }
    this.#tightenTimer.set(localNow() + this.#tightenWait);
  }

  /** One TIME on its own: the tightest bounds a round trip gives when nothing waits before it. */
  #readTime() {
    const clock = this.server?.clock;
    if (!clock || this.#members.size === 0 || this.#client.status !== "ready") return;
    this.#timing = true;
    this.#tightenWait = Math.min(this.#tightenWait * 2, TIGHTEN_MAX);
    const sent = moment();
    this.#client.time().then(
      ([s, us]) => {
        this.#timing = false;
        clock.sample(sent, Number(s) * 1000 + Number(us) / 1000, localNow());
      },
      // Refused (an ACL without TIME) or no connection: the scripts' replies still feed the clock.
      () => void (this.#timing = false),
    );
  }

  /**
   * Subscribes the hub's subscriber to `channel` for `listener` (one subscription per channel,
   * whatever the number of queues on it); resolves once Redis confirmed it.
   * @param {string} channel
   * @param {Listener} listener
   */
  subscribe(channel, listener) {
    let c = this.#channels.get(channel);
    if (!c) {
      const subscribed = this.#subscribeInTurn(channel);
      const entry = { listeners: new Set(), subscribed };
      c = entry;
      this.#channels.set(channel, entry);
      // A subscription Redis refused is forgotten: the next subscribe() tries again.
      subscribed.catch(() => {
        if (this.#channels.get(channel) === entry) this.#drop(channel);
      });
    }
    c.listeners.add(listener);
    return c.subscribed;
  }

  /** @type {{ channels: string[], done: Promise<unknown> } | null} the subscriptions asked in this turn */
  #subscribing = null;

  /**
   * Subscribes to `channel` with the other channels asked in this turn: one SUBSCRIBE for all.
   * @param {string} channel
   */
  #subscribeInTurn(channel) {
    if (!this.#subscribing) {
      /** @type {string[]} */
      const channels = [];
      const done = new Promise((resolve) => setImmediate(resolve)).then(() => {
        if (this.#subscribing?.channels === channels) this.#subscribing = null;
        return this.#subscriberOf().subscribe(...channels);
      });
      this.#subscribing = { channels, done };
    }
    this.#subscribing.channels.push(channel);
    return this.#subscribing.done;
  }

  /**
   * @param {string} channel
   * @param {Listener} listener
   */
  unsubscribe(channel, listener) {
    const c = this.#channels.get(channel);
    if (!c?.listeners.delete(listener) || c.listeners.size > 0) return;
    this.#drop(channel);
  }

  /** @param {string} channel no queue listens to it any more */
  #drop(channel) {
    this.#channels.delete(channel);
    const sub = this.#subscriber;
    if (!sub) return;
    if (this.#channels.size === 0) {
      this.#subscriber = null;
      sub.disconnect();
    } else sub.unsubscribe(channel).catch(() => {});
  }

  #subscriberOf() {
    if (this.#subscriber) return this.#subscriber;
    const sub = this.#client.duplicate();
    // The subscriber is the queues' own connection: its errors are theirs to report (each
    // queue's connection drops repeats).
    sub.on("error", (/** @type {unknown} */ e) => {
      for (const m of this.#members) m.error(e);
    });
    sub.on("message", (/** @type {string} */ channel, /** @type {string} */ message) => {
      const c = this.#channels.get(channel);
      if (c) for (const l of c.listeners) l.onMessage(message);
    });
    // Its first ready comes before its first subscription: only a reconnection may have missed messages.
    let readies = 0;
    sub.on("ready", () => {
      if (readies++ === 0) return;
      for (const c of this.#channels.values()) for (const l of c.listeners) l.onReady();
    });
    this.#subscriber = sub;
    return sub;
  }
}
