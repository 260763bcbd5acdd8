// DurableDelayQueue: a delay queue for a Cloudflare Durable Object, whose one timer is the
// object's alarm and whose items live in the object's storage.
//
// The rule is the same as for the host timer of DelayQueue: exactly one alarm, set for the
// head's deadline, re-armed whenever the head changes and deleted when the queue is empty.
// Every item is written to storage before offer() resolves, so an eviction or a restart
// loses nothing: open() reads the items back (in deadline order, FIFO among ties), checks
// the alarm, and the alarm hands the overdue items to deliver()'s callback in order.
//
// Delivery is at least once, like the alarm itself: an item leaves storage only after its
// callback has returned (or its promise resolved). If the callback throws, deliver() stops
// there and throws, the item stays at the head, and the runtime retries the alarm.
//
// Storage layout, under `prefix` (default "tarry:"): `item:<id>` → { value, deadline, seq }
// for each item (deadline in epoch ms; seq orders ties) and `next` → the next id. Values are
// stored as the storage stores them (structured clone). The order lives in the wasm core,
// which this adapter uses with no host timer at all.

import { Deadlines } from "../dist/tarry.js";
import { checkMs, checkValue, describe, epochOf } from "./arguments.js";
import { Slots } from "./slots.js";

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
  #core = new Deadlines(Infinity);
  /** The { id, value, deadline, seq } of each live item. */
  #records = new Slots();
  /** id → the core's handle for it (ids persist, handles do not). */
  #handles = new Map();
  #next = 0;
  /** The alarm as last set or read (epoch ms), or null for none. */
  #alarmAt = null;
  /** Epoch ms minus the core's clock, fixed: the core only orders, so one offset keeps order exact. */
  #offset = Date.now() - performance.now();

  /** Use `await DurableDelayQueue.open(storage)`. */
  constructor(storage, prefix, token) {
    if (token !== OPEN) throw new TypeError("use `await DurableDelayQueue.open(storage)`");
    this.#storage = storage;
    this.#prefix = prefix;
  }

  /**
   * Reads the queue back from a Durable Object's storage (`ctx.storage`) and makes sure the
   * alarm is set for its head. Call it in `blockConcurrencyWhile` in the object's constructor.
   * @param {DurableObjectStorage} storage
   * @param {{prefix?: string}} [opts] keys used: `${prefix}item:<id>` and `${prefix}next`.
   */
  static async open(storage, opts) {
    if (storage === null || typeof storage !== "object" || typeof storage.setAlarm !== "function") {
      throw new TypeError(`storage must be a Durable Object's storage (ctx.storage), got ${describe(storage)}`);
    }
    const { prefix = "tarry:" } = opts ?? {};
    if (typeof prefix !== "string") throw new TypeError(`prefix must be a string, got ${describe(prefix)}`);
    const queue = new DurableDelayQueue(storage, prefix, OPEN);
    await queue.#load();
    return queue;
  }

  /** Items in the queue, due or not. */
  get size() {
    return this.#core.size;
  }

  /** Adds `value`, due `delayMs` from now; resolves to its id once it is in storage. */
  offer(value, delayMs) {
    checkValue(value);
    checkMs(delayMs, "delayMs");
    return this.#add(value, Date.now() + delayMs);
  }

  /** Adds `value`, due at `deadline` (epoch ms or a Date); resolves to its id. */
  offerAt(value, deadline) {
    checkValue(value);
    return this.#add(value, epochOf(deadline));
  }

  /** Removes an item; resolves to its value, or undefined when the id names none. */
  async cancel(id) {
    const h = this.#handles.get(id);
    if (h === undefined) return undefined;
    this.#core.cancel(h);
    const record = this.#records.forget(h);
    this.#handles.delete(id);
    await this.#storage.delete(this.#key(id));
    await this.#arm();
    return record.value;
  }

  /** Moves an item to `delayMs` from now (behind items already due then); false when the id names none. */
  async reschedule(id, delayMs) {
    checkMs(delayMs, "delayMs");
    const h = this.#handles.get(id);
    if (h === undefined) return false;
    const old = this.#records.forget(h);
    const record = { id, value: old.value, deadline: Date.now() + delayMs, seq: this.#next++ };
    // A new seq puts it behind the items already due then, as the core does; stored with it,
    // the order is the same after a restart.
    this.#core.cancel(h);
    this.#insert(record);
    await this.#storage.put({ [this.#key(id)]: stored(record), [`${this.#prefix}next`]: this.#next });
    await this.#arm();
    return true;
  }

  /** The head's value (due or not), or undefined when empty. */
  peek() {
    const slot = this.#core.head();
    return slot < 0 ? undefined : this.#records.get(slot).value;
  }

  /** The epoch-ms deadline of an item, or undefined when the id names none. */
  deadlineOf(id) {
    const h = this.#handles.get(id);
    return h === undefined ? undefined : this.#records.named(h).deadline;
  }

  /** Every item as { id, value, deadline }, in deadline order (FIFO among ties). */
  toArray() {
    const slots = this.#core.sortedSlots();
    const out = new Array(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const { id, value, deadline } = this.#records.get(slots[i]);
      out[i] = { id, value, deadline };
    }
    return out;
  }

  /**
   * Call from the object's `alarm()`: hands each item due now to `callback(value, { id,
   * deadline })`, one at a time in deadline order, removing each from storage once its
   * callback has returned or resolved. Then sets the alarm for the new head. Resolves to
   * the number delivered. Items that come due meanwhile wait for that next alarm.
   */
  async deliver(callback) {
    if (typeof callback !== "function") throw new TypeError(`callback must be a function, got ${describe(callback)}`);
    this.#alarmAt = null; // the alarm that called us is spent
    const now = Date.now();
    let delivered = 0;
    for (;;) {
      const slot = this.#core.head();
      if (slot < 0) break;
      const record = this.#records.get(slot);
      if (record.deadline > now) break;
      const h = this.#handles.get(record.id);
      await callback(record.value, { id: record.id, deadline: record.deadline });
      delivered++;
      // The callback may have cancelled or rescheduled it; only the same item is removed.
      if (this.#handles.get(record.id) === h && this.#records.named(h) === record) {
        this.#core.cancel(h);
        this.#records.forget(h);
        this.#handles.delete(record.id);
        await this.#storage.delete(this.#key(record.id));
      }
    }
    await this.#arm();
    return delivered;
  }

  #key(id) {
    return `${this.#prefix}item:${id}`;
  }

  async #add(value, deadline) {
    const record = { id: this.#next, value, deadline, seq: this.#next };
    this.#next++;
    // Storage first: a value it cannot store is refused and the queue stays as it was.
    await this.#storage.put({ [this.#key(record.id)]: stored(record), [`${this.#prefix}next`]: this.#next });
    this.#insert(record);
    await this.#arm();
    return record.id;
  }

  #insert(record) {
    const h = this.#core.offer(record.deadline - this.#offset);
    this.#records.put(h, record);
    this.#handles.set(record.id, h);
  }

  async #load() {
    const storage = this.#storage;
    const itemPrefix = `${this.#prefix}item:`;
    const [entries, next, alarm] = await Promise.all([
      storage.list({ prefix: itemPrefix }),
      storage.get(`${this.#prefix}next`),
      storage.getAlarm(),
    ]);
    const records = [];
    for (const [key, r] of entries) {
      const id = Number(key.slice(itemPrefix.length));
      if (
        !Number.isSafeInteger(id) ||
        r === null ||
        typeof r !== "object" ||
        !Number.isFinite(r.deadline) ||
        !Number.isSafeInteger(r.seq)
      ) {
        throw new TypeError(`DurableDelayQueue.open(): storage key ${JSON.stringify(key)} does not hold a tarry item`);
      }
      records.push({ id, value: r.value, deadline: r.deadline, seq: r.seq });
    }
    // Offered in (deadline, seq) order, the core's FIFO among ties is the order they had.
    records.sort((a, b) => a.deadline - b.deadline || a.seq - b.seq);
    let max = -1;
    for (const r of records) {
      this.#insert(r);
      max = Math.max(max, r.id, r.seq);
    }
    this.#next = Math.max(typeof next === "number" ? next : 0, max + 1);
    this.#alarmAt = alarm ?? null;
    await this.#arm();
  }

  /** Sets the alarm for the head's deadline, or deletes it when empty; no call when unchanged. */
  async #arm() {
    const slot = this.#core.head();
    const target = slot < 0 ? null : this.#records.get(slot).deadline;
    if (target === this.#alarmAt) return;
    this.#alarmAt = target;
    if (target === null) await this.#storage.deleteAlarm();
    else await this.#storage.setAlarm(target);
  }
}

const OPEN = Symbol("DurableDelayQueue.open");

function stored(record) {
  return { value: record.value, deadline: record.deadline, seq: record.seq };
}
