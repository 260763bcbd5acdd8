// The state a DurableDelayQueue keeps in memory and the one seam to its storage: every change
// goes through commit(), one `storage.transaction()` (items, dead letters, the seq counter,
// schedules and, when it moves, the alarm: all or nothing), after which memory follows
// (invariant 1 of ./queue.js); arm() writes the alarm for the head (invariant 2); exclusive()
// gives calls their turn (invariant 3). The role modules (producer, consumer, inspection,
// pause, schedules, dead letters, load) read and change the queue through a Store.

import { MAX_ID_LENGTH } from "../engine/arguments.js";
import { ClosedError } from "../engine/errors.js";
import { EMIT, HEARD } from "../engine/events.js";
import { Meters } from "../engine/metrics.js";
import { Order } from "../engine/order.js";
import { pendingId, storedSchedule } from "../schedule/durable.js";
import { DeadLetters } from "./dead-letters.js";

/** workerd refuses alarms after 2189 ("This API doesn't support dates after 2189"). */
export const LATEST_DEADLINE = Date.UTC(2189, 0, 1);
/** Keys per txn.put() or txn.delete() call (the key-value backend's limit). */
const KEYS_PER_CALL = 128;
/** Deliveries whose lateness stats() keeps. */
export const LATENESS_SAMPLES = 8192;

/** @typedef {{ id: string, state: string, value: any, deadline: number, seq: number, attempt: number, inOrder?: boolean, out?: boolean, reason?: string, stack?: string, diedAt?: number, schedule?: string }} DurableRecord */
/** @typedef {import("../schedule/durable.js").DurableSchedule} DurableSchedule */
/**
 * What one storage transaction changes (commit()).
 * @typedef {{ removes?: DurableRecord[], adds?: DurableRecord[], updates?: { record: DurableRecord, fields: object }[],
 *   deadRemoves?: DurableRecord[], deadAdds?: DurableRecord[], next?: number,
 *   schedulePuts?: DurableSchedule[], scheduleDeletes?: DurableSchedule[], tell?: [string, object][] }} Change
 */

/** What `alarm` holds when this queue cannot know what storage holds. */
export const UNKNOWN = undefined;

/** A DurableDelayQueue's state, and the seam to its storage. */
export class Store {
  /** The queue whose events tell() dispatches. */
  queue;
  storage;
  prefix;
  maxAttempts;
  name;
  paused = false;
  /** @type {Meters} */
  meters;
  /** The pending items, in (deadline, seq) order. @type {Order<DurableRecord>} */
  order = new Order();
  /** id → { id, value, deadline, seq, attempt, inOrder } of each pending or in-flight item. @type {Map<string, DurableRecord>} */
  items = new Map();
  /** The item whose handler runs (in items, not in order), or null. @type {DurableRecord | null} */
  inFlight = null;
  dead = new DeadLetters();
  /** The schedules, by id (js/schedule/durable.js). @type {Map<string, DurableSchedule>} */
  schedules = new Map();
  next = 0;
  /** The alarm storage holds (epoch ms, or null for none), as far as this queue knows. @type {number | null | undefined} */
  alarm = UNKNOWN;
  /** The tail of the calls waiting for their turn to change (or read) the queue. */
  turn = Promise.resolve();
  /** The tail of the deliver() calls. */
  delivery = Promise.resolve();
  /** @type {Promise<void> | null} */
  closing = null;
  counters = { wakes: 0, earlyWakes: 0, delivered: 0, retried: 0, redelivered: 0 };
  lateness = new Float64Array(LATENESS_SAMPLES);

  constructor(queue, storage, prefix, maxAttempts, name) {
    this.queue = queue;
    this.storage = storage;
    this.prefix = prefix;
    this.maxAttempts = maxAttempts;
    this.name = name;
    this.meters = new Meters("durable", name, async () => ({
      pending: this.order.size,
      inFlight: this.inFlight === null ? 0 : 1,
      dead: this.dead.size,
    }));
  }

  refuseIfClosed() {
    if (this.closing !== null) throw new ClosedError("DurableDelayQueue");
  }

  /** The item pending under `id` (not the one in flight), or undefined. */
  pendingItem(id) {
    const record = this.items.get(id);
    return record === undefined || record === this.inFlight ? undefined : record;
  }

  /**
   * Runs `fn` when every earlier call has had its turn (see invariant 3).
   * @template T
   * @param {() => T | PromiseLike<T>} fn
   * @returns {Promise<T>}
   */
  exclusive(fn) {
    const run = this.turn.then(fn);
    this.turn = run.then(noop, noop);
    return run;
  }

  key(kind, id) {
    return `${this.prefix}${kind}:${id}`;
  }

