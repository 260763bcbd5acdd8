// DurableDelayQueue: a delay queue for a Cloudflare Durable Object, whose one timer is the
// object's alarm and whose items live in the object's storage.
//
// The rule is the same as for the host timer of DelayQueue: one alarm, set for the head's
// deadline, re-armed when the head changes, deleted when the queue is empty. The alarm hands
// the items that are due to deliver()'s callback in order. Memory holds what storage holds,
// so reads (size, peek, deadlineOf, toArray) cost no storage call.
//
// Invariants (tests/js/durable-sweep.test.mjs fails every storage call of every operation and
// checks them):
// 1. Memory never runs ahead of storage. A call computes its writes from memory, commits them
//    in one `storage.transaction()` (the item, the id counter and, when it moves, the alarm:
//    all or nothing; a plain sequence of writes is not atomic when one of them is refused),
//    and only then changes memory. A call that rejects has changed nothing, in memory or
//    storage, and a retry cannot store an item twice.
// 2. Items pending ⇒ the alarm is set, never later than the head's deadline (or, after the
//    head's callback failed, than its retry time). After each call that succeeds it is exactly
//    that (rounded up to whole ms; an overdue head's at once), and none for an empty queue.
//    When a call removes or postpones the head, the new head is known only once memory has
//    changed, so the alarm follows in a second write; should that write fail, the call has
//    still happened and the alarm stays early, which costs one wake (deliver() finds nothing
//    due and sets it again).
// 3. One change at a time: calls queue for their turn (`#exclusive`), so no call computes its
//    writes from a state another is about to change. deliver() calls run one after another,
//    and a callback runs outside the turn, so it may call offer(), cancel() or reschedule().
// 4. Nothing early, nothing twice: deliver() hands out items whose deadline has passed by
//    Date.now() at its start, one at a time in order, and removes each (one transaction) once
//    its callback has returned. If the callback throws, the item and those behind it stay, the
//    alarm is set for a retry with backoff (so a handler that swallows the error strands
//    nothing), and deliver() rejects: delivery is at least once, and only a callback failure,
//    or a failed removal after a successful callback, delivers an item again.
// 5. Values are copied in (structured clone, as storage copies them) and out (peek, toArray,
//    the callback's argument), so no caller can change what memory holds but storage does not.
// 6. Ids are never reused: the id counter is written with each item.
//
// What storage guarantees and this relies on: a transaction commits all its writes or none;
// while storage calls are awaited the runtime delivers no other event to the object (input
// gate); a write that fails after it was accepted resets the object (output gate), so memory
// never outlives a write that did not happen; hence no sync() is needed. The alarm runs at
// least once and is retried when its handler throws; while a handler runs, getAlarm() reports
// none and the alarm is deleted when it returns unless set meanwhile, so deliver() always sets
// it before it returns.
//
// Storage layout, under `prefix` (default "tarry:"): `item:<id>` → { value, deadline, seq }
// (deadline in epoch ms; seq orders equal deadlines) and `next` → the next id/seq.

import { checkMs, checkValue, describe, epochOf, isRevoked, options } from "./arguments.js";
import { Slots } from "./slots.js";
import { Deadlines } from "./wasm.js";

// ---- The seam to the wasm binding: every use of it is in this class. ----

/**
 * The items in deadline order, FIFO among equal deadlines: the binding's `Deadlines` as an
 * index only. Nothing ever waits on it, so no timer is armed for it; deadlines go in as epoch
 * ms, which it only compares.
 */
class Order {
  #deadlines = new Deadlines(Infinity);
  /** The record of each live item, by its slot. */
  #records = new Slots();

  /** Adds `record` behind every item due no later; returns its handle for remove(). */
  add(record) {
    const handle = this.#deadlines.offer(record.deadline);
    // Refused only when full or not finite; this index is unbounded and deadlines are checked.
    if (handle < 0) throw new RangeError(`the order refused deadline ${record.deadline}`);
    this.#records.put(handle, record);
    return handle;
  }

