// DurableDelayQueue: a delay queue for a Cloudflare Durable Object, whose one timer is the
// object's alarm and whose items live in the object's storage. It keeps the engine contract
// RedisDelayQueue keeps (docs/semantics.md; tests/contract runs one suite against both):
// string ids, `ifExists`, cancel/reschedule/delayOf/size, at-least-once delivery with
// attempts, retries and dead letters.
//
// The rule is the same as for the host timer of DelayQueue: one alarm, set for the head's
// deadline, re-armed when the head changes, deleted when the queue is empty. The alarm hands
// the items that are due to deliver()'s handler in deadline order. Memory holds what storage
// holds, so reads cost no storage call; a page of pending items or dead letters costs
// O(log n + limit), and get(id) O(1).
//
// Invariants (tests/js/durable-sweep.test.mjs fails every storage call of every operation and
// checks them):
// 1. Memory never runs ahead of storage. A call computes its writes from memory, commits them
//    in one `storage.transaction()` (items, dead letters, the seq counter and, when it moves,
//    the alarm: all or nothing), and only then changes memory. A call that rejects has
//    changed nothing, in memory or storage, and a retry cannot store an item twice.
// 2. Items pending and the queue not paused ⇒ the alarm is set, never later than the earliest deadline storage holds
//    (the item in flight included: storage holds it as pending until its outcome is stored).
//    After each call that succeeds it is exactly that (rounded up to whole ms; an overdue
//    head's at once), and none for an empty queue. When a call removes or postpones the head,
//    the new head is known only once memory has changed, so the alarm follows in a second
//    write; should that write fail, the call has still happened and the alarm stays early,
//    which costs one wake (deliver() finds nothing due and sets it again). Paused ⇒ no
//    alarm (pause() deletes it with the paused flag, in one transaction; resume() sets it
//    with the flag's removal), and deliver() hands nothing out.
// 3. One change at a time: calls queue for their turn (`#exclusive`), so no call computes its
//    writes from a state another is about to change; reads take their turn too, so they see
//    every earlier call. deliver() calls run one after another; a handler runs outside the
//    turn, so it may call offer(), cancel() and the rest (not deliver() or close()).
// 4. Nothing early, at least once. deliver() hands out items whose deadline has passed by
//    Date.now() at its start, one at a time in deadline order (FIFO among equal deadlines).
//    Before the handler runs, the item's attempt is raised in storage (a delivery that never
//    finishes, because the object was reset, still counts, as an expired lease does on
//    Redis); while it runs the item is in flight, and it is no longer in the order. When the
//    handler returns the item is removed; when it throws, the item goes back at its retry
//    deadline (a new seq: behind the items already due then), or to the dead letters after
//    `maxAttempts`. That outcome and the next item's raised attempt are one transaction, so
//    a delivery costs one. Only an unfinished delivery, or one whose outcome could not be
//    stored, hands an item out again from its old place.
// 5. One id names one item, pending, in flight or dead. `ifExists` decides what an offer
//    does to an id that is present: replace it (a new item), keep it, or extend it (a pending
//    item takes the later deadline and the new value; one in flight or dead is replaced).
// 6. Values are copied in (structured clone, as storage copies them) and out (the handler's
//    argument, peek, toArray, deadLetters), so no caller can change what memory holds but
//    storage does not.
//
// What storage guarantees and this relies on: a transaction commits all its writes or none;
// while storage calls are awaited the runtime delivers no other event to the object (input
// gate); a write that fails after it was accepted resets the object (output gate), so memory
// never outlives a write that did not happen; hence no sync() is needed. The alarm runs at
// least once and is retried when its handler throws; while a handler runs, getAlarm() reports
// none and the alarm is deleted when it returns unless set meanwhile, so deliver() always sets
// it before it returns.
//
// Storage layout, under `prefix` (default "tarry:"):
//   `item:<id>` → { value, deadline, seq, attempt, out? }   pending (or in flight) items
//   `dead:<id>` → { value, deadline, seq, attempt, reason, diedAt }   dead letters
//   `next`      → the next seq
//   `paused`    → true while the queue is paused (absent otherwise)
// Times are epoch ms; seq orders equal deadlines (FIFO) and, for dead letters, the order of
// death; attempt counts the deliveries begun; `out` is true from a delivery's start until its
// outcome is stored, so an item that has it when it is handed out again was in flight when
// the object was reset (a `redelivered` event).
//
// Events (an EventTarget, events.js), dispatched once storage holds what they tell:
// `delivered` { id, attempt, deadline, lateness }, `redelivered` { id, attempt } (before
// `delivered`, for an item whose last delivery never finished), `acked` { id }, `nacked`
// { id, attempt, delayMs, reason }, `dead` { id, reason }, `error` { error } (storage failed
// under deliver()), `paused` and `resumed`. The same outcomes go to OpenTelemetry when an
// application registered a MeterProvider (metrics.js). Nobody listening and no provider cost
// one check per outcome.

import { checkId, checkIfExists, checkMs, describe, epochOf, isRevoked, MAX_ID_LENGTH, options } from "./arguments.js";
import { ClosedError } from "./errors.js";
import { EMIT, Emitter, HEARD } from "./events.js";
import { newId } from "./ids.js";
import { Meters } from "./metrics.js";
import { Order } from "./order.js";
import {
  infoOf as scheduleInfoOf,
  occurrenceStep,
  pendingId,
  planSchedule,
  scheduleOf,
  storedSchedule,
} from "./schedule/durable.js";
import { checkScheduleId, cronRuleOf, dueOf, occurrenceId, scheduleSpec } from "./schedule/spec.js";

/** The dead letters: by id, and in order of death (their seq) for pages. */
class DeadLetters {
  #byId = new Map();
  /** Records sorted by seq; deaths come with a new seq, so they are appended. */
  #bySeq = [];

  get size() {
    return this.#byId.size;
  }

  get(id) {
    return this.#byId.get(id);
  }

