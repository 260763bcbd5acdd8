// tarry-queue/redis: a delay queue on Redis shared by many processes, keeping the design of
// the in-memory DelayQueue: one timer per process, re-armed when the head changes.
//
// - Redis decides time: deadlines are epoch ms, and what is due is decided inside Lua with the
//   server's TIME, so clock skew between processes delivers nothing early. A delay counts from
//   the caller's call (its time stamped on the server's clock, see js/redis/clock.js).
// - Every change of state is one Lua script (js/redis/scripts.js), run by SHA.
// - A consuming process keeps ONE local timer for the earliest thing it must act on: the head's
//   deadline while a take() waits, the earliest lease expiry, a waiting take's timeout, the
//   lease extension of running process() handlers, and a safety check every few seconds. An
//   offer, reschedule, nack or retry that makes the head earlier publishes its deadline, and
//   each consumer re-arms on that message. No polling loop, no blocking command.
// - At least once: a delivered item is leased to its consumer until ack(); an expired lease
//   puts it back (or, after maxAttempts, into the dead letters). Each delivery has a token,
//   so an ack from a delivery whose lease was lost changes nothing and returns false.
//
// The client is ioredis (an optional peer dependency), loaded only when this module is given a
// URL rather than a client. The in-memory entries of tarry-queue never load this file.