  remove(handle) {
    if (this.#deadlines.cancel(handle)) this.#records.forget(handle);
  }

  /** The record with the earliest deadline, or undefined. */
  head() {
    const slot = this.#deadlines.head();
    return slot < 0 ? undefined : this.#records.get(slot);
  }

  /** Every record, head first. */
  sorted() {
    return Array.from(this.#deadlines.sortedSlots(), (slot) => this.#records.get(slot));
  }

  get size() {
    return this.#deadlines.size;
  }
}

// ---- Policy ----

/** workerd refuses alarms after 2189 ("This API doesn't support dates after 2189"). */
const LATEST_DEADLINE = Date.UTC(2189, 0, 1);
const LATEST = new Date(LATEST_DEADLINE).toISOString();
/** Retries after a failing callback: the runtime's own first delay, doubling up to this. */
const RETRY_FIRST_MS = 2000;
const RETRY_MAX_MS = 5 * 60_000;

/** @typedef {{ id: number, value: any, deadline: number, seq: number, handle?: number }} DurableRecord */

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
 *     await this.queue.deliver((reminder) => console.log("due:", reminder));
 *   }
 * }
 */
export class DurableDelayQueue {
  #storage;
  #prefix;
  #order = new Order();
  /** id → { id, value, deadline, seq, handle } of each item. @type {Map<number, DurableRecord>} */
  #items = new Map();
  #next = 0;
  /** The alarm storage holds (epoch ms, or null for none), as far as this queue knows. @type {number | null | undefined} */
  #alarm = UNKNOWN;
  /** After a callback failed: { record, failures, at }, the earliest time to try it again. @type {any} */
  #retry = null;
  /** The tail of the calls waiting for their turn to change the queue. */
  #turn = Promise.resolve();
  /** The tail of the deliver() calls. */
  #delivery = Promise.resolve();

  /** Use `await DurableDelayQueue.open(storage)`. */
  constructor(storage, prefix, token) {
    if (token !== OPEN) throw new TypeError("use `await DurableDelayQueue.open(storage)`");
    this.#storage = storage;
    this.#prefix = prefix;
  }

  /**
   * Reads the queue back from a Durable Object's storage (`ctx.storage`) and sets the alarm
   * for its head. Call it in `blockConcurrencyWhile` in the object's constructor. The queue
   * owns the object's alarm: one queue per object.
   * @param {DurableObjectStorage} storage
   * @param {{prefix?: string}} [opts] keys used: `${prefix}item:<id>` and `${prefix}next`.
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
    const { prefix = "tarry:" } = options(opts, "options");
    if (typeof prefix !== "string") throw new TypeError(`prefix must be a string, got ${describe(prefix)}`);
    const queue = new DurableDelayQueue(storage, prefix, OPEN);
    await queue.#load();
    return queue;
  }

  /** Items in the queue, due or not. */
  get size() {
    return this.#order.size;
  }

  /** Adds `value`, due `delayMs` from now; resolves to its id once it is in storage. */
  async offer(value, delayMs) {
    const copy = storable(value);
    const deadline = deadlineIn(delayMs);
    return this.#exclusive(() => this.#add(copy, deadline));
  }

  /** Adds `value`, due at `deadline` (epoch ms or a Date); resolves to its id once stored. */
  async offerAt(value, deadline) {
    const copy = storable(value);
    const at = epochOf(deadline);
    if (at > LATEST_DEADLINE) throw new RangeError(`deadline must be no later than ${LATEST}, got ${at}`);
    return this.#exclusive(() => this.#add(copy, at));
  }

