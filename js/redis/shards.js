// One queue over K hash tags (`shards: K`), so over the primaries of a Redis Cluster: K
// ordinary single-shard queues (each with its own keys, channel, scripts and consumer) behind
// one face, whose consumers share one pool of waiting takes.
//
// - Tags. Shard i's tag is the queue's name plus the shortest suffix ("", then "~0", "~1",
//   ...) whose hash slot (CRC16 mod 16384, as Redis Cluster computes it) falls in
//   [i·16384/K, (i+1)·16384/K). A cluster that splits its slots into contiguous ranges, one per
//   primary, so puts the shards on different primaries when K is at most the primaries. Computed
//   here, from the name and K alone. One shard's tag is the name itself (the name's own slot
//   is in one of the ranges, and "" is tried first): it keeps K (its meta's `shards` field,
//   written by the first probe), and one shard's keys are those of a single-shard queue.
// - Items. An id goes to shard CRC16(key) mod K, where the key is the id, or for an
//   occurrence-shaped id (`<schedule>@<due>`) the schedule's id, so a schedule and its
//   occurrences share a shard. Offers without an id get a random id first, so cancel,
//   reschedule and get by id always find the shard. offerMany sends one script run per shard
//   (per 500 items): atomic per shard, not across them.
// - K checked. Every call of the face waits for the first probe of the keeping shard
//   (js/redis/lua/probe.lua): a queue created with another K refuses every call with an error
//   naming `shards`, and nothing is sent to the other shards. A single-shard queue's probe
//   refuses a queue created with K > 1 the same way.
// - Consuming. The consumers of the K shards share a Pool: one line of waiting takes (take(),
//   and the slots of process() workers: `concurrency` is the slots of the whole queue), one
//   lateness histogram. Each consumer arms for its own head; a take script takes only for the
//   takes no other shard's script has reserved, and when takes wait and several heads are
//   due, the free takes go to the one whose known head is earliest (what its script leaves,
//   to the next when it answers). So within a
//   shard everything holds as for one queue (deadline order, FIFO ties, never early, leases);
//   across shards, an item is handed out before an earlier one of another shard only while
//   both are due.
// - Inspection. Pages merge the K shards' pages in order (deadline, lease expiry, time of
//   death; ties by shard), with a cursor that holds each shard's; a page costs K scripts, and
//   one more per shard whose page was only partly used (its cursor there).
//
// Costs: K channels and K subscriptions; the first call of the face waits one probe; a take
// loop over K consumers arms up to K timers.

import { checkId, checkMs, checkSignal, checkTimeout, describe, options } from "../arguments.js";
import { ClosedError, takeUntilClosed } from "../errors.js";
import { EMIT, Emitter } from "../events.js";
import { Lateness } from "../lateness.js";
import { checkScheduleId } from "../schedule/spec.js";
import { moment } from "./clock.js";
import { checkLimit, processOptions } from "./options.js";
import { Takers } from "./takers.js";
import { Worker } from "./worker.js";

/**
 * What each shard queue hands its face beyond the public calls (js/redis.js fills it): its
 * offers' checks and sending, its consumer, its onerror.
 * @type {WeakMap<object, any>}
 */
export const INNER = new WeakMap();

/** Redis Cluster's hash slots. */
const SLOTS = 16384;

/** CRC16-CCITT (XMODEM), Redis Cluster's key hash. */
const CRC_TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let b = 0; b < 8; b++) c = c & 0x8000 ? (c << 1) ^ 0x1021 : c << 1;
    t[i] = c & 0xffff;
  }
  return t;
})();

const encoder = new TextEncoder();

/**
 * CRC16 of a string's UTF-8 bytes (what Redis hashes).
 * @param {string} s
 */
export function crc16(s) {
  let crc = 0;
  for (const byte of encoder.encode(s)) crc = ((crc << 8) ^ CRC_TABLE[((crc >> 8) ^ byte) & 0xff]) & 0xffff;
  return crc;
}

/**
 * The hash slot of a hash tag.
 * @param {string} tag
 */
export const slotOf = (tag) => crc16(tag) % SLOTS;

/**
 * The tags of the K shards of the queue `name`, shard i's slot in [i·16384/K, (i+1)·16384/K).
 * @param {string} name
 * @param {number} k
 * @returns {string[]}
 */
export function shardTags(name, k) {
  const tags = [];
  for (let i = 0; i < k; i++) {
    const lo = Math.floor((i * SLOTS) / k);
    const hi = Math.floor(((i + 1) * SLOTS) / k);
    for (let n = -1; ; n++) {
      const tag = n < 0 ? name : `${name}~${n}`;
      const slot = slotOf(tag);
      if (slot >= lo && slot < hi) {
        tags.push(tag);
        break;
      }
    }
  }
  return tags;
}