  /**
   * One change, all or nothing (invariant 1): items `removes`d from the queue, `adds` put
   * in it (each with a seq below `next`), `updates` of items in place, dead letters
   * `deadRemoves`d and `deadAdds` made. `alarm: false` leaves the alarm to the caller
   * (deliver(), which writes it when it ends).
   * @param {Change} change
   * @param {{ alarm?: boolean }} [opts]
   */
  async commit(
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
    const headAt = alarm ? this.headAfter(removes, adds) : UNKNOWN;
    const newAlarm = headAt === UNKNOWN ? UNKNOWN : alarmAt(headAt);
    const moveAlarm = newAlarm !== UNKNOWN && newAlarm !== this.alarm;
    const puts = new Map();
    for (const r of adds) puts.set(this.key("item", r.id), storedItem(r));
    for (const { record, fields } of updates)
      puts.set(this.key("item", record.id), storedItem({ ...record, ...fields }));
    for (const d of deadAdds) puts.set(this.key("dead", d.id), storedDead(d));
    if (next !== undefined && next !== this.next) puts.set(`${this.prefix}next`, next);
    for (const sc of schedulePuts) puts.set(this.key("sched", sc.id), storedSchedule(sc));
    const deletes = [];
    for (const sc of scheduleDeletes) deletes.push(this.key("sched", sc.id));
    for (const r of removes) if (!puts.has(this.key("item", r.id))) deletes.push(this.key("item", r.id));
    for (const d of deadRemoves) if (!puts.has(this.key("dead", d.id))) deletes.push(this.key("dead", d.id));
    const entries = [...puts];
    await this.storage.transaction(async (txn) => {
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
    if (moveAlarm) this.alarm = newAlarm;
    for (const r of removes) {
      this.order.remove(r);
      if (this.items.get(r.id) === r) this.items.delete(r.id);
      if (this.inFlight === r) this.inFlight = null;
    }
    for (const { record, fields } of updates) Object.assign(record, fields);
    for (const r of [...adds].sort(bySeq)) {
      this.order.add(r);
      this.items.set(r.id, r);
    }
    for (const d of deadRemoves) this.dead.remove(d);
    for (const d of deadAdds) this.dead.add(d);
    if (next !== undefined) this.next = next;
    for (const sc of scheduleDeletes) this.schedules.delete(sc.id);
    for (const sc of schedulePuts) this.schedules.set(sc.id, sc);
    for (const [type, detail] of tell) this.tell(type, detail);
    if (alarm && headAt === UNKNOWN) {
      try {
        await this.arm();
      } catch {
        // The change has happened; the alarm stays early (invariant 2) and arm() left
        // `alarm` unknown, so the next call or deliver() writes it.
      }
    }
  }

  /**
   * The earliest deadline storage holds once `removes` have left and `adds` have come (null:
   * none), when that can be told without changing memory; UNKNOWN when the head leaves and
   * nothing offered is as early, since the order knows only its head.
   */
  headAfter(removes, adds) {
    if (this.paused) return null;
    let first = Infinity;
    for (const a of adds) first = Math.min(first, a.deadline);
    const leaving = removes.filter((r) => r.inOrder === true);
    const head = this.order.head();
    let at;
    if (head === undefined || !leaving.includes(head)) at = Math.min(head?.deadline ?? Infinity, first);
    else if (leaving.length === this.order.size || first <= head.deadline) at = first;
    else return UNKNOWN;
    const flying = this.inFlight;
    if (flying !== null && !removes.includes(flying)) at = Math.min(at, flying.deadline);
    return at === Infinity ? null : at;
  }

  /** Writes the alarm for the earliest deadline as memory has it, unless storage holds it already. */
  async arm() {
    let at = this.order.head()?.deadline ?? Infinity;
    if (this.inFlight !== null) at = Math.min(at, this.inFlight.deadline);
    if (this.paused) at = Infinity;
    const alarm = at === Infinity ? null : alarmAt(at);
    if (alarm === this.alarm) return;
    this.alarm = UNKNOWN; // until the write has succeeded
    if (alarm === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(alarm);
    this.alarm = alarm;
  }

  /** Whether `record` is its schedule's pending occurrence (which only its schedule moves). */
  isChain(record) {
    if (record.schedule === undefined) return false;
    const s = this.schedules.get(record.schedule);
    return s !== undefined && s.due === record.deadline && pendingId(s) === record.id;
  }

  /** Puts `record` back in the order at its (deadline, seq) place. */
  restore(record) {
    this.order.add(record);
  }

  /** Dispatches an event and records it in the metrics, when anyone listens or a MeterProvider is registered. */
  tell(type, detail) {
    if (this.queue[HEARD](type)) this.queue[EMIT](type, detail);
    const meters = this.meters;
    if (meters.on) meters.record(type, detail);
  }
}

export function noop() {}

export const bySeq = (a, b) => a.seq - b.seq;

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
function storedDead({ value, deadline, seq, attempt, reason, stack, diedAt, schedule }) {
  const dead = { value, deadline, seq, attempt, reason, diedAt, ...(stack !== undefined && { stack }) };
  return schedule === undefined ? dead : { ...dead, schedule };
}

/** The alarm time for a deadline: whole ms, rounded up so it never fires early, and at least 1 (workerd refuses <= 0; any past time fires at once). */
export function alarmAt(deadline) {
  return deadline === null ? null : Math.max(1, Math.ceil(deadline));
}

export function isId(id) {
  return typeof id === "string" && id !== "" && id.length <= MAX_ID_LENGTH && id.isWellFormed();
}
