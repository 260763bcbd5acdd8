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
// 3. One change at a time: calls queue for their turn (`exclusive()`), so no call computes its
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
//
// The class is the public face: each method hands the queue's Store (./store.js: its memory
// and the seam to storage) to the module of its role: ./producer.js (offers, cancel,
// reschedule), ./consumer.js (deliver), ./inspection.js (reads and pages), ./pause.js,
// ./schedules.js, ./dead-letters.js, and ./load.js (open()).

import { describe, isRevoked, MAX_ID_LENGTH, options } from "../engine/arguments.js";
import { Emitter } from "../engine/events.js";
import * as consumer from "./consumer.js";
import * as deadLetters from "./dead-letters.js";
import * as inspection from "./inspection.js";
import { load } from "./load.js";
import * as pause from "./pause.js";
import * as producer from "./producer.js";
import * as schedules from "./schedules.js";
import { noop, Store } from "./store.js";

/** The contract's default, as on Redis: deliveries before the dead letters. */
const MAX_ATTEMPTS = 5;

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
  /** Its memory and the seam to storage, which the role modules share. @type {Store} */
  #store;

  /** Use `await DurableDelayQueue.open(storage)`. */
  constructor(storage, prefix, maxAttempts, name, token) {
    super();
    if (token !== OPEN) throw new TypeError("use `await DurableDelayQueue.open(storage)`");
    this.#store = new Store(this, storage, prefix, maxAttempts, name);
  }

  /** The queue's name, as `open()` was given it: what metrics and the dashboard call it. */
  get name() {
    return this.#store.name;
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
    await load(queue.#store);
    queue.#store.meters.on; // observe the gauges from now on, if a MeterProvider is registered
    return queue;
  }

  // ---- producing (./producer.js) -------------------------------------------------------------

  offer(value, delayMs, opts) {
    return producer.offer(this.#store, value, delayMs, opts);
  }

  offerAt(value, deadline, opts) {
    return producer.offerAt(this.#store, value, deadline, opts);
  }

  offerMany(items) {
    return producer.offerMany(this.#store, items);
  }

  cancel(id) {
    return producer.cancel(this.#store, id);
  }

  reschedule(id, delayMs) {
    return producer.reschedule(this.#store, id, delayMs);
  }

  // ---- reading and inspection (./inspection.js) ----------------------------------------------

  delayOf(id) {
    return inspection.delayOf(this.#store, id);
  }

  size() {
    return inspection.size(this.#store);
  }

  stats() {
    return inspection.stats(this.#store);
  }

  peek() {
    return inspection.peek(this.#store);
  }

  toArray() {
    return inspection.toArray(this.#store);
  }

  get(id) {
    return inspection.get(this.#store, id);
  }

  pending(opts) {
    return inspection.pending(this.#store, opts);
  }

  inFlight(opts) {
    return inspection.inFlight(this.#store, opts);
  }

  // ---- consuming (./consumer.js) -------------------------------------------------------------

  deliver(handler, opts) {
    return consumer.deliver(this.#store, handler, opts);
  }

  // ---- pause and resume (./pause.js) ---------------------------------------------------------

  pause() {
    return pause.pause(this.#store);
  }

  resume() {
    return pause.resume(this.#store);
  }

  // ---- schedules (./schedules.js) ------------------------------------------------------------

  schedule(id, rule, value, opts) {
    return schedules.schedule(this.#store, id, rule, value, opts);
  }

  unschedule(id) {
    return schedules.unschedule(this.#store, id);
  }

  /** Pauses the schedule `id` (./schedules.js pauseSchedule). */
  pauseSchedule(id) {
    return schedules.pauseSchedule(this.#store, id);
  }

  /** Resumes the schedule `id` (./schedules.js resumeSchedule). */
  resumeSchedule(id) {
    return schedules.resumeSchedule(this.#store, id);
  }

  /** Runs the schedule `id` once now (./schedules.js trigger). */
  trigger(id) {
    return schedules.trigger(this.#store, id);
  }

  /** The next `n` occurrences of the schedule `id` (./schedules.js nextRuns). */
  nextRuns(id, n) {
    return schedules.nextRuns(this.#store, id, n);
  }

  schedules() {
    return schedules.schedules(this.#store);
  }

  // ---- dead letters (./dead-letters.js) ------------------------------------------------------

  deadLetters(opts) {
    return deadLetters.deadLetters(this.#store, opts);
  }

  retryDead(id) {
    return deadLetters.retryDead(this.#store, id);
  }

  deleteDead(id) {
    return deadLetters.deleteDead(this.#store, id);
  }

  purgeDead(opts) {
    return deadLetters.purgeDead(this.#store, opts);
  }

  // ---- closing -------------------------------------------------------------------------------

  /**
   * Refuses later calls (they reject with ClosedError) and resolves when the calls and
   * deliveries already made have finished. Storage and the alarm stay as they are: a queue
   * opened on the same storage later carries on.
   */
  close() {
    const s = this.#store;
    s.closing ??= s.delivery.then(() => s.turn).then(noop);
    s.meters.close();
    return s.closing;
  }

  async [Symbol.asyncDispose]() {
    await this.close();
  }
}

const OPEN = Symbol("DurableDelayQueue.open");