/** An occurrence's id: `<schedule>@<due>` (js/schedule/spec.js). */
const OCCURRENCE = /^([\s\S]+)@-?\d+$/;

/**
 * The shard of an id (or a schedule's id) among K.
 * @param {string} id
 * @param {number} k
 */
export function shardOf(id, k) {
  const m = OCCURRENCE.exec(id);
  return crc16(m ? m[1] : id) % k;
}

/**
 * The waiting takes of a sharded queue's K consumers (js/redis/consumer.js): one line, the part
 * of it that take scripts on their way have reserved or that is set aside for a consumer's
 * next script, one lateness histogram.
 *
 * Until every consumer has answered its first take script (or failed), none takes: the first
 * scripts only learn the heads, so that the first takes go to the earliest. Then, when takes
 * wait, the free ones are set aside for the due consumer whose known head is earliest; what
 * its script does not use is free again when it answers, for the next.
 */
export class Pool {
  takers = new Takers();
  lateness = new Lateness();
  /** @type {import("./consumer.js").Consumer[]} */
  consumers = [];
  /** Takes reserved by scripts on their way, or set aside (#aside) for a consumer's next script. */
  #reserved = 0;
  /** @type {Map<import("./consumer.js").Consumer, number>} */
  #aside = new Map();
  /** @type {Set<import("./consumer.js").Consumer>} the consumers that answered a take script or failed */
  #answered = new Set();