  add(record) {
    this.#byId.set(record.id, record);
    const at = this.#after(record.seq);
    if (at === this.#bySeq.length) this.#bySeq.push(record);
    else this.#bySeq.splice(at, 0, record);
  }

  remove(record) {
    if (this.#byId.get(record.id) !== record) return;
    this.#byId.delete(record.id);
    this.#bySeq.splice(this.#after(record.seq - 1), 1);
  }

  /** Up to `limit` records that died after seq `after` (-1: from the first), and whether more follow. */
  page(after, limit) {
    const from = this.#after(after);
    return { records: this.#bySeq.slice(from, from + limit), more: from + limit < this.#bySeq.length };
  }

  /** The records that died at `time` or before. */
  diedBy(time) {
    return this.#bySeq.filter((r) => r.diedAt <= time);
  }

  /** The index of the first record whose seq is greater than `seq` (binary search). */
  #after(seq) {
    let lo = 0;
    let hi = this.#bySeq.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#bySeq[mid].seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

// ---- Policy ----

/** workerd refuses alarms after 2189 ("This API doesn't support dates after 2189"). */
const LATEST_DEADLINE = Date.UTC(2189, 0, 1);
const LATEST = new Date(LATEST_DEADLINE).toISOString();
/** The earliest deadline: the earliest time a Date can hold. */
const EARLIEST_DEADLINE = -8.64e15;
/** The contract's defaults, as on Redis: deliveries before the dead letters, ms before a retry. */
const MAX_ATTEMPTS = 5;
const RETRY_DELAY_MS = 1000;
/** A dead letter keeps this much of its error's stack or message. */
const REASON_LENGTH = 2000;
/** Dead letters per page: the default and the most. */
const PAGE = 100;
const MAX_PAGE = 1000;
/** Keys per txn.put() or txn.delete() call (the key-value backend's limit). */
const KEYS_PER_CALL = 128;
/** Deliveries whose lateness stats() keeps. */
const LATENESS_SAMPLES = 8192;

/** @typedef {{ id: string, state: string, value: any, deadline: number, seq: number, attempt: number, inOrder?: boolean, out?: boolean, reason?: string, diedAt?: number, schedule?: string }} DurableRecord */
/** @typedef {import("./schedule/durable.js").DurableSchedule} DurableSchedule */
/**
 * What one storage transaction changes (#commit).
 * @typedef {{ removes?: DurableRecord[], adds?: DurableRecord[], updates?: { record: DurableRecord, fields: object }[],
 *   deadRemoves?: DurableRecord[], deadAdds?: DurableRecord[], next?: number,
 *   schedulePuts?: DurableSchedule[], scheduleDeletes?: DurableSchedule[], tell?: [string, object][] }} Change
 */

/** What `#alarm` holds when this queue cannot know what storage holds. */
const UNKNOWN = undefined;

/**
 * A delay queue kept in a Durable Object's storage and woken by its alarm.
 *
 * @example
 * export class Reminders {
 *   constructor(ctx) {
 *     ctx.blockConcurrencyWhile(async () => { this.queue = await DurableDelayQueue.open(ctx.storage); });
 *   }
 *   async alarm() {
 *     await this.queue.deliver((reminder, job) => console.log("due:", reminder, "attempt", job.attempt));
 *   }
 * }
 */
export class DurableDelayQueue extends Emitter {
  #storage;
  #prefix;
  #maxAttempts;
  #name;
  #paused = false;
  /** @type {Meters} */
  #meters;
  /** The pending items, in (deadline, seq) order. @type {Order<DurableRecord>} */
  #order = new Order();
  /** id → { id, value, deadline, seq, attempt, inOrder } of each pending or in-flight item. @type {Map<string, DurableRecord>} */
  #items = new Map();
  /** The item whose handler runs (in #items, not in #order), or null. @type {DurableRecord | null} */
  #inFlight = null;
  #dead = new DeadLetters();
  /** The schedules, by id (js/schedule/durable.js). @type {Map<string, DurableSchedule>} */
  #schedules = new Map();
  #next = 0;
  /** The alarm storage holds (epoch ms, or null for none), as far as this queue knows. @type {number | null | undefined} */
  #alarm = UNKNOWN;
  /** The tail of the calls waiting for their turn to change (or read) the queue. */
  #turn = Promise.resolve();
  /** The tail of the deliver() calls. */
  #delivery = Promise.resolve();
  /** @type {Promise<void> | null} */
  #closing = null;
  #counters = { wakes: 0, earlyWakes: 0, delivered: 0, redelivered: 0 };
  #lateness = new Float64Array(LATENESS_SAMPLES);

  /** Use `await DurableDelayQueue.open(storage)`. */
  constructor(storage, prefix, maxAttempts, name, token) {
    super();
    if (token !== OPEN) throw new TypeError("use `await DurableDelayQueue.open(storage)`");
    this.#storage = storage;
    this.#prefix = prefix;
    this.#maxAttempts = maxAttempts;
    this.#name = name;
    this.#meters = new Meters("durable", name, async () => ({
      pending: this.#order.size,
      inFlight: this.#inFlight === null ? 0 : 1,
      dead: this.#dead.size,
    }));
  }

  /** The queue's name, as `open()` was given it: what metrics and the dashboard call it. */
  get name() {
    return this.#name;
  }

  /**
   * Reads the queue back from a Durable Object's storage (`ctx.storage`) and sets the alarm
   * for its head. Call it in `blockConcurrencyWhile` in the object's constructor. The queue
   * owns the object's alarm: one queue per object.
   * @param {DurableObjectStorage} storage
   * @param {{prefix?: string, maxAttempts?: number, name?: string}} [opts] keys used: `${prefix}item:<id>`,
   *   `${prefix}dead:<id>`, `${prefix}next` and `${prefix}paused`; deliveries before an item
   *   goes to the dead letters (default 5); the name metrics and the dashboard show (default
   *   "durable").
   */
  static async open(storage, opts) {
    // What it calls (writes go through transaction(): txn.put, txn.delete, txn.*Alarm).
    const methods = ["get", "list", "transaction", "getAlarm", "setAlarm", "deleteAlarm"];
    if (
      storage === null ||
      typeof storage !== "object" ||
      isRevoked(storage) ||
      methods.some((m) => typeof storage[m] !== "function")
    ) {
      throw new TypeError(`storage must be a Durable Object's storage (ctx.storage), got ${describe(storage)}`);
    }
    const {
      prefix = "tarry:",
      maxAttempts = MAX_ATTEMPTS,
      name = "durable",
    } = options(opts, "options", ["prefix", "maxAttempts", "name"], "DurableDelayQueue.open()");
    if (typeof prefix !== "string") throw new TypeError(`options.prefix must be a string, got ${describe(prefix)}`);
    if (typeof name !== "string" || name === "" || name.length > MAX_ID_LENGTH) {
      throw new TypeError(
        `options.name must be a non-empty string of at most ${MAX_ID_LENGTH} characters, got ${describe(name)}`,
      );
    }
    if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) {
      throw new RangeError(`options.maxAttempts must be a whole number >= 1, got ${describe(maxAttempts)}`);
    }
    const queue = new DurableDelayQueue(storage, prefix, maxAttempts, name, OPEN);
    await queue.#load();
    queue.#meters.on; // observe the gauges from now on, if a MeterProvider is registered
    return queue;
  }

  // ---- producing ---------------------------------------------------------------------------

