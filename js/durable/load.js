// Reading a DurableDelayQueue back from storage when its object starts (open()): items, dead
// letters, the seq counter, the paused flag, the alarm and the schedules, each checked (a key
// that does not hold what tarry wrote is refused, naming it); then the alarm for the head,
// and the next occurrence of any schedule whose pending one an offer replaced.

import { pendingId, scheduleOf } from "../schedule/durable.js";
import { checkScheduleId } from "../schedule/spec.js";
import { bySeq, isId } from "./store.js";

/** @typedef {import("./store.js").DurableRecord} DurableRecord */
/** @typedef {import("./store.js").Change} Change */

/** Fills `store` from its storage (a fresh Store: memory empty), sets the alarm for the head, and heals the schedules. */
export async function load(store) {
  const storage = store.storage;
  const prefixes = { item: `${store.prefix}item:`, dead: `${store.prefix}dead:`, sched: `${store.prefix}sched:` };
  const nextKey = `${store.prefix}next`;
  const [items, dead, next, paused, alarm, schedules] = await Promise.all([
    storage.list({ prefix: prefixes.item }),
    storage.list({ prefix: prefixes.dead }),
    storage.get(nextKey),
    storage.get(`${store.prefix}paused`),
    storage.getAlarm(),
    storage.list({ prefix: prefixes.sched }),
  ]);
  store.paused = paused === true;
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
    if (typeof r.stack === "string") record.stack = r.stack;
    letters.push(record);
    max = Math.max(max, record.seq);
  }
  if (next !== undefined && !(Number.isSafeInteger(next) && next >= 0)) refuse(nextKey, "a tarry seq");
  for (const [key, r] of schedules) {
    const id = key.slice(prefixes.sched.length);
    const s = isScheduleId(id) ? await scheduleOf(id, r) : null;
    if (s === null) refuse(key, "a tarry schedule");
    store.schedules.set(id, s);
  }
  // Added in (deadline, seq) order, the order's FIFO among ties is the order they had.
  records.sort((a, b) => a.deadline - b.deadline || a.seq - b.seq);
  for (const r of records) {
    store.order.add(r);
    store.items.set(r.id, r);
  }
  for (const d of letters.sort(bySeq)) store.dead.add(d);
  store.next = Math.max(next ?? 0, max + 1);
  store.alarm = alarm ?? null;
  await store.arm();
  await heal(store);
}

/**
 * A schedule whose pending occurrence is missing (an offer replaced it under its id) gets
 * its next one again: the first after now and after its latest run.
 */
async function heal(store) {
  /** @type {Required<Pick<Change, "adds" | "next" | "schedulePuts">>} */
  const change = { adds: [], next: store.next, schedulePuts: [] };
  for (const s of store.schedules.values()) {
    const id = pendingId(s);
    if (id === undefined || s.paused || store.items.has(id)) continue;
    const from = Math.max(Date.now(), s.last === null ? Number.NEGATIVE_INFINITY : s.last + 1);
    const due = s.rule.next(Math.ceil(from) - 1) ?? null;
    const schedule = { ...s, due };
    change.schedulePuts.push(schedule);
    const nextId = pendingId(schedule);
    if (due !== null && nextId !== undefined && !store.items.has(nextId))
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
  if (change.schedulePuts.length > 0) await store.commit(change);
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