  /** Waiting takes neither reserved nor set aside (none until every consumer has answered once). */
  get free() {
    if (this.#answered.size < this.consumers.length) return 0;
    return Math.max(0, this.takers.size - this.#reserved);
  }

  /**
   * What `c` may take for: the free takes and those set aside for it.
   * @param {import("./consumer.js").Consumer} c
   */
  freeFor(c) {
    return this.free + (this.#aside.get(c) ?? 0);
  }

  /**
   * Reserves up to `n` takes for one take script of `c`: what was set aside for it, then free ones.
   * @param {number} n
   * @param {import("./consumer.js").Consumer} c
   */
  reserve(n, c) {
    this.#release(c);
    const k = Math.min(n, this.free);
    this.#reserved += k;
    return k;
  }

  /** @param {import("./consumer.js").Consumer} c */
  #release(c) {
    this.#reserved -= this.#aside.get(c) ?? 0;
    this.#aside.delete(c);
  }

  /**
   * A take script of `c` answered (its items handed out) or failed: what it reserved is free again.
   * @param {number} n
   * @param {import("./consumer.js").Consumer} c
   */
  unreserve(n, c) {
    this.#reserved -= n;
    if (!this.answered(c) && n > 0 && this.free > 0) this.demand();
  }

  /**
   * `c` answered a take script or failed; returns whether it was the first time.
   * @param {import("./consumer.js").Consumer} c
   */
  answered(c) {
    if (this.#answered.has(c)) return false;
    this.#answered.add(c);
    if (this.free > 0) this.demand(); // the last to answer: the takes may go now
    return true;
  }

  /** Whether a demand() is on its way (in a microtask): the takes of one turn share it. */
  #demanding = false;

  /** Takes wait (or may be taken for again): once per turn, #demand(). */
  demand() {
    if (this.#demanding) return;
    this.#demanding = true;
    queueMicrotask(() => {
      this.#demanding = false;
      this.#demand();
    });
  }

  /**
   * The free takes set aside for the consumer whose known head is earliest among those that
   * are due (the next one if it cannot take now); the others arm for their heads.
   */
  #demand() {
    const by = [...this.consumers].sort((a, b) => a.head - b.head);
    let given = null;
    for (const c of by) {
      const free = this.free;
      if (free === 0) break;
      if (!c.due) continue;
      this.#reserved += free;
      this.#aside.set(c, (this.#aside.get(c) ?? 0) + free);
      if (c.demand()) {
        given = c;
        break;
      }
      this.#release(c);
    }
    for (const c of by) if (c !== given) c.demand();
  }
}

/** The page kinds, the field each is ordered by and what each page's calls are named. */
const ORDER = /** @type {const} */ ({ pending: "deadline", inFlight: "leaseExpiry", deadLetters: "diedAt" });

/**
 * A RedisDelayQueue with `shards` > 1: the same methods, over K shard queues. `instanceof
 * RedisDelayQueue` holds (js/redis.js sets the prototype).
 */
export class ShardedDelayQueue extends Emitter {
  /** @type {import("./options.js").QueueOptions} */
  #options;
  /** @type {any[]} the shard queues (RedisDelayQueue), by index */
  #shards;
  /** The index of the shard that keeps K (its tag is the name). */
  #home;
  #pool = new Pool();
  /** @type {Promise<void> | null} the keeping shard's first probe */
  #ready = null;
  /** @type {Set<Worker>} */
  #workers = new Set();
  /** @type {Promise<void> | null} */
  #closing = null;
  /** type → the listener forwarding each shard's events of that type */
  #forwards = new Map();

  /**
   * @param {import("./options.js").QueueOptions} o checked, shards > 1
   * @param {(o: import("./options.js").QueueOptions, pool: Pool) => any} make a shard queue
   */
  constructor(o, make) {
    super((type, on) => this.#listening(type, on));
    this.#options = o;
    const tags = shardTags(o.name, o.shards);
    this.#home = tags.indexOf(o.name);
    this.#shards = tags.map((tag, i) => make({ ...o, name: tag, shards: i === this.#home ? o.shards : 0 }, this.#pool));
    this.#pool.consumers = this.#shards.map((s) => INNER.get(s).consumer);
  }

  /** @param {string} type @param {boolean} on */
  #listening(type, on) {
    if (on) {
      const forward = (/** @type {Event} */ e) => this[EMIT](type, /** @type {CustomEvent} */ (e).detail);
      this.#forwards.set(type, forward);
      for (const s of this.#shards) s.addEventListener(type, forward);
    } else {
      const forward = this.#forwards.get(type);
      this.#forwards.delete(type);
      for (const s of this.#shards) s.removeEventListener(type, forward);
    }
  }

  /** The keys of the shard that keeps K (its tag is the name), and every shard's in `shards`. */
  get keys() {
    return { ...this.#shards[this.#home].keys, shards: this.#shards.map((s) => s.keys) };
  }

  get name() {
    return this.#options.name;
  }

  /** The shard of an id. @param {string} id */
  #of(id) {
    return this.#shards[shardOf(id, this.#shards.length)];
  }

  #open() {
    if (this.#closing) throw new ClosedError("RedisDelayQueue");
  }

  /** Resolves once the keeping shard's probe found the queue's K (rejects when it was created with another). */
  #gate() {
    this.#open();
    if (!this.#ready) {
      const ready = this.#shards[this.#home].size().then(() => {});
      ready.catch(() => {
        if (this.#ready === ready) this.#ready = null; // the next call probes again
      });
      this.#ready = ready;
    }
    return this.#ready;
  }

  // --- producing ------------------------------------------------------------------------

  /** @param {unknown} value @param {number} delayMs @param {any} [opts] */
  async offer(value, delayMs, opts) {
    const item = INNER.get(this.#shards[0]).checkOffer(value, delayMs, opts, moment());
    await this.#gate();
    await INNER.get(this.#of(item.id)).send([item]);
    return item.id;
  }

  /** @param {unknown} value @param {number | Date} deadline @param {any} [opts] */
  async offerAt(value, deadline, opts) {
    const item = INNER.get(this.#shards[0]).checkOfferAt(value, deadline, opts, moment());
    await this.#gate();
    await INNER.get(this.#of(item.id)).send([item]);
    return item.id;
  }

  /** @param {any[]} items */
  async offerMany(items) {
    const checked = INNER.get(this.#shards[0]).checkMany(items, moment());
    await this.#gate();
    /** @type {Map<any, any[]>} */
    const groups = new Map();
    for (const item of checked) {
      const s = this.#of(item.id);
      const g = groups.get(s);
      if (g) g.push(item);
      else groups.set(s, [item]);
    }
    await Promise.all([...groups].map(([s, g]) => INNER.get(s).send(g)));
    return checked.map((/** @type {{ id: string }} */ it) => it.id);
  }

  /** @param {string} id */
  async cancel(id) {
    checkId(id, "id");
    await this.#gate();
    return this.#of(id).cancel(id);
  }

  /** @param {string} id @param {number} delayMs */
  async reschedule(id, delayMs) {
    checkId(id, "id");
    checkMs(delayMs, "delayMs");
    await this.#gate();
    return this.#of(id).reschedule(id, delayMs);
  }

  /** @param {string} id */
  async delayOf(id) {
    checkId(id, "id");
    await this.#gate();
    return this.#of(id).delayOf(id);
  }

  async size() {
    await this.#gate();
    const sizes = await Promise.all(this.#shards.map((s) => s.size()));
    return sizes.reduce((a, b) => a + b, 0);
  }

  /** Summed over the shards, with each shard's own in `shards`. */
  async stats() {
    await this.#gate();
    const all = await Promise.all(this.#shards.map((s) => s.stats()));
    const sum = (/** @type {string} */ k, /** @type {any[]} */ of = all) => of.reduce((a, s) => a + s[k], 0);
    const heads = all.map((s) => s.headDelay).filter((d) => d !== undefined);
    const every = all.map((s) => s.all);
    const max = (/** @type {string} */ k) => Math.max(...every.map((a) => a[k]));
    return {
      pending: sum("pending"),
      inFlight: sum("inFlight"),
      dead: sum("dead"),
      paused: all.some((s) => s.paused),
      headDelay: heads.length ? Math.min(...heads) : undefined,
      // This process: the takes and the lateness are the pool's (the same in every shard's).
      takers: all[0].takers,
      timersArmed: sum("timersArmed"),
      timerArms: sum("timerArms"),
      wakes: sum("wakes"),
      earlyWakes: sum("earlyWakes"),
      messages: sum("messages"),
      delivered: sum("delivered"),
      retried: sum("retried"),
      redelivered: sum("redelivered"),
      released: sum("released"),
      latenessP50: all[0].latenessP50,
      latenessP99: all[0].latenessP99,
      latenessMax: all[0].latenessMax,
      all: {
        delivered: sum("delivered", every),
        acked: sum("acked", every),
        nacked: sum("nacked", every),
        redelivered: sum("redelivered", every),
        dead: sum("dead", every),
        // Every process's lateness: the largest of the shards' figures.
        latenessP50: max("latenessP50"),
        latenessP99: max("latenessP99"),
        latenessMax: max("latenessMax"),
      },
      shards: all,
    };
  }

  // --- inspecting -----------------------------------------------------------------------

  /** @param {string} id */
  async get(id) {
    checkId(id, "id");
    await this.#gate();
    return this.#of(id).get(id);
  }

  /** @param {any} [opts] */
  pending(opts) {
    return this.#page("pending", opts);
  }

  /** @param {any} [opts] */
  inFlight(opts) {
    return this.#page("inFlight", opts);
  }

  /** @param {any} [opts] */
  deadLetters(opts) {
    return this.#page("deadLetters", opts);
  }

  /**
   * A page merged from the shards' pages, in order (ties by shard), with a cursor of the
   * shards' cursors: `s` + JSON of one entry per shard, null (from the start), a shard's cursor,
   * or false (that shard has no more).
   * @param {keyof typeof ORDER} kind
   * @param {unknown} opts
   */
  async #page(kind, opts) {
    const { limit = 100, after } = options(opts, "options", ["limit", "after"], `${kind}()`);
    checkLimit(limit, "options.limit");
    const k = this.#shards.length;
    /** @type {(string | null | false)[]} */
    let from = Array(k).fill(null);
    if (after !== undefined) {
      if (typeof after !== "string")
        throw new TypeError(`options.after must be a cursor (a string), got ${describe(after)}`);
      let parsed;
      try {
        parsed = after.startsWith("s") ? JSON.parse(after.slice(1)) : null;
      } catch {
        parsed = null;
      }
      const ok =
        Array.isArray(parsed) &&
        parsed.length === k &&
        parsed.every((c) => c === null || c === false || typeof c === "string");
      if (!ok)
        throw new RangeError(`options.after must be a cursor that ${kind}() returned as next, got ${describe(after)}`);
      from = parsed;
    }
    await this.#gate();
    const field = ORDER[kind];
    const pages = await Promise.all(
      this.#shards.map((s, i) => (from[i] === false ? null : s[kind]({ limit, after: from[i] ?? undefined }))),
    );
    /** @type {any[]} */
    const items = [];
    const used = Array(k).fill(0);
    while (items.length < limit) {
      let best = -1;
      for (let i = 0; i < k; i++) {
        const it = pages[i]?.items[used[i]];
        if (it && (best < 0 || it[field] < pages[best].items[used[best]][field])) best = i;
      }
      if (best < 0) break;
      items.push(pages[best].items[used[best]++]);
    }
    /** @type {(string | null | false)[]} */
    const next = await Promise.all(
      from.map(async (c, i) => {
        const page = pages[i];
        if (!page) return c;
        if (used[i] === page.items.length) return page.next ?? false;
        if (used[i] === 0) return c;
        // Only part of that shard's page was used: its cursor after the last item used.
        const part = await this.#shards[i][kind]({ limit: used[i], after: c ?? undefined });
        return part.next ?? false;
      }),
    );
    return { items, next: next.every((c) => c === false) ? undefined : `s${JSON.stringify(next)}` };
  }

  async pause() {
    await this.#gate();
    return (await Promise.all(this.#shards.map((s) => s.pause()))).some(Boolean);
  }

  async resume() {
    await this.#gate();
    return (await Promise.all(this.#shards.map((s) => s.resume()))).some(Boolean);
  }

  /** @param {string} id */
  async retryDead(id) {
    checkId(id, "id");
    await this.#gate();
    return this.#of(id).retryDead(id);
  }

  /** @param {string} id */
  async deleteDead(id) {
    checkId(id, "id");
    await this.#gate();
    return this.#of(id).deleteDead(id);
  }

  /** @param {any} [opts] */
  async purgeDead(opts) {
    const { olderThan = 0 } = options(opts, "options", ["olderThan"], "purgeDead()");
    checkTimeout(olderThan, "options.olderThan");
    await this.#gate();
    const removed = await Promise.all(this.#shards.map((s) => s.purgeDead(opts)));
    return removed.reduce((a, b) => a + b, 0);
  }

  async clear() {
    await this.#gate();
    await Promise.all(this.#shards.map((s) => s.clear()));
  }

  // --- schedules: each on the shard of its id ---------------------------------------------

  /** @param {string} id @param {any} rule @param {unknown} value @param {any} [opts] */
  async schedule(id, rule, value, opts) {
    checkScheduleId(id);
    await this.#gate();
    return this.#of(id).schedule(id, rule, value, opts);
  }

  /** @param {string} id */
  async unschedule(id) {
    checkScheduleId(id);
    await this.#gate();
    return this.#of(id).unschedule(id);
  }

  /** @param {string} id */
  async pauseSchedule(id) {
    checkScheduleId(id);
    await this.#gate();
    return this.#of(id).pauseSchedule(id);
  }

  /** @param {string} id */
  async resumeSchedule(id) {
    checkScheduleId(id);
    await this.#gate();
    return this.#of(id).resumeSchedule(id);
  }

  /** @param {string} id */
  async trigger(id) {
    checkScheduleId(id);
    await this.#gate();
    return this.#of(id).trigger(id);
  }

  /** @param {string} id @param {number} n */
  async nextRuns(id, n) {
    checkScheduleId(id);
    await this.#gate();
    return this.#of(id).nextRuns(id, n);
  }

  async schedules() {
    await this.#gate();
    const lists = await Promise.all(this.#shards.map((s) => s.schedules()));
    return lists.flat().sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  // --- consuming: one pool of takes over the shards ----------------------------------------

  /** @param {{ signal?: AbortSignal, timeout?: number }} [opts] */
  async take(opts) {
    const { signal, timeout } = options(opts, "options", ["signal", "timeout"], "take()");
    checkSignal(signal, "options.signal");
    checkTimeout(timeout, "options.timeout");
    await this.#gate();
    return this.#shards[this.#home].take(opts);
  }

  [Symbol.asyncIterator]() {
    return takeUntilClosed(() => this.take());
  }

  /**
   * `concurrency` slots for the whole queue, each taking from the pool (whichever shard has a
   * due item for it); each job's lease is extended on its own shard.
   * @param {(value: any, job: any) => unknown} handler
   * @param {{ concurrency?: number, retryDelayMs?: number | ((attempt: number, error: unknown) => number) }} [opts]
   */
  process(handler, opts) {
    const { concurrency, retry } = processOptions(handler, opts);
    this.#open();
    const leaseOf = (/** @type {{ id: string }} */ job) => INNER.get(this.#of(job.id)).consumer.leases;
    const worker = new Worker({
      take: (signal) => this.take({ signal }),
      leases: { hold: (job) => leaseOf(job).hold(job), drop: (job) => leaseOf(job).drop(job) },
      handler,
      concurrency,
      retry,
      maxAttempts: this.#options.maxAttempts,
      onerror: (e) => INNER.get(this.#shards[this.#home]).report(e),
      ondone: () => this.#workers.delete(worker),
    });
    this.#workers.add(worker);
    return worker;
  }

  close() {
    if (this.#closing) return this.#closing;
    this.#closing = (async () => {
      await Promise.all([...this.#workers].map((w) => w.close()));
      await Promise.all(this.#shards.map((s) => s.close()));
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose]() {
    await this.close();
  }
}