  /**
   * Adds `value`, due `delayMs` from now; resolves to its id once it is in storage. `id`
   * names it (default: 22 random base64url characters); `ifExists` says what happens when that id is present:
   * "replace" (default), "keep" or "extend".
   */
  async offer(value, delayMs, opts) {
    const deadline = deadlineIn(delayMs, "delayMs", Date.now());
    return (await this.#offer([offerOf(value, "value", opts, "options", deadline, "offer()")]))[0];
  }

  /** Adds `value`, due at `deadline` (epoch ms or a Date); options and result as offer(). */
  async offerAt(value, deadline, opts) {
    const at = deadlineAt(deadline, "deadline");
    return (await this.#offer([offerOf(value, "value", opts, "options", at, "offerAt()")]))[0];
  }

  /**
   * Adds every item of `[{ value, delayMs } | { value, deadline }, with optional id and
   * ifExists]` in one transaction: all or none. Each item is checked before anything is
   * written; they take effect in order (a later item may name an earlier one's id).
   * Resolves to their ids, in order.
   */
  async offerMany(items) {
    const now = Date.now();
    if (isRevoked(items) || !Array.isArray(items)) {
      throw new TypeError(`items must be an array, got ${describe(items)}`);
    }
    const offers = [];
    for (let i = 0; i < items.length; i++) {
      const where = `items[${i}]`;
      const item = items[i];
      if (item === null || typeof item !== "object" || isRevoked(item)) {
        throw new TypeError(`${where} must be an object, got ${describe(item)}`);
      }
      const o = options(item, where, ["value", "delayMs", "deadline", "id", "ifExists"], "offerMany()");
      if ((o.delayMs === undefined) === (o.deadline === undefined)) {
        throw new TypeError(`${where} must have exactly one of delayMs and deadline`);
      }
      const deadline =
        o.delayMs !== undefined
          ? deadlineIn(o.delayMs, `${where}.delayMs`, now)
          : deadlineAt(o.deadline, `${where}.deadline`);
      offers.push(
        offerOf(o.value, `${where}.value`, { id: o.id, ifExists: o.ifExists }, where, deadline, "offerMany()"),
      );
    }
    return this.#offer(offers);
  }

  async #offer(offers) {
    this.#open();
    if (offers.length === 0) return [];
    return this.#exclusive(async () => {
      await this.#commit(this.#planOffers(offers));
      return offers.map((o) => o.id);
    });
  }

  /** The change that `offers`, applied in order, make (see invariant 5). */
  #planOffers(offers) {
    let next = this.#next;
    /** id → the item as the offers so far leave it. */
    const after = new Map();
    for (const o of offers) {
      const present = after.has(o.id) ? after.get(o.id) : (this.#items.get(o.id) ?? this.#dead.get(o.id));
      if (o.ifExists === "keep" && present !== undefined) continue;
      let item;
      if (o.ifExists === "extend" && present !== undefined && present.state === "pending") {
        // The later deadline (moved: behind the items already due then) and the new value.
        const later = o.deadline > present.deadline;
        item = { ...present, value: o.value, deadline: later ? o.deadline : present.deadline };
        if (later) item.seq = next++;
      } else {
        item = { id: o.id, state: "pending", value: o.value, deadline: o.deadline, seq: next++, attempt: 0 };
      }
      item.inOrder = false;
      after.set(o.id, item);
    }
    /** @type {Required<Omit<Change, "deadAdds" | "schedulePuts" | "scheduleDeletes" | "tell">>} */
    const change = { removes: [], adds: [], updates: [], deadRemoves: [], next };
    for (const [id, item] of after) {
      const live = this.#items.get(id);
      const dead = this.#dead.get(id);
      if (live !== undefined && live.seq === item.seq) {
        change.updates.push({ record: live, fields: { value: item.value } }); // extended in place
        continue;
      }
      if (live !== undefined) change.removes.push(live);
      if (dead !== undefined) change.deadRemoves.push(dead);
      change.adds.push(item);
    }
    return change;
  }

  /** Removes a pending item; resolves true if it was pending (not in flight, not dead). */
  async cancel(id) {
    checkId(id, "id");
    this.#open();
    return this.#exclusive(async () => {
      const record = this.#pending(id);
      if (record === undefined || this.#isChain(record)) return false;
      await this.#commit({ removes: [record] });
      return true;
    });
  }

  /**
   * Gives a pending item a new deadline, `delayMs` from this call (behind the items already
   * due then); its value and attempt stay. Resolves true if it was pending.
   */
  async reschedule(id, delayMs) {
    checkId(id, "id");
    const deadline = deadlineIn(delayMs, "delayMs", Date.now());
    this.#open();
    return this.#exclusive(async () => {
      const old = this.#pending(id);
      if (old === undefined || this.#isChain(old)) return false;
      const moved = { ...old, deadline, seq: this.#next, inOrder: false };
      await this.#commit({ removes: [old], adds: [moved], next: this.#next + 1 });
      return true;
    });
  }

  // ---- reading -----------------------------------------------------------------------------

  /** Ms until a pending item's deadline (negative when overdue), or undefined when none is pending under `id`. */
  async delayOf(id) {
    checkId(id, "id");
    this.#open();
    return this.#exclusive(() => {
      const record = this.#pending(id);
      return record === undefined ? undefined : record.deadline - Date.now();
    });
  }

  /** The number of pending items (waiting for their deadline, or due and not yet handed out). */
  async size() {
    this.#open();
    return this.#exclusive(() => this.#order.size);
  }

  /** Counts by state, the head's delay, and this object's delivery figures since open(). */
  async stats() {
    this.#open();
    return this.#exclusive(() => {
      const head = this.#order.head();
      const n = Math.min(this.#counters.delivered, LATENESS_SAMPLES);
      const lateness = this.#lateness.slice(0, n).sort();
      const at = (q) => (n ? lateness[Math.min(n - 1, Math.floor(q * n))] : 0);
      return {
        pending: this.#order.size,
        inFlight: this.#inFlight === null ? 0 : 1,
        dead: this.#dead.size,
        paused: this.#paused,
        headDelay: head === undefined ? undefined : head.deadline - Date.now(),
        ...this.#counters,
        latenessP50: at(0.5),
        latenessP99: at(0.99),
        latenessMax: n ? lateness[n - 1] : 0,
      };
    });
  }

  /** Durable only, read from memory: a copy of the head's value (due or not), or undefined when none is pending. */
  peek() {
    const head = this.#order.head();
    return head === undefined ? undefined : structuredClone(head.value);
  }

  /** Durable only, read from memory: every pending item as { id, value, deadline, attempt } (values copied), head first. */
  toArray() {
    return this.#order.sorted().map(({ id, value, deadline, attempt }) => ({
      id,
      value: structuredClone(value),
      deadline,
      attempt,
    }));
  }

  // ---- consuming ---------------------------------------------------------------------------

  /**
   * Call from the object's `alarm()`, every time: hands each item due now to `handler(value,
   * { id, value, deadline, attempt })`, one at a time in deadline order. An item is done
   * (removed) when the handler returns or resolves; when it throws, the item comes back
   * `retryDelayMs` later (a number, or `(attempt, error) => ms`; default 1000), or goes to
   * the dead letters with the error as its reason if that was its `maxAttempts`-th delivery.
   * Then the alarm is set for the new head. Resolves to the number of deliveries made; rejects
   * only when storage fails (the runtime then retries the alarm). Items that come due meanwhile
   * wait for that next alarm. Overlapping calls run one after another; a handler must not
   * await deliver() or close().
   */
  async deliver(handler, opts) {
    if (typeof handler !== "function") throw new TypeError(`handler must be a function, got ${describe(handler)}`);
    const { retryDelayMs = RETRY_DELAY_MS } = options(opts, "options", ["retryDelayMs"], "deliver()");
    if (typeof retryDelayMs !== "function") checkMs(retryDelayMs, "options.retryDelayMs");
    this.#open();
    const run = this.#delivery.then(() => this.#deliver(handler, retryDelayMs));
    this.#delivery = run.then(noop, noop);
    return run;
  }

  async #deliver(handler, retryDelayMs) {
    // The alarm that called us is spent (storage reports none while its handler runs, and
    // deletes it after): the alarm is written before this returns, whatever memory says.
    await this.#exclusive(() => {
      this.#alarm = UNKNOWN;
      this.#counters.wakes++;
    });
    const now = Date.now();
    let delivered = 0;
    let failed = false;
    let failure;
    try {
      let record = await this.#exclusive(() => this.#handOut(now, null));
      while (record !== undefined) {
        delivered++;
        const value = structuredClone(record.value);
        /** @type {{ id: string, value: any, deadline: number, attempt: number, schedule?: string }} */
        const job = { id: record.id, value, deadline: record.deadline, attempt: record.attempt };
        if (record.schedule !== undefined) {
          // An occurrence: its schedule, and its due time whatever a retry made its deadline.
          job.schedule = record.schedule;
          job.deadline = dueOf(record.id);
        }
        let error = null;
        try {
          await handler(value, job);
        } catch (e) {
          error = e ?? new Error(String(e));
        }
        const done = record;
        record = await this.#exclusive(() => this.#finish(done, error, retryDelayMs, now));
      }
    } catch (e) {
      failed = true;
      failure = e;
      if (this[HEARD]("error")) this[EMIT]("error", { error: e });
    }
    try {
      await this.#exclusive(() => {
        if (delivered === 0 && this.#order.size > 0 && !this.#paused) this.#counters.earlyWakes++;
        return this.#arm();
      });
    } catch (e) {
      if (!failed) throw e;
    }
    if (failed) throw failure;
    return delivered;
  }

  /**
   * Stores the outcome of `record`'s delivery (done, back at its retry deadline, or dead)
   * and hands out the next item due by `now`, in one transaction; resolves to that item, or
   * undefined when none is due.
   */
  async #finish(record, error, retryDelayMs, now) {
    // Unless an offer replaced it while its handler ran: then its outcome changes nothing.
    if (this.#inFlight !== record) return this.#handOut(now, null);
    try {
      /** @type {Change} */
      let outcome;
      const { id, attempt } = record;
      if (error === null) {
        outcome = { removes: [record], tell: [["acked", { id }]] };
      } else if (attempt >= this.#maxAttempts) {
        outcome = this.#burial(record, reasonOf(error));
      } else {
        const delay = retryDelayOf(retryDelayMs, attempt, error);
        const deadline = Math.min(Math.max(Date.now() + delay, EARLIEST_DEADLINE), LATEST_DEADLINE);
        const back = { ...record, state: "pending", deadline, seq: this.#next, inOrder: false, out: false };
        const nacked = { id, attempt, delayMs: deadline - Date.now(), reason: reasonOf(error) };
        outcome = { removes: [record], adds: [back], next: this.#next + 1, tell: [["nacked", nacked]] };
      }
      return await this.#handOut(now, outcome);
    } finally {
      if (this.#inFlight === record) {
        // The outcome is not stored: the item stays as storage has it, pending, this attempt
        // counted, and goes back to its place in the order.
        this.#inFlight = null;
        record.state = "pending";
        this.#restore(record);
      }
    }
  }

  /**
   * Commits `outcome` (the last delivery's, or null) and, in the same transaction, the start
   * of the next delivery: the item due by `now` that comes first once the outcome is in,
   * its attempt raised. Resolves to that item, now in flight, or undefined when none is due.
   * An item whose last allowed delivery never finished goes to the dead letters instead.
   */
  async #handOut(now, outcome) {
    for (;;) {
      const back = outcome?.adds?.[0];
      let head = this.#order.head();
      if (back !== undefined && (head === undefined || back.deadline < head.deadline)) head = back;
      if (this.#paused || head === undefined || head.deadline > now) {
        if (outcome !== null) await this.#commit(outcome, { alarm: false });
        return undefined;
      }
      if (head.attempt >= this.#maxAttempts) {
        if (outcome !== null) {
          await this.#commit(outcome, { alarm: false }); // first, so the two draw different seqs
          outcome = null;
          continue;
        }
        const reason = `its handler did not finish on attempt ${head.attempt} of ${this.#maxAttempts} (the object was reset while it ran)`;
        await this.#commit(this.#burial(head, reason), { alarm: false });
        continue;
      }
      const change = outcome ?? {};
      // Its last delivery began and stored no outcome: the object was reset while it ran.
      const unfinished = head !== back && head.out === true;
      if (head !== back && this.#isChain(head)) {
        // A schedule's pending occurrence: catchUp decides what runs, and the next one is
        // placed in this transaction (js/schedule/durable.js).
        const out = this.#occur(head, change);
        if (out === undefined) {
          await this.#commit(change, { alarm: false });
          outcome = null;
          continue;
        }
        head = out;
      } else if (head === back) {
        back.attempt++; // a new record, stored as it goes out
        back.out = true;
      } else {
        change.updates = [{ record: head, fields: { attempt: head.attempt + 1, out: true } }];
      }
      await this.#commit(change, { alarm: false });
      this.#order.remove(head);
      head.state = "inFlight";
      this.#inFlight = head;
      const c = this.#counters;
      const lateness = Math.max(0, Date.now() - head.deadline);
      this.#lateness[c.delivered % LATENESS_SAMPLES] = lateness;
      c.delivered++;
      if (head.attempt > 1) c.redelivered++;
      const { id, attempt, deadline } = head;
      if (unfinished) this.#tell("redelivered", { id, attempt: attempt - 1 }); // the attempt that never finished
      this.#tell("delivered", { id, attempt, deadline, lateness });
      return head;
    }
  }

  /**
   * Adds to `change` what handing out `record`, its schedule's pending occurrence, does now:
   * the schedule moves on (its next occurrence placed), and the occurrence that runs goes out
   * with its attempt raised: `record` itself, or, for a catch-up "one", a new item for the
   * latest missed occurrence. Returns the record to hand out, or undefined when none runs
   * (catchUp "none").
   * @param {DurableRecord} record
   * @param {Change} change
   */
  #occur(record, change) {
    const s = /** @type {DurableSchedule} */ (this.#schedules.get(/** @type {string} */ (record.schedule)));
    // Whether its latest run waits for a retry (a run lasts until done or dead: overlap).
    const latest = s.last === null ? undefined : this.#items.get(occurrenceId(s.id, s.last));
    const retrying =
      latest !== undefined && latest !== record && latest.state === "pending" && latest.schedule === s.id;
    const { run, schedule } = occurrenceStep(s, Date.now(), retrying);
    let next = change.next ?? this.#next;
    const removes = [...(change.removes ?? [])];
    const adds = [...(change.adds ?? [])];
    const nextId = pendingId(schedule);
    if (nextId !== undefined && !this.#items.has(nextId)) {
      const due = /** @type {number} */ (schedule.due);
      adds.push({
        id: nextId,
        state: "pending",
        value: s.value,
        deadline: due,
        seq: next++,
        attempt: 0,
        schedule: s.id,
      });
    }
    let out;
    if (run === undefined) removes.push(record);
    else if (run === record.deadline) change.updates = [{ record, fields: { attempt: record.attempt + 1, out: true } }];
    else {
      removes.push(record);
      /** @type {DurableRecord} */
      const latest = {
        id: occurrenceId(s.id, run),
        state: "pending",
        value: record.value,
        deadline: run,
        seq: next++,
        attempt: 1,
        out: true,
        schedule: s.id,
      };
      out = latest;
      adds.push(latest);
    }
    Object.assign(change, { removes, adds, next, schedulePuts: [schedule] });
    return run === record.deadline ? record : out;
  }

  /** Whether `record` is its schedule's pending occurrence (which only its schedule moves). */
  #isChain(record) {
    if (record.schedule === undefined) return false;
    const s = this.#schedules.get(record.schedule);
    return s !== undefined && s.due === record.deadline && pendingId(s) === record.id;
  }

  /** The change that moves `record` to the dead letters. */
  #burial(record, reason) {
    const { id, value, deadline, attempt, schedule } = record;
    const dead = { id, state: "dead", value, deadline, attempt, seq: this.#next, reason, diedAt: Date.now(), schedule };
    /** @type {Change} */
    const change = { removes: [record], deadAdds: [dead], next: this.#next + 1, tell: [["dead", { id, reason }]] };
    return change;
  }

  /** Puts `record` back in the order at its (deadline, seq) place. */
  #restore(record) {
    this.#order.add(record);
  }

  /** Dispatches an event and records it in the metrics, when anyone listens or a MeterProvider is registered. */
  #tell(type, detail) {
    if (this[HEARD](type)) this[EMIT](type, detail);
    const meters = this.#meters;
    if (meters.on) meters.record(type, detail);
  }

  // ---- inspection --------------------------------------------------------------------------

  /**
   * What the queue holds under `id`: `{ id, state, value, deadline, attempt }`, with `reason`
   * and `diedAt` for a dead letter; undefined when it holds nothing under it. `state` is
   * "pending", "inFlight" (its handler runs) or "dead". The value is a copy.
   */
  async get(id) {
    checkId(id, "id");
    this.#open();
    return this.#exclusive(() => {
      const record = this.#items.get(id) ?? this.#dead.get(id);
      return record === undefined ? undefined : infoOf(record, record === this.#inFlight ? "inFlight" : record.state);
    });
  }

  /**
   * A page of pending items in deadline order (FIFO among equal deadlines): `{ items, next }`,
   * each item as get() gives it; pass `next` back as `after` for the next page (undefined:
   * none). `limit` 1 to 1000, default 100. O(log n + limit), whatever the page.
   */
  async pending(opts) {
    const { limit = PAGE, after } = options(opts, "options", ["limit", "after"], "pending()");
    checkLimit(limit, "options.limit");
    const from = after === undefined ? null : keyOfCursor(after, "options.after");
    this.#open();
    return this.#exclusive(() => {
      const records = this.#order.after(from?.deadline ?? -Infinity, from?.seq ?? 0, limit + 1);
      const more = records.length > limit;
      if (more) records.length = limit;
      const last = records[records.length - 1];
      return { items: records.map((r) => infoOf(r, "pending")), next: more ? pendingCursor(last) : undefined };
    });
  }

  /**
   * The items handed out whose outcome is not stored yet, as a page `{ items, next }` (a
   * Durable Object delivers one at a time, so at most one). Options as pending().
   */
  async inFlight(opts) {
    const { limit = PAGE, after } = options(opts, "options", ["limit", "after"], "inFlight()");
    checkLimit(limit, "options.limit");
    if (after !== undefined) keyOfCursor(after, "options.after");
    this.#open();
    return this.#exclusive(() => {
      const r = this.#inFlight;
      // One page holds it all: a cursor (from a page that had more) finds nothing after.
      return { items: r !== null && after === undefined ? [infoOf(r, "inFlight")] : [], next: undefined };
    });
  }

  /**
   * Stops deliveries until resume(): deliver() hands nothing out and the alarm is deleted;
   * offers still land. Stored, so it holds across restarts. Resolves true if it was running.
   */
  async pause() {
    this.#open();
    return this.#exclusive(async () => {
      if (this.#paused) return false;
      await this.#storage.transaction(async (txn) => {
        await txn.put(`${this.#prefix}paused`, true);
        await txn.deleteAlarm();
      });
      this.#paused = true;
      this.#alarm = null;
      this.#tell("paused", {});
      return true;
    });
  }

  /** Lets deliveries run again and sets the alarm for the head. Resolves true if it was paused. */
  async resume() {
    this.#open();
    return this.#exclusive(async () => {
      if (!this.#paused) return false;
      let at = this.#order.head()?.deadline ?? Infinity;
      if (this.#inFlight !== null) at = Math.min(at, this.#inFlight.deadline);
      const alarm = at === Infinity ? null : alarmAt(at);
      await this.#storage.transaction(async (txn) => {
        await txn.delete(`${this.#prefix}paused`);
        if (alarm === null) await txn.deleteAlarm();
        else await txn.setAlarm(alarm);
      });
      this.#paused = false;
      this.#alarm = alarm;
      this.#tell("resumed", {});
      return true;
    });
  }

  // ---- schedules (js/schedule/durable.js; docs/schedules.md) -------------------------------

  /**
   * Creates the schedule `id`, or updates it: `{ every }` (ms, a fixed rate) or `{ cron,
   * timezone }`, each occurrence an item with `value`, delivered like any other (`job.schedule`
   * = `id`, `job.deadline` = its due time). Options: `catchUp` ("one", "all", "none"),
   * `overlap`, `start`. The chain goes on when the rule is the same; the schedule and its
   * pending occurrence are stored in one transaction. Resolves with the schedule, as
   * schedules() lists it.
   */
  async schedule(id, rule, value, opts) {
    const spec = scheduleSpec(id, rule, opts);
    const copy = storable(value, "value");
    const cronRule =
      spec.kind === "cron" ? await cronRuleOf(/** @type {string} */ (spec.cron), spec.timezone ?? "UTC") : null;
    this.#open();
    return this.#exclusive(async () => {
      const old = this.#schedules.get(spec.id);
      const present = old === undefined ? undefined : this.#items.get(/** @type {string} */ (pendingId(old)));
      const pending = present !== undefined && this.#isChain(present) ? present : undefined;
      // A schedule whose pending occurrence is gone (an offer replaced it) goes on after it.
      const gone = old !== undefined && pending === undefined ? (old.due ?? undefined) : undefined;
      const { schedule, first } = planSchedule(old, spec, copy, cronRule, Date.now(), gone);
      /** @type {Required<Pick<Change, "removes" | "adds" | "updates" | "next" | "schedulePuts">>} */
      const change = { removes: [], adds: [], updates: [], next: this.#next, schedulePuts: [schedule] };
      if (first === undefined) {
        if (pending !== undefined) change.updates.push({ record: pending, fields: { value: structuredClone(copy) } });
      } else {
        if (pending !== undefined) change.removes.push(pending);
        const nextId = occurrenceId(spec.id, first);
        if (!this.#items.has(nextId))
          change.adds.push({
            id: nextId,
            state: "pending",
            value: structuredClone(copy),
            deadline: first,
            seq: change.next++,
            attempt: 0,
            schedule: spec.id,
          });
      }
      await this.#commit(change);
      return scheduleInfoOf(schedule);
    });
  }

  /** Removes the schedule `id` and its pending occurrence (a run in flight finishes); resolves true if there was one. */
  async unschedule(id) {
    checkScheduleId(id);
    this.#open();
    return this.#exclusive(async () => {
      const s = this.#schedules.get(id);
      if (s === undefined) return false;
      const pending = this.#items.get(/** @type {string} */ (pendingId(s)));
      const removes = pending !== undefined && this.#isChain(pending) ? [pending] : [];
      await this.#commit({ removes, scheduleDeletes: [s] });
      return true;
    });
  }

  /** Every schedule, by id: `{ id, every | cron, timezone, start, catchUp, overlap, value, nextRun, lastRun, runs, skipped }`. */
  async schedules() {
    this.#open();
    return this.#exclusive(() =>
      [...this.#schedules.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(scheduleInfoOf),
    );
  }

  // ---- dead letters ------------------------------------------------------------------------

  /**
   * A page of dead letters in order of death: `{ items: [{ id, state: "dead", value,
   * deadline, attempt, reason, diedAt }], next }`; pass `next` back as `after` for the next
   * page (undefined: none). `limit` 1 to 1000, default 100.
   */
  async deadLetters(opts) {
    const { limit = PAGE, after } = options(opts, "options", ["limit", "after"], "deadLetters()");
    checkLimit(limit, "options.limit");
    const from = after === undefined ? -1 : seqOfCursor(after, "options.after");
    this.#open();
    return this.#exclusive(() => {
      const { records, more } = this.#dead.page(from, limit);
      const items = records.map(({ id, value, deadline, attempt, reason, diedAt }) => ({
        id,
        state: "dead",
        value: structuredClone(value),
        deadline,
        attempt,
        reason,
        diedAt,
      }));
      return { items, next: more ? cursorOf(records[records.length - 1].seq) : undefined };
    });
  }

  /** Puts a dead letter back, due now, its attempts reset; resolves true if it was dead. */
  async retryDead(id) {
    checkId(id, "id");
    this.#open();
    return this.#exclusive(async () => {
      const dead = this.#dead.get(id);
      if (dead === undefined) return false;
      const { value } = dead;
      const item = { id, state: "pending", value, deadline: Date.now(), seq: this.#next, attempt: 0 };
      await this.#commit({ deadRemoves: [dead], adds: [item], next: this.#next + 1 });
      return true;
    });
  }

  /** Removes a dead letter; resolves true if it was dead. */
  async deleteDead(id) {
    checkId(id, "id");
    this.#open();
    return this.#exclusive(async () => {
      const dead = this.#dead.get(id);
      if (dead === undefined) return false;
      await this.#commit({ deadRemoves: [dead] });
      return true;
    });
  }

  /** Removes the dead letters that died at least `olderThan` ms ago (default 0: all); resolves to how many. */
  async purgeDead(opts) {
    const { olderThan = 0 } = options(opts, "options", ["olderThan"], "purgeDead()");
    checkMs(olderThan, "options.olderThan");
    if (olderThan < 0) throw new RangeError(`options.olderThan must be >= 0, got ${olderThan}`);
    this.#open();
    return this.#exclusive(async () => {
      const old = this.#dead.diedBy(Date.now() - olderThan);
      if (old.length > 0) await this.#commit({ deadRemoves: old });
      return old.length;
    });
  }

  // ---- closing -----------------------------------------------------------------------------

  /**
   * Refuses later calls (they reject with ClosedError) and resolves when the calls and
   * deliveries already made have finished. Storage and the alarm stay as they are: a queue
   * opened on the same storage later carries on.
   */
  close() {
    this.#closing ??= this.#delivery.then(() => this.#turn).then(noop);
    this.#meters.close();
    return this.#closing;
  }

  async [Symbol.asyncDispose]() {
    await this.close();
  }

  // ---- the seam to storage -----------------------------------------------------------------

  #open() {
    if (this.#closing !== null) throw new ClosedError("DurableDelayQueue");
  }

  /** The item pending under `id` (not the one in flight), or undefined. */
  #pending(id) {
    const record = this.#items.get(id);
    return record === undefined || record === this.#inFlight ? undefined : record;
  }

  /**
   * Runs `fn` when every earlier call has had its turn (see invariant 3).
   * @template T
   * @param {() => T | PromiseLike<T>} fn
   * @returns {Promise<T>}
   */
  #exclusive(fn) {
    const run = this.#turn.then(fn);
    this.#turn = run.then(noop, noop);
    return run;
  }

  #key(kind, id) {
    return `${this.#prefix}${kind}:${id}`;
  }

  /**
   * One change, all or nothing (invariant 1): items `removes`d from the queue, `adds` put
   * in it (each with a seq below `next`), `updates` of items in place, dead letters
   * `deadRemoves`d and `deadAdds` made. `alarm: false` leaves the alarm to the caller
   * (deliver(), which writes it when it ends).
   * @param {Change} change
   * @param {{ alarm?: boolean }} [opts]
   */
  async #commit(
    {
      removes = [],
      adds = [],
      updates = [],
      deadRemoves = [],
      deadAdds = [],
      next,
      schedulePuts = [],
      scheduleDeletes = [],
      tell = [],
    },
    { alarm = true } = {},
  ) {
    const headAt = alarm ? this.#headAfter(removes, adds) : UNKNOWN;
    const newAlarm = headAt === UNKNOWN ? UNKNOWN : alarmAt(headAt);
    const moveAlarm = newAlarm !== UNKNOWN && newAlarm !== this.#alarm;
    const puts = new Map();
    for (const r of adds) puts.set(this.#key("item", r.id), storedItem(r));
    for (const { record, fields } of updates)
      puts.set(this.#key("item", record.id), storedItem({ ...record, ...fields }));
    for (const d of deadAdds) puts.set(this.#key("dead", d.id), storedDead(d));
    if (next !== undefined && next !== this.#next) puts.set(`${this.#prefix}next`, next);
    for (const sc of schedulePuts) puts.set(this.#key("sched", sc.id), storedSchedule(sc));
    const deletes = [];
    for (const sc of scheduleDeletes) deletes.push(this.#key("sched", sc.id));
    for (const r of removes) if (!puts.has(this.#key("item", r.id))) deletes.push(this.#key("item", r.id));
    for (const d of deadRemoves) if (!puts.has(this.#key("dead", d.id))) deletes.push(this.#key("dead", d.id));
    const entries = [...puts];
    await this.#storage.transaction(async (txn) => {
      for (let i = 0; i < entries.length; i += KEYS_PER_CALL) {
        await txn.put(Object.fromEntries(entries.slice(i, i + KEYS_PER_CALL)));
      }
      for (let i = 0; i < deletes.length; i += KEYS_PER_CALL) {
        const keys = deletes.slice(i, i + KEYS_PER_CALL);
        await txn.delete(keys.length === 1 ? keys[0] : keys);
      }
      if (moveAlarm) await (newAlarm === null ? txn.deleteAlarm() : txn.setAlarm(newAlarm));
    });
    // Committed: memory follows.
    if (moveAlarm) this.#alarm = newAlarm;
    for (const r of removes) {
      this.#order.remove(r);
      if (this.#items.get(r.id) === r) this.#items.delete(r.id);
      if (this.#inFlight === r) this.#inFlight = null;
    }
    for (const { record, fields } of updates) Object.assign(record, fields);
    for (const r of [...adds].sort(bySeq)) {
      this.#order.add(r);
      this.#items.set(r.id, r);
    }
    for (const d of deadRemoves) this.#dead.remove(d);
    for (const d of deadAdds) this.#dead.add(d);
    if (next !== undefined) this.#next = next;
    for (const sc of scheduleDeletes) this.#schedules.delete(sc.id);
    for (const sc of schedulePuts) this.#schedules.set(sc.id, sc);
    for (const [type, detail] of tell) this.#tell(type, detail);
    if (alarm && headAt === UNKNOWN) {
      try {
        await this.#arm();
      } catch {
        // The change has happened; the alarm stays early (invariant 2) and #arm() left
        // #alarm unknown, so the next call or deliver() writes it.
      }
    }
  }

  /**
   * The earliest deadline storage holds once `removes` have left and `adds` have come (null:
   * none), when that can be told without changing memory; UNKNOWN when the head leaves and
   * nothing offered is as early, since the order knows only its head.
   */
  #headAfter(removes, adds) {
    if (this.#paused) return null;
    let first = Infinity;
    for (const a of adds) first = Math.min(first, a.deadline);
    const leaving = removes.filter((r) => r.inOrder === true);
    const head = this.#order.head();
    let at;
    if (head === undefined || !leaving.includes(head)) at = Math.min(head?.deadline ?? Infinity, first);
    else if (leaving.length === this.#order.size || first <= head.deadline) at = first;
    else return UNKNOWN;
    const flying = this.#inFlight;
    if (flying !== null && !removes.includes(flying)) at = Math.min(at, flying.deadline);
    return at === Infinity ? null : at;
  }

  /** Writes the alarm for the earliest deadline as memory has it, unless storage holds it already. */
  async #arm() {
    let at = this.#order.head()?.deadline ?? Infinity;
    if (this.#inFlight !== null) at = Math.min(at, this.#inFlight.deadline);
    if (this.#paused) at = Infinity;
    const alarm = at === Infinity ? null : alarmAt(at);
    if (alarm === this.#alarm) return;
    this.#alarm = UNKNOWN; // until the write has succeeded
    if (alarm === null) await this.#storage.deleteAlarm();
    else await this.#storage.setAlarm(alarm);
    this.#alarm = alarm;
  }

  async #load() {
    const storage = this.#storage;
    const prefixes = { item: `${this.#prefix}item:`, dead: `${this.#prefix}dead:`, sched: `${this.#prefix}sched:` };
    const nextKey = `${this.#prefix}next`;
    const [items, dead, next, paused, alarm, schedules] = await Promise.all([
      storage.list({ prefix: prefixes.item }),
      storage.list({ prefix: prefixes.dead }),
      storage.get(nextKey),
      storage.get(`${this.#prefix}paused`),
      storage.getAlarm(),
      storage.list({ prefix: prefixes.sched }),
    ]);
    this.#paused = paused === true;
    /** @type {(key: string, what: string) => never} */
    const refuse = (key, what) => {
      throw new TypeError(`DurableDelayQueue.open(): storage key ${JSON.stringify(key)} does not hold ${what}`);
    };
    /** @type {DurableRecord[]} */
    const records = [];
    let max = -1;
    for (const [key, r] of items) {
      const record = recordOf(key.slice(prefixes.item.length), r);
      if (record === null) refuse(key, "a tarry item");
      records.push(record);
      max = Math.max(max, record.seq);
    }
    /** @type {DurableRecord[]} */
    const letters = [];
    for (const [key, r] of dead) {
      const record = recordOf(key.slice(prefixes.dead.length), r);
      if (record === null || typeof r.reason !== "string" || !Number.isFinite(r.diedAt))
        refuse(key, "a tarry dead letter");
      Object.assign(record, { state: "dead", reason: r.reason, diedAt: r.diedAt });
      letters.push(record);
      max = Math.max(max, record.seq);
    }
    if (next !== undefined && !(Number.isSafeInteger(next) && next >= 0)) refuse(nextKey, "a tarry seq");
    for (const [key, r] of schedules) {
      const id = key.slice(prefixes.sched.length);
      const s = isScheduleId(id) ? await scheduleOf(id, r) : null;
      if (s === null) refuse(key, "a tarry schedule");
      this.#schedules.set(id, s);
    }
    // Added in (deadline, seq) order, the order's FIFO among ties is the order they had.
    records.sort((a, b) => a.deadline - b.deadline || a.seq - b.seq);
    for (const r of records) {
      this.#order.add(r);
      this.#items.set(r.id, r);
    }
    for (const d of letters.sort(bySeq)) this.#dead.add(d);
    this.#next = Math.max(next ?? 0, max + 1);
    this.#alarm = alarm ?? null;
    await this.#arm();
    await this.#heal();
  }

  /**
   * A schedule whose pending occurrence is missing (an offer replaced it under its id) gets
   * its next one again: the first after now and after its latest run.
   */
  async #heal() {
    /** @type {Required<Pick<Change, "adds" | "next" | "schedulePuts">>} */
    const change = { adds: [], next: this.#next, schedulePuts: [] };
    for (const s of this.#schedules.values()) {
      const id = pendingId(s);
      if (id === undefined || this.#items.has(id)) continue;
      const from = Math.max(Date.now(), s.last === null ? Number.NEGATIVE_INFINITY : s.last + 1);
      const due = s.rule.next(Math.ceil(from) - 1) ?? null;
      const schedule = { ...s, due };
      change.schedulePuts.push(schedule);
      const nextId = pendingId(schedule);
      if (due !== null && nextId !== undefined && !this.#items.has(nextId))
        change.adds.push({
          id: nextId,
          state: "pending",
          value: structuredClone(s.value),
          deadline: due,
          seq: change.next++,
          attempt: 0,
          schedule: s.id,
        });
    }
    if (change.schedulePuts.length > 0) await this.#commit(change);
  }
}

const OPEN = Symbol("DurableDelayQueue.open");

function noop() {}

const bySeq = (a, b) => a.seq - b.seq;

/** What storage holds for an item (`schedule`: for an occurrence of one, its id; `out`: while a delivery of it runs). */
/** @param {DurableRecord} record */
function storedItem({ value, deadline, seq, attempt, schedule, out }) {
  /** @type {Record<string, unknown>} */
  const stored = { value, deadline, seq, attempt };
  if (schedule !== undefined) stored.schedule = schedule;
  if (out === true) stored.out = true;
  return stored;
}

/** @param {DurableRecord} record a dead letter (reason and diedAt set) */
function storedDead({ value, deadline, seq, attempt, reason, diedAt, schedule }) {
  const dead = { value, deadline, seq, attempt, reason, diedAt };
  return schedule === undefined ? dead : { ...dead, schedule };
}

/** The record stored under `id` (an item's fields), or null when it is not one of ours. */
function recordOf(id, r) {
  if (!isId(id) || r === null || typeof r !== "object" || !("value" in r) || r.value === undefined) return null;
  const attempt = r.attempt ?? 0; // stored before attempts were counted
  if (!Number.isFinite(r.deadline) || !Number.isSafeInteger(r.seq) || r.seq < 0) return null;
  if (!Number.isSafeInteger(attempt) || attempt < 0) return null;
  if (r.schedule !== undefined && !isScheduleId(r.schedule)) return null;
  /** @type {DurableRecord} */
  const record = {
    id,
    state: "pending",
    value: r.value,
    deadline: r.deadline,
    seq: r.seq,
    attempt,
    inOrder: false,
    out: r.out === true,
  };
  if (r.schedule !== undefined) record.schedule = r.schedule;
  return record;
}

function isScheduleId(id) {
  try {
    checkScheduleId(id);
    return true;
  } catch {
    return false;
  }
}

/** The alarm time for a deadline: whole ms, rounded up so it never fires early, and at least 1 (workerd refuses <= 0; any past time fires at once). */
function alarmAt(deadline) {
  return deadline === null ? null : Math.max(1, Math.ceil(deadline));
}

// ---- Arguments ----

/** One checked offer: { id, ifExists, value (the copy kept), deadline }. */
function offerOf(value, valueName, opts, optsName, deadline, of) {
  const o = options(opts, optsName, ["id", "ifExists"], of);
  const { id = newId() } = o;
  checkId(id, `${optsName}.id`);
  const ifExists = checkIfExists(o.ifExists, `${optsName}.ifExists`);
  return { id, ifExists, value: storable(value, valueName), deadline };
}

function isId(id) {
  return typeof id === "string" && id !== "" && id.length <= MAX_ID_LENGTH && id.isWellFormed();
}

/** The copy of `value` the queue keeps: what storage would store (structured clone). */
function storable(value, name) {
  if (value === undefined) {
    throw new TypeError(`${name} must not be undefined (null is a value; undefined is what means "none")`);
  }
  try {
    return structuredClone(value);
  } catch (e) {
    const part = refusedPart(value, new Set());
    throw new TypeError(
      `${name}${part} cannot be stored in a Durable Object (structured clone refuses it): ${e?.message ?? e}`,
      { cause: e },
    );
  }
}

/**
 * The path (".a[2]") inside `x` of the first part structured clone refuses, "" when that is
 * `x` itself. Walks objects, arrays, Maps and Sets; reads each property once. Runs only after
 * a clone failed.
 */
function refusedPart(x, seen) {
  if (typeof x !== "object" || x === null || isRevoked(x) || seen.has(x)) return "";
  seen.add(x);
  let parts;
  try {
    if (x instanceof Map) parts = [...x].map(([k, v], i) => [`[entry ${i}]`, [k, v]]);
    else if (x instanceof Set) parts = [...x].map((v, i) => [`[entry ${i}]`, v]);
    else if (Array.isArray(x)) parts = Object.keys(x).map((k) => [`[${k}]`, () => x[k]]);
    else parts = Object.keys(x).map((k) => [propertyPath(k), () => x[k]]);
  } catch {
    return "";
  }
  for (const [path, part] of parts) {
    let v = part;
    if (typeof part === "function") {
      try {
        v = part();
      } catch {
        return `${path} (reading it throws)`;
      }
    }
    try {
      structuredClone(v);
    } catch {
      return path + refusedPart(v, seen);
    }
  }
  return "";
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const propertyPath = (key) => (IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`);

/** `delayMs` from `now`, as an epoch-ms deadline an alarm can be set for. */
function deadlineIn(delayMs, name, now) {
  checkMs(delayMs, name);
  const deadline = now + delayMs;
  if (deadline > LATEST_DEADLINE) {
    throw new RangeError(`${name} must put the deadline no later than ${LATEST}, got ${delayMs}`);
  }
  if (deadline < EARLIEST_DEADLINE)
    throw new RangeError(`${name} must put the deadline within a Date's range, got ${delayMs}`);
  return deadline;
}

/** An epoch-ms number or a Date as an epoch-ms deadline an alarm can be set for; errors name `name`. */
function deadlineAt(deadline, name) {
  let at;
  try {
    at = epochOf(deadline);
  } catch (e) {
    throw new e.constructor(e.message.replace(/^deadline\b/, name));
  }
  if (at > LATEST_DEADLINE) throw new RangeError(`${name} must be no later than ${LATEST}, got ${at}`);
  if (at < EARLIEST_DEADLINE) throw new RangeError(`${name} must be within a Date's range, got ${at}`);
  return at;
}

function checkLimit(limit, name) {
  if (typeof limit !== "number") throw new TypeError(`${name} must be a number, got ${describe(limit)}`);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new RangeError(`${name} must be a whole number from 1 to ${MAX_PAGE}, got ${limit}`);
  }
}

/** What get() and the pages show of a record. */
function infoOf(r, state) {
  const info = { id: r.id, state, value: structuredClone(r.value), deadline: r.deadline, attempt: r.attempt };
  if (state === "dead") Object.assign(info, { reason: r.reason, diedAt: r.diedAt });
  return info;
}

/** A pending page's cursor: opaque to callers; here, the last item's seq and deadline. */
function pendingCursor(r) {
  return `p${r.seq.toString(36)}_${r.deadline}`;
}

function keyOfCursor(cursor, name) {
  if (typeof cursor !== "string") throw new TypeError(`${name} must be a cursor (a string), got ${describe(cursor)}`);
  const m = /^p([0-9a-z]{1,11})_(-?[0-9][0-9.e+-]*)$/.exec(cursor);
  const seq = m === null ? Number.NaN : Number.parseInt(m[1], 36);
  const deadline = m === null ? Number.NaN : Number(m[2]);
  if (!Number.isSafeInteger(seq) || !Number.isFinite(deadline)) {
    throw new RangeError(`${name} must be a cursor that pending() returned as next, got ${describe(cursor)}`);
  }
  return { seq, deadline };
}

/** A page cursor: opaque to callers; here, the seq of the last item on the page. */
function cursorOf(seq) {
  return `d${seq.toString(36)}`;
}

function seqOfCursor(cursor, name) {
  if (typeof cursor !== "string") throw new TypeError(`${name} must be a cursor (a string), got ${describe(cursor)}`);
  if (!/^d[0-9a-z]{1,11}$/.test(cursor)) {
    throw new RangeError(`${name} must be a cursor that deadLetters() returned as next, got ${describe(cursor)}`);
  }
  return Number.parseInt(cursor.slice(1), 36);
}

/** The wait before a retry: `retryDelayMs` or what it returns for (attempt, error); 0 for what is not a finite number. */
function retryDelayOf(retryDelayMs, attempt, error) {
  const ms = typeof retryDelayMs === "function" ? Number(retryDelayMs(attempt, error)) : retryDelayMs;
  return Number.isFinite(ms) ? ms : 0;
}

/** What a dead letter keeps of the error its handler threw: the stack or message, as on Redis. */
function reasonOf(error) {
  const why = error instanceof Error ? error.stack || error.message : String(error);
  return why.slice(0, REASON_LENGTH);
}