  /** Removes an item; resolves to its value, or undefined when the id names none. */
  async cancel(id) {
    checkId(id);
    return this.#exclusive(async () => {
      const record = this.#items.get(id);
      if (record === undefined) return undefined;
      await this.#change({ remove: record });
      return record.value; // memory no longer holds it: the caller may have it
    });
  }

  /** Moves an item to `delayMs` from now (behind items already due then); false when the id names none. */
  async reschedule(id, delayMs) {
    checkId(id);
    const deadline = deadlineIn(delayMs);
    return this.#exclusive(async () => {
      const old = this.#items.get(id);
      if (old === undefined) return false;
      // A new seq puts it behind the items already due then, as the core does; stored with
      // it, the order is the same after a restart.
      await this.#change({ remove: old, add: { id, value: old.value, deadline, seq: this.#next } });
      return true;
    });
  }

  /** A copy of the head's value (due or not), or undefined when empty. */
  peek() {
    const head = this.#order.head();
    return head === undefined ? undefined : structuredClone(head.value);
  }

  /** The epoch-ms deadline of an item, or undefined when the id names none. */
  deadlineOf(id) {
    checkId(id);
    return this.#items.get(id)?.deadline;
  }

  /** Every item as { id, value, deadline } (values copied), in deadline order, FIFO among ties. */
  toArray() {
    return this.#order.sorted().map(({ id, value, deadline }) => ({ id, value: structuredClone(value), deadline }));
  }

  /**
   * Call from the object's `alarm()`, every time: hands each item due now to `callback(value,
   * { id, deadline })`, one at a time in deadline order, removing each from storage once its
   * callback has returned or resolved; then sets the alarm for the new head. Resolves to the
   * number delivered. Items that come due meanwhile wait for that next alarm. If a callback
   * throws, deliver() sets the alarm for a retry (after 2 s, doubling up to 5 min) and
   * rejects with its error; the item is delivered again then (at least once). Overlapping
   * calls run one after another; a callback must not await deliver() itself.
   */
  async deliver(callback) {
    if (typeof callback !== "function") throw new TypeError(`callback must be a function, got ${describe(callback)}`);
    const run = this.#delivery.then(() => this.#deliver(callback));
    this.#delivery = run.then(noop, noop);
    return run;
  }

  async #deliver(callback) {
    // The alarm that called us is spent (storage reports none while its handler runs, and
    // deletes it after): the alarm is written before this returns, whatever memory says.
    await this.#exclusive(() => {
      this.#alarm = UNKNOWN;
    });
    const now = Date.now();
    let delivered = 0;
    for (;;) {
      const record = await this.#exclusive(() => this.#dueHead(now));
      if (record === undefined) break;
      try {
        await callback(structuredClone(record.value), { id: record.id, deadline: record.deadline });
      } catch (error) {
        await this.#exclusive(() => this.#backOff(record));
        throw error;
      }
      delivered++;
      await this.#exclusive(async () => {
        if (this.#retry?.record === record) this.#retry = null;
        // The callback may have cancelled or rescheduled it; only the same item is removed.
        if (this.#items.get(record.id) === record) await this.#change({ remove: record }, { rearm: false });
      });
    }
    await this.#exclusive(() => this.#arm());
    return delivered;
  }

  /** The head, if due by `now` and not waiting for a retry. */
  #dueHead(now) {
    const head = this.#order.head();
    if (head === undefined || head.deadline > now) return undefined;
    if (this.#retry?.record === head && now < this.#retry.at) return undefined;
    return head;
  }

  /** After `record`'s callback failed: when to try it again, and the alarm for the head. */
  async #backOff(record) {
    // Unless the callback cancelled or moved it before failing.
    if (this.#items.get(record.id) === record) {
      const failures = this.#retry?.record === record ? this.#retry.failures + 1 : 1;
      const wait = Math.min(RETRY_FIRST_MS * 2 ** (failures - 1), RETRY_MAX_MS);
      this.#retry = { record, failures, at: Date.now() + wait };
    }
    try {
      await this.#arm();
    } catch {
      // deliver() rejects with the callback's error; the runtime retries the failed alarm.
    }
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

  #key(id) {
    return `${this.#prefix}item:${id}`;
  }

  async #add(value, deadline) {
    const id = this.#next;
    await this.#change({ add: { id, value, deadline, seq: id } });
    return id;
  }

  /**
   * One change, all or nothing (invariant 1): `remove` a record, `add` one, or both (a
   * reschedule). `rearm: false` leaves a head that moved later to the caller (deliver()).
   */
  /** @param {{ remove?: any, add?: DurableRecord }} change @param {{ rearm?: boolean }} [opts] */
  async #change({ remove, add }, { rearm = true } = {}) {
    const head = this.#headAfter(remove, add);
    const alarm = head === UNKNOWN ? UNKNOWN : this.#alarmFor(head);
    const moveAlarm = alarm !== UNKNOWN && alarm !== this.#alarm;
    await this.#storage.transaction(async (txn) => {
      if (add) {
        await txn.put({ [this.#key(add.id)]: stored(add), [`${this.#prefix}next`]: add.seq + 1 });
      } else {
        await txn.delete(this.#key(remove.id));
      }
      if (moveAlarm) await (alarm === null ? txn.deleteAlarm() : txn.setAlarm(alarm));
    });
    if (moveAlarm) this.#alarm = alarm;
    if (remove) {
      this.#order.remove(remove.handle);
      this.#items.delete(remove.id);
    }
    if (add) {
      add.handle = this.#order.add(add);
      this.#items.set(add.id, add);
      this.#next = add.seq + 1;
    }
    if (head === UNKNOWN && rearm) {
      try {
        await this.#arm();
      } catch {
        // The change has happened; the alarm stays early (invariant 2) and #arm() left
        // #alarm unknown, so the next call or deliver() writes it.
      }
    }
  }

  /**
   * The head once `remove` has left and `add` has come (null: empty), when that can be told
   * without changing memory; UNKNOWN when the head leaves or moves later, since the order
   * knows only its head.
   */
  #headAfter(remove, add) {
    const head = this.#order.head() ?? null;
    if (remove !== head) {
      return add && (head === null || add.deadline < head.deadline) ? add : head;
    }
    if (this.#order.size === 1) return add ?? null;
    return add && add.deadline < head.deadline ? add : UNKNOWN;
  }

  /** The alarm for `head` (null: none): whole ms, rounded up so it never fires early, and
   * at least 1 (workerd refuses <= 0; any past time fires at once); later while it waits for
   * a retry. */
  #alarmFor(head) {
    if (head === null) return null;
    const due = Math.max(1, Math.ceil(head.deadline));
    return this.#retry?.record === head ? Math.max(due, Math.ceil(this.#retry.at)) : due;
  }

  /** Writes the alarm for the head as memory has it, unless storage holds it already. */
  async #arm() {
    const alarm = this.#alarmFor(this.#order.head() ?? null);
    if (alarm === this.#alarm) return;
    this.#alarm = UNKNOWN; // until the write has succeeded
    if (alarm === null) await this.#storage.deleteAlarm();
    else await this.#storage.setAlarm(alarm);
    this.#alarm = alarm;
  }

  async #load() {
    const storage = this.#storage;
    const itemPrefix = `${this.#prefix}item:`;
    const nextKey = `${this.#prefix}next`;
    const [entries, next, alarm] = await Promise.all([
      storage.list({ prefix: itemPrefix }),
      storage.get(nextKey),
      storage.getAlarm(),
    ]);
    /** @type {DurableRecord[]} */
    const records = [];
    for (const [key, r] of entries) {
      const id = Number(key.slice(itemPrefix.length));
      if (
        !Number.isSafeInteger(id) ||
        id < 0 ||
        r === null ||
        typeof r !== "object" ||
        r.value === undefined ||
        r.value === null ||
        !Number.isFinite(r.deadline) ||
        !Number.isSafeInteger(r.seq)
      ) {
        throw new TypeError(`DurableDelayQueue.open(): storage key ${JSON.stringify(key)} does not hold a tarry item`);
      }
      records.push({ id, value: r.value, deadline: r.deadline, seq: r.seq });
    }
    if (next !== undefined && !(Number.isSafeInteger(next) && next >= 0)) {
      throw new TypeError(`DurableDelayQueue.open(): storage key ${JSON.stringify(nextKey)} does not hold a tarry id`);
    }
    // Added in (deadline, seq) order, the order's FIFO among ties is the order they had.
    records.sort((a, b) => a.deadline - b.deadline || a.seq - b.seq);
    let max = -1;
    for (const r of records) {
      r.handle = this.#order.add(r);
      this.#items.set(r.id, r);
      max = Math.max(max, r.id, r.seq);
    }
    this.#next = Math.max(next ?? 0, max + 1);
    this.#alarm = alarm ?? null;
    await this.#arm();
  }
}

const OPEN = Symbol("DurableDelayQueue.open");

function noop() {}

function stored(record) {
  return { value: record.value, deadline: record.deadline, seq: record.seq };
}

/** The copy of `value` the queue keeps: what storage would store. */
function storable(value) {
  checkValue(value);
  try {
    return structuredClone(value);
  } catch (e) {
    throw new TypeError(
      `value must be storable in a Durable Object (structured clone): ${/** @type {Error} */ (e).message}`,
      {
        cause: e,
      },
    );
  }
}

/** `delayMs` from now, as an epoch-ms deadline an alarm can be set for. */
function deadlineIn(delayMs) {
  checkMs(delayMs, "delayMs");
  const deadline = Date.now() + delayMs;
  if (deadline > LATEST_DEADLINE) {
    throw new RangeError(`delayMs must put the deadline no later than ${LATEST}, got ${delayMs}`);
  }
  return deadline;
}

/** An id as offer() returns them: a non-negative integer. */
function checkId(id) {
  if (typeof id !== "number") throw new TypeError(`id must be a number returned by offer(), got ${describe(id)}`);
  if (!Number.isSafeInteger(id) || id < 0) {
    throw new RangeError(`id must be a non-negative integer returned by offer(), got ${id}`);
  }
}