import { createHash, randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { checkMs, checkSignal, describe, epochOf, options } from "./arguments.js";
import { ClosedError } from "./errors.js";
import { Batcher } from "./redis/batch.js";
import { localNow, ServerClock } from "./redis/clock.js";
import { jsonOf } from "./redis/json.js";
import { SOURCES } from "./redis/scripts.js";

export { ClosedError } from "./errors.js";

/** The longest id, in UTF-16 code units. */
const MAX_ID_LENGTH = 512;
/** Items per offer or ack script: more are split, so that no script holds Redis for long. */
const BATCH = 500;
/** Items one take script hands out at most. */
const TAKE_BATCH = 256;
/** Expired leases one take script puts back at most. */
const RECLAIM_BATCH = 256;
/** Deadlines must stay within the range of a Date. */
const MAX_TIME = 8.64e15;
/** setTimeout's limit; longer waits are chained. */
const MAX_TIMER = 2 ** 31 - 1;

/** The scripts whose reply starts with the server's time (a sample for the clock). */
const TIMED = new Set(["time", "offer", "take", "nack", "extend", "reschedule", "delayOf", "stats"]);

const SCRIPTS = Object.fromEntries(
  Object.entries(SOURCES).map(([name, source]) => [
    name,
    { source, sha: createHash("sha1").update(source).digest("hex") },
  ]),
);

/** A Redis-backed delay queue shared by every process that opens the same `name`. */
export class RedisDelayQueue {
  #options;
  #keys;
  #channel;
  #client = null;
  #ownsClient;
  #subscriber = null;
  #ready = null;
  #connected = false;
  #clock = new ServerClock();

  // Consuming: started by the first take() or process().
  #consuming = null;
  #head = Number.POSITIVE_INFINITY; // earliest pending deadline known (server ms)
  #leaseHead = Number.POSITIVE_INFINITY; // earliest lease expiry known (server ms)
  #takers = new Takers();
  #timer = null;
  #timerAt = Number.POSITIVE_INFINITY;
  #waking = null; // the running wake, a Promise
  #again = false;
  #lastCheck = Number.NEGATIVE_INFINITY;
  #retryAt = 0;
  #failures = 0;
  #extending = new Set(); // jobs whose process() handler runs: their leases are extended
  #extendAt = Number.POSITIVE_INFINITY;
  #workers = new Set();
  #closing = null;
  #detach = null;
  #counters = { timerArms: 0, wakes: 0, earlyWakes: 0, messages: 0, delivered: 0, redelivered: 0, released: 0 };
  #lateness = new Float64Array(8192);

  /**
   * @param {object} [opts]
   * @param {string | object} [opts.redis] a redis:// URL, ioredis options, or an ioredis
   *   `Redis` or `Cluster` instance (the queue then uses it and a duplicate() for pub/sub)
   * @param {string} opts.name the queue's name: every process that opens it shares its items
   * @param {string} [opts.prefix] prepended to the keys (default "tarry:")
   * @param {number} [opts.visibilityTimeout] ms a delivered item stays leased (default 5000)
   * @param {number} [opts.maxAttempts] deliveries before an item goes to the dead letters (default 5)
   * @param {number} [opts.safetyInterval] ms between checks that cover a missed message (default 5000)
   * @param {number} [opts.clockTolerance] how far back (ms) a call may be stamped (default 1000)
   * @param {(error: Error) => void} [opts.onerror] errors no call can report (background wake-ups, lease extension)
   */
  constructor(opts) {
    const o = options(opts, "options");
    const { name, prefix = "tarry:" } = o;
    if (typeof name !== "string" || name === "")
      throw new TypeError(`options.name must be a non-empty string, got ${describe(name)}`);
    if (typeof prefix !== "string") throw new TypeError(`options.prefix must be a string, got ${describe(prefix)}`);
    for (const [what, s] of [
      ["options.name", name],
      ["options.prefix", prefix],
    ]) {
      if (/[{}]/.test(s))
        throw new RangeError(`${what} must not contain { or }: the queue's keys use {name} as their hash tag`);
    }
    const positive = (key, fallback) => {
      const v = o[key] ?? fallback;
      checkMs(v, `options.${key}`);
      if (v <= 0) throw new RangeError(`options.${key} must be positive, got ${v}`);
      return v;
    };
    const maxAttempts = o.maxAttempts ?? 5;
    if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1)
      throw new RangeError(`options.maxAttempts must be a whole number >= 1, got ${describe(maxAttempts)}`);
    if (o.onerror !== undefined && typeof o.onerror !== "function")
      throw new TypeError(`options.onerror must be a function, got ${describe(o.onerror)}`);
    const redis = o.redis ?? "redis://127.0.0.1:6379";
    if (typeof redis !== "string" && (redis === null || typeof redis !== "object"))
      throw new TypeError(`options.redis must be a URL, ioredis options or an ioredis client, got ${describe(redis)}`);
    this.#options = {
      redis,
      visibilityTimeout: positive("visibilityTimeout", 5000),
      safetyInterval: positive("safetyInterval", 5000),
      clockTolerance: positive("clockTolerance", 1000),
      maxAttempts,
      onerror: o.onerror ?? ((e) => console.error("tarry-queue/redis:", e)),
    };
    const base = `${prefix}{${name}}:`;
    this.#keys = ["items", "pending", "leased", "dead", "seq", "reasons"].map((k) => base + k);
    this.#channel = `${base}head`;
    this.#ownsClient = !isClient(redis);
    if (!this.#ownsClient) this.#client = redis;
  }

  /** The queue's keys (all under one hash tag) and its pub/sub channel. */
  get keys() {
    const [items, pending, leased, dead, seq, reasons] = this.#keys;
    return { items, pending, leased, dead, seq, reasons, channel: this.#channel };
  }

  // --- producing ------------------------------------------------------------------------

  /**
   * Offers `value` (JSON data) due `delayMs` after this call. An item with the same id is
   * replaced. Resolves with the id (generated when not given) once Redis has it.
   */
  async offer(value, delayMs, opts) {
    const at = localNow();
    checkMs(delayMs, "delayMs");
    const item = this.#item(value, "value", opts, "options", "d", checkRange(delayMs, "delayMs"), at);
    this.#open();
    await this.#offers.add([item]);
    return item.id;
  }

  /** Offers `value` due at an absolute wall-clock time (epoch ms or a Date), as the server's clock tells it. */
  async offerAt(value, deadline, opts) {
    const at = localNow();
    const item = this.#item(value, "value", opts, "options", "a", checkRange(epochOf(deadline), "deadline"), at);
    this.#open();
    await this.#offers.add([item]);
    return item.id;
  }

  /**
   * Offers many items: `[{ value, delayMs } | { value, deadline }, with an optional id]`. Every
   * item is checked before anything is sent; then they go in scripts of up to 500 items
   * (each one atomic), pipelined. Resolves with their ids, in order.
   */
  async offerMany(items) {
    const at = localNow();
    if (!Array.isArray(items)) throw new TypeError(`items must be an array, got ${describe(items)}`);
    const checked = items.map((it, i) => {
      const where = `items[${i}]`;
      if (it === null || typeof it !== "object") throw new TypeError(`${where} must be an object, got ${describe(it)}`);
      if ((it.delayMs === undefined) === (it.deadline === undefined))
        throw new TypeError(`${where} must have exactly one of delayMs and deadline`);
      let kind = "a";
      let ms;
      if (it.delayMs !== undefined) {
        checkMs(it.delayMs, `${where}.delayMs`);
        kind = "d";
        ms = checkRange(it.delayMs, `${where}.delayMs`);
      } else {
        ms = checkRange(epochOf(it.deadline), `${where}.deadline`);
      }
      return this.#item(it.value, `${where}.value`, { id: it.id }, where, kind, ms, at);
    });
    this.#open();
    await this.#offers.add(checked);
    return checked.map((it) => it.id);
  }

  #item(value, where, opts, optsName, kind, ms, at) {
    const { id = randomUUID() } = options(opts, optsName);
    checkId(id, `${optsName}.id`);
    return { id, kind, ms, json: jsonOf(value, where), at };
  }

  /** The offers made in one turn, gathered: one script per 500 items (each script atomic). */
  #offers = new Batcher(BATCH, async (items) => {
    if (!this.#connected) await this.#connect();
    // One stamp for the run, the first call's; a later call's delay counts from its own call.
    const first = items[0].at;
    const args = [this.#channel, this.#clock.stamp(first), this.#options.clockTolerance];
    for (const it of items) args.push(it.id, it.kind, it.kind === "d" ? it.ms + (it.at - first) : it.ms, it.json);
    const [, head] = await this.#run("offer", args);
    this.#sawHead(head);
    return items;
  });

  /** The acks made in one turn, gathered likewise. */
  #acks = new Batcher(BATCH, async (deliveries) => {
    if (!this.#connected) await this.#connect();
    return this.#run("ack", deliveries.flat());
  });

  /** Removes a pending item. Resolves true if it was pending (not in flight, not dead). */
  async cancel(id) {
    checkId(id, "id");
    this.#open();
    if (!this.#connected) await this.#connect();
    return (await this.#run("cancel", [id])) === 1;
  }

  /** Gives a pending item a new delay, counted from this call. Resolves true if it was pending. */
  async reschedule(id, delayMs) {
    const at = localNow();
    checkId(id, "id");
    checkMs(delayMs, "delayMs");
    checkRange(delayMs, "delayMs");
    this.#open();
    if (!this.#connected) await this.#connect();
    const args = [this.#channel, this.#clock.stamp(at), this.#options.clockTolerance, id, "d", delayMs];
    const [, found, head] = await this.#run("reschedule", args);
    this.#sawHead(head);
    return found === 1;
  }

  /** Ms until a pending item's deadline by the server's clock (negative when overdue), or undefined. */
  async delayOf(id) {
    checkId(id, "id");
    this.#open();
    if (!this.#connected) await this.#connect();
    const [now, deadline] = await this.#run("delayOf", [id]);
    return deadline == null ? undefined : Number(deadline) - Number(now);
  }

  /** The number of pending items (waiting for their deadline, or due and not yet taken). */
  async size() {
    this.#open();
    if (!this.#connected) await this.#connect();
    return (await this.#run("stats", []))[1];
  }

  /** What Redis holds for the queue, and this process's own figures. */
  async stats() {
    this.#open();
    if (!this.#connected) await this.#connect();
    const [now, pending, inFlight, dead, head] = await this.#run("stats", []);
    const lateness = this.#latenessSorted();
    const at = (q) => (lateness.length ? lateness[Math.min(lateness.length - 1, Math.floor(q * lateness.length))] : 0);
    return {
      pending,
      inFlight,
      dead,
      headDelay: head == null ? undefined : Number(head) - Number(now),
      takers: this.#takers.size,
      timersArmed: this.#timer ? 1 : 0,
      ...this.#counters,
      latenessP50: at(0.5),
      latenessP99: at(0.99),
      latenessMax: lateness.length ? lateness[lateness.length - 1] : 0,
    };
  }

  /** The dead letters, oldest first: `{ id, value, attempt, deadline, reason, diedAt, raw? }`. */
  async deadLetters({ limit = 1000 } = {}) {
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new RangeError(`limit must be a whole number >= 1, got ${describe(limit)}`);
    this.#open();
    if (!this.#connected) await this.#connect();
    const reply = await this.#run("deadLetters", [limit]);
    const out = [];
    for (let i = 0; i < reply.length; i += 4) {
      const [id, record, why, diedAt] = reply.slice(i, i + 4);
      const r = parseRecord(record);
      const { reason, raw } = why ? JSON.parse(why) : {};
      const letter = {
        id,
        value: undefined,
        attempt: r?.attempt ?? 0,
        deadline: r?.deadline,
        reason,
        diedAt: Number(diedAt),
      };
      try {
        letter.value = JSON.parse(r?.value ?? "");
      } catch {
        letter.raw = raw ?? r?.value ?? record;
      }
      if (raw !== undefined) letter.raw = raw;
      out.push(letter);
    }
    return out;
  }

  /** Puts a dead letter back, due now, with its attempts reset. Resolves true if it was dead. */
  async retryDead(id) {
    checkId(id, "id");
    this.#open();
    if (!this.#connected) await this.#connect();
    const [found, head] = await this.#run("retryDead", [this.#channel, id]);
    this.#sawHead(head);
    return found === 1;
  }

  /** Removes every item of the queue, pending, in flight and dead (deliveries in flight then ack false). */
  async clear() {
    this.#open();
    if (!this.#connected) await this.#connect();
    await this.#run("clear", []);
  }

  // --- consuming ------------------------------------------------------------------------

  /**
   * The next due item, leased to this process for visibilityTimeout ms: `{ id, value,
   * deadline, attempt, ack(), nack(), extend() }`. With `timeout` (ms) it resolves undefined
   * when that passes; with an AbortSignal it rejects with the signal's reason. A take that
   * ends so leaves its item in the queue.
   */
  take(opts) {
    let signal;
    let timeout;
    try {
      ({ signal, timeout } = options(opts, "options"));
      checkSignal(signal);
      if (timeout !== undefined) checkMs(timeout, "timeout");
    } catch (e) {
      return Promise.reject(e);
    }
    if (this.#closing) return Promise.reject(new ClosedError("RedisDelayQueue"));
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const taker = { resolve, reject, until: Number.POSITIVE_INFINITY, signal, onAbort: null, done: false };
      if (timeout !== undefined) taker.until = localNow() + Math.max(0, timeout);
      if (signal) {
        taker.onAbort = () => this.#leave(taker, () => reject(signal.reason));
        signal.addEventListener("abort", taker.onAbort, { once: true });
      }
      this.#takers.push(taker);
      this.#demand();
    });
  }

  /** `for await (const job of queue)`: takes jobs until close(). */
  async *[Symbol.asyncIterator]() {
    for (;;) {
      let job;
      try {
        job = await this.take();
      } catch (e) {
        if (e instanceof ClosedError) return;
        throw e;
      }
      yield job;
    }
  }

  /**
   * Runs `handler(value, job)` for each due item, `concurrency` at a time. It acks when the
   * handler resolves and nacks (retry after `retryDelayMs`, a number or `(attempt, error) =>
   * ms`) when it throws; after maxAttempts the item goes to the dead letters. The lease is
   * extended while the handler runs. Returns `{ close() }`: stop taking, let running handlers
   * finish.
   */
  process(handler, opts) {
    if (typeof handler !== "function") throw new TypeError(`handler must be a function, got ${describe(handler)}`);
    const { concurrency = 1, retryDelayMs = 1000 } = options(opts, "options");
    if (!Number.isSafeInteger(concurrency) || concurrency < 1)
      throw new RangeError(`options.concurrency must be a whole number >= 1, got ${describe(concurrency)}`);
    if (typeof retryDelayMs !== "function") checkMs(retryDelayMs, "options.retryDelayMs");
    if (this.#closing) throw new ClosedError("RedisDelayQueue");
    const retry = typeof retryDelayMs === "function" ? retryDelayMs : () => retryDelayMs;
    const stop = new AbortController();
    setMaxListeners(0, stop.signal); // one listener per waiting slot: `concurrency` of them
    const slot = async () => {
      while (!stop.signal.aborted) {
        let job;
        try {
          job = await this.take({ signal: stop.signal });
        } catch (e) {
          if (stop.signal.aborted || e instanceof ClosedError) return;
          this.#options.onerror(e);
          continue;
        }
        await this.#handle(job, handler, retry);
      }
    };
    const running = Promise.all(Array.from({ length: concurrency }, slot)).then(() => undefined);
    const worker = {
      close: () => {
        stop.abort();
        this.#workers.delete(worker);
        return running;
      },
    };
    this.#workers.add(worker);
    return worker;
  }

  async #handle(job, handler, retry) {
    this.#extending.add(job);
    if (this.#extendAt === Number.POSITIVE_INFINITY) {
      this.#extendAt = localNow() + this.#options.visibilityTimeout / 3;
      this.#arm();
    }
    let failure = null;
    try {
      await handler(job.value, job);
    } catch (e) {
      failure = e ?? new Error(String(e));
    }
    this.#extending.delete(job);
    try {
      if (failure === null) await job.ack();
      else {
        const delayMs = Number(retry(job.attempt, failure));
        await job.nack({ delayMs: Number.isFinite(delayMs) ? delayMs : 0, reason: failure });
      }
    } catch (e) {
      // Redis is unreachable: the lease runs out and the item comes back.
      this.#options.onerror(e);
    }
  }

  /**
   * Stops: waiting takes reject with ClosedError, process() workers finish their running
   * handlers (and ack them), then the connections this queue opened are closed.
   */
  close() {
    if (this.#closing) return this.#closing;
    this.#closing = (async () => {
      for (const t of this.#takers.drain()) this.#settle(t, () => t.reject(new ClosedError("RedisDelayQueue")));
      this.#arm(); // now only for lease extension
      await Promise.all([...this.#workers].map((w) => w.close()));
      await this.#consuming?.catch(() => {});
      await this.#waking;
      clearTimeout(this.#timer);
      this.#timer = null;
      this.#detach?.();
      const quit = (c) => c.quit().catch(() => c.disconnect());
      if (this.#subscriber) await quit(this.#subscriber);
      if (this.#ownsClient && this.#client) await quit(this.#client);
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose]() {
    await this.close();
  }

  // --- the one timer --------------------------------------------------------------------

  /** A take() is waiting: start consuming, or hand it what is due, or arm for the head. */
  #demand() {
    if (!this.#consuming) {
      this.#consuming = this.#startConsuming();
      this.#consuming.catch((e) => this.#failed(e));
      return;
    }
    if (this.#lastCheck === Number.NEGATIVE_INFINITY) return; // the first wake is on its way
    if (this.#head <= this.#clock.serverNow()) this.#wake();
    else this.#arm();
  }

  async #startConsuming() {
    if (!this.#connected) await this.#connect();
    const sub = this.#client.duplicate();
    sub.on("error", (e) => this.#options.onerror(e));
    sub.on("message", (_channel, message) => this.#message(message));
    try {
      await sub.subscribe(this.#channel);
    } catch (e) {
      sub.disconnect();
      throw e;
    }
    this.#subscriber = sub;
    // After a reconnection, messages may have been missed: look at Redis again.
    const look = () => this.#wake();
    sub.on("ready", look);
    this.#client.on("ready", look);
    this.#detach = () => this.#client.off("ready", look);
    this.#wake();
  }

  #message(message) {
    this.#counters.messages++;
    const head = Number(message);
    if (!(head < this.#head)) return;
    this.#head = head;
    if (this.#takers.size > 0) this.#demand();
  }

  /** A script reply told the head's deadline: keep the earlier of it and what we knew. */
  #sawHead(head) {
    if (head == null || !this.#consuming) return;
    const h = Number(head);
    if (h < this.#head) {
      this.#head = h;
      if (this.#takers.size > 0) this.#demand();
    }
  }

  /** Sets the one timer for the earliest thing this process must act on. */
  #arm() {
    if (!this.#consuming) return;
    const now = localNow();
    let at = Math.min(this.#takers.earliestTimeout(), this.#extendAt);
    // Closing: only the leases of the handlers it waits for are still kept.
    if (!this.#waking && !this.#closing) {
      // What needs Redis waits out a back-off after a failure; a running wake re-arms when done.
      let redis = Math.min(this.#lastCheck + this.#options.safetyInterval, this.#clock.localAt(this.#leaseHead));
      if (this.#takers.size > 0) redis = Math.min(redis, this.#clock.localAt(this.#head));
      at = Math.min(at, Math.max(redis, this.#retryAt));
    }
    if (this.#timer && at === this.#timerAt) return;
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#timerAt = at;
    if (at === Number.POSITIVE_INFINITY) return;
    this.#counters.timerArms++;
    this.#timer = setTimeout(() => this.#fire(), Math.min(MAX_TIMER, Math.max(0, Math.ceil(at - now))));
  }

  #fire() {
    this.#timer = null;
    this.#timerAt = Number.POSITIVE_INFINITY;
    const now = localNow();
    let acted = false;
    for (const t of this.#takers.expired(now)) {
      acted = true;
      this.#settle(t, () => t.resolve(undefined));
    }
    if (now >= this.#extendAt) {
      acted = true;
      this.#extend();
    }
    if (!this.#waking && !this.#closing && now >= this.#retryAt) {
      const server = this.#clock.serverNow(now);
      const due = this.#takers.size > 0 && this.#head <= server;
      if (due || this.#leaseHead <= server || now >= this.#lastCheck + this.#options.safetyInterval) {
        this.#wake();
        return;
      }
    }
    // Node's timers can fire up to ~1 ms before the clock says so: re-arm, hand out nothing.
    if (!acted && !this.#waking) this.#counters.earlyWakes++;
    this.#arm();
  }

  /** Runs the take script (lease expiry, then transfer to the waiting takes) until nothing more is due. */
  #wake() {
    if (this.#closing) return;
    if (this.#waking) {
      this.#again = true;
      return;
    }
    let done;
    this.#waking = new Promise((resolve) => (done = resolve));
    this.#arm(); // only the take timeouts and lease extension stay armed meanwhile
    this.#wakeUntilDone().then(done);
  }

  async #wakeUntilDone() {
    try {
      do {
        this.#again = false;
        this.#counters.wakes++;
        const count = Math.min(this.#takers.size, TAKE_BATCH);
        const { visibilityTimeout, maxAttempts } = this.#options;
        const reply = await this.#run("take", [this.#channel, count, visibilityTimeout, maxAttempts, RECLAIM_BATCH]);
        this.#failures = 0;
        this.#retryAt = 0;
        this.#lastCheck = localNow();
        const now = Number(reply[0]);
        this.#head = reply[1] == null ? Number.POSITIVE_INFINITY : Number(reply[1]);
        this.#leaseHead = reply[2] == null ? Number.POSITIVE_INFINITY : Number(reply[2]);
        for (let i = 3; i < reply.length; i += 5) await this.#deliver(reply, i, now);
        if (this.#takers.size > 0 && this.#head <= now) this.#again = true;
      } while (this.#again && !this.#closing);
    } catch (e) {
      if (!this.#closing) {
        this.#failed(e);
      }
    }
    this.#waking = null;
    this.#arm();
  }

  /** A wake failed (Redis unreachable?): try again after a back-off, up to the safety interval. */
  #failed(e) {
    this.#failures++;
    this.#retryAt = localNow() + Math.min(this.#options.safetyInterval, 50 * 2 ** Math.min(this.#failures, 10));
    if (this.#closing) return;
    this.#options.onerror(e);
    if (this.#lastCheck === Number.NEGATIVE_INFINITY && !this.#subscriber) {
      // Could not even connect: start again after the back-off (the one timer needs a start).
      this.#consuming = null;
      setTimeout(() => this.#takers.size > 0 && this.#demand(), this.#retryAt - localNow());
    }
  }

  async #deliver(reply, i, now) {
    const [id, text, deadline, attempt, token] = reply.slice(i, i + 5);
    let value;
    try {
      value = JSON.parse(text);
    } catch (e) {
      await this.#run("bury", [id, token, `value is not JSON: ${e.message}`]);
      this.#again = true;
      return;
    }
    const job = new RedisJob(this.#jobOps, id, value, Number(deadline), attempt, token);
    const taker = this.#takers.shift();
    if (!taker) {
      // The take that asked for it left while the script ran: the item goes back to its place.
      this.#counters.released++;
      const [head] = await this.#run("release", [this.#channel, id, token]);
      this.#sawHead(head);
      return;
    }
    this.#lateness[this.#counters.delivered % this.#lateness.length] = now - job.deadline;
    this.#counters.delivered++;
    if (attempt > 1) this.#counters.redelivered++;
    this.#settle(taker, () => taker.resolve(job));
  }

  #extend() {
    const jobs = [...this.#extending];
    this.#extendAt = jobs.length ? localNow() + this.#options.visibilityTimeout / 3 : Number.POSITIVE_INFINITY;
    if (!jobs.length) return;
    const args = [this.#options.visibilityTimeout];
    for (const job of jobs) args.push(...this.#jobOps.lease(job));
    this.#run("extend", args).then(
      (reply) => this.#sawLeases(reply[1]),
      (e) => this.#options.onerror(e),
    );
  }

  #sawLeases(leaseHead) {
    this.#leaseHead = leaseHead == null ? Number.POSITIVE_INFINITY : Number(leaseHead);
    this.#arm();
  }

  #leave(taker, settle) {
    if (taker.done) return;
    this.#takers.remove(taker);
    this.#settle(taker, settle);
    this.#arm();
  }

  #settle(taker, settle) {
    taker.done = true;
    if (taker.signal) taker.signal.removeEventListener("abort", taker.onAbort);
    settle();
  }

  #latenessSorted() {
    const n = Math.min(this.#counters.delivered, this.#lateness.length);
    return this.#lateness.slice(0, n).sort();
  }

  // --- the seam to Redis ----------------------------------------------------------------

  /** What a RedisJob may ask of its queue. */
  #jobOps = {
    ack: async (job, token) => (await this.#acks.add([[job.id, token]]))[0] === 1,
    nack: async (job, token, delayMs, reason) => {
      const at = localNow();
      if (!this.#connected) await this.#connect();
      const args = [this.#channel, this.#clock.stamp(at), this.#options.clockTolerance, job.id, token, delayMs];
      args.push(this.#options.maxAttempts, reason);
      const [, outcome, head] = await this.#run("nack", args);
      this.#sawHead(head);
      return outcome !== 0;
    },
    extend: async (job, token, ms) => {
      if (!this.#connected) await this.#connect();
      const reply = await this.#run("extend", [ms ?? this.#options.visibilityTimeout, job.id, token]);
      this.#sawLeases(reply[1]);
      return reply[2] === 1;
    },
    lease: (job) => [job.id, tokenOf(job)],
  };

  #open() {
    if (this.#closing) throw new ClosedError("RedisDelayQueue");
  }

  #connect() {
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
        const { redis } = this.#options;
        this.#client =
          typeof redis === "string"
            ? new Redis(redis, { enableAutoPipelining: true })
            : new Redis({ enableAutoPipelining: true, ...redis });
        this.#client.on("error", (e) => this.#options.onerror(e));
      }
      // A first reading of the server's clock, so that the first offer is stamped.
      await this.#run("time", []);
      this.#connected = true;
    })();
    this.#ready.catch(() => {
      this.#ready = null;
    });
    return this.#ready;
  }

  /** Runs a script by SHA; loads it (EVAL) when the server does not have it (NOSCRIPT). */
  async #run(name, args) {
    // Calls reach Redis in the order they were made, gathered or not.
    if (name !== "offer") this.#offers.flushNow();
    if (name !== "ack") this.#acks.flushNow();
    const script = SCRIPTS[name];
    const keys = this.#keys;
    const sent = localNow();
    let reply;
    try {
      reply = await this.#client.evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (e) {
      if (!String(e?.message).startsWith("NOSCRIPT")) throw explain(e, this.#keys);
      try {
        reply = await this.#client.eval(script.source, keys.length, ...keys, ...args);
      } catch (e2) {
        throw explain(e2, this.#keys);
      }
    }
    if (TIMED.has(name)) {
      const server = Number(reply[0]);
      if (Number.isFinite(server)) this.#clock.sample(sent, server, localNow());
    }
    return reply;
  }
}

/** One delivery of an item: ack, nack or extend it while this delivery holds the lease. */
class RedisJob {
  #ops;
  #token;

  constructor(ops, id, value, deadline, attempt, token) {
    this.#ops = ops;
    this.#token = token;
    /** The item's id. */
    this.id = id;
    /** The value as offered. */
    this.value = value;
    /** The deadline it was due at, epoch ms by the server's clock. */
    this.deadline = deadline;
    /** Which delivery this is: 1 the first, 2 after one nack or expired lease, ... */
    this.attempt = attempt;
  }

  /** Done: removes the item. Resolves false if this delivery had lost its lease (changes nothing). */
  ack() {
    return this.#ops.ack(this, this.#token);
  }

  /**
   * Not done: the item comes back after `delayMs` (default 0), or goes to the dead letters
   * if this was its last attempt (`reason` is kept there). Resolves false if the lease was lost.
   */
  nack(opts) {
    const { delayMs = 0, reason = "nack" } = options(opts, "options");
    checkMs(delayMs, "options.delayMs");
    checkRange(delayMs, "options.delayMs");
    const why = reason instanceof Error ? reason.stack || reason.message : String(reason);
    return this.#ops.nack(this, this.#token, delayMs, why.slice(0, 2000));
  }

  /** Keeps the lease for `ms` more from now (default: the visibility timeout). Resolves false if it was lost. */
  extend(ms) {
    if (ms !== undefined) {
      checkMs(ms, "ms");
      if (ms <= 0) throw new RangeError(`ms must be positive, got ${ms}`);
    }
    return this.#ops.extend(this, this.#token, ms);
  }

  static tokenOf(job) {
    return job.#token;
  }
}

const tokenOf = (job) => RedisJob.tokenOf(job);

/** The waiting takes, in call order (a FIFO with O(1) removal by marking). */
class Takers {
  #list = [];
  #first = 0;
  #live = 0;
  #timed = 0;

  get size() {
    return this.#live;
  }

  push(t) {
    this.#list.push(t);
    this.#live++;
    if (t.until !== Number.POSITIVE_INFINITY) this.#timed++;
  }

  shift() {
    while (this.#first < this.#list.length) {
      const t = this.#list[this.#first++];
      if (!t.done) {
        this.#forget(t);
        this.#compact();
        return t;
      }
    }
    return undefined;
  }

  remove(t) {
    if (t.done) return;
    this.#forget(t);
    t.removed = true;
    t.done = true;
    this.#compact();
  }

  #forget(t) {
    this.#live--;
    if (t.until !== Number.POSITIVE_INFINITY) this.#timed--;
  }

  #compact() {
    if (this.#first > 1024 && this.#first * 2 > this.#list.length) {
      this.#list = this.#list.slice(this.#first);
      this.#first = 0;
    }
    if (this.#live === 0) {
      this.#list = [];
      this.#first = 0;
    }
  }

  earliestTimeout() {
    let at = Number.POSITIVE_INFINITY;
    if (this.#timed === 0) return at;
    for (let i = this.#first; i < this.#list.length; i++) {
      const t = this.#list[i];
      if (!t.done && t.until < at) at = t.until;
    }
    return at;
  }

  /** Removes and returns the takes whose timeout has passed at `now`. */
  expired(now) {
    const out = [];
    if (this.#timed === 0) return out;
    for (let i = this.#first; i < this.#list.length; i++) {
      const t = this.#list[i];
      if (!t.done && t.until <= now) {
        this.#forget(t);
        t.done = true;
        out.push(t);
      }
    }
    this.#compact();
    return out;
  }

  drain() {
    const out = this.#list.slice(this.#first).filter((t) => !t.done);
    for (const t of out) this.#forget(t);
    this.#list = [];
    this.#first = 0;
    return out;
  }
}

function isClient(redis) {
  return typeof redis === "object" && typeof redis.evalsha === "function" && typeof redis.duplicate === "function";
}

/** An id: a non-empty, well-formed string of at most MAX_ID_LENGTH code units. */
function checkId(id, name) {
  if (typeof id !== "string") throw new TypeError(`${name} must be a string, got ${describe(id)}`);
  if (id === "") throw new RangeError(`${name} must not be empty`);
  if (id.length > MAX_ID_LENGTH)
    throw new RangeError(`${name} must be at most ${MAX_ID_LENGTH} characters, got ${id.length}`);
  if (!id.isWellFormed()) throw new RangeError(`${name} must be well-formed Unicode (it has a lone surrogate)`);
}

function checkRange(ms, name) {
  if (Math.abs(ms) > MAX_TIME) throw new RangeError(`${name} must be within ±${MAX_TIME} ms, got ${ms}`);
  return ms;
}

function parseRecord(record) {
  const m = record == null ? null : /^([pld])([0-9a-f]{16})\|([^|]+)\|(\d+)\|(\d*)\|/.exec(record);
  if (!m) return null;
  return { state: m[1], deadline: Number(m[3]), attempt: Number(m[4]), value: record.slice(m[0].length) };
}

/** A Redis error, with what it means for this queue when that is clear. */
function explain(e, keys) {
  if (String(e?.message).startsWith("WRONGTYPE")) {
    return new Error(
      `tarry-queue/redis: a key of this queue holds another type of value (did something else write to ${keys.join(", ")}?)`,
      { cause: e },
    );
  }
  return e;
}
