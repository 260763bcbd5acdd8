// What a DurableDelayQueue shows of itself, read from memory in the calls' turn (so a read
// sees every earlier call): delayOf, size, stats, get, the pages of pending items and of the
// item in flight, and, outside the turn, peek and toArray. A page costs O(log n + limit).

import { checkId, pageOptions } from "../engine/arguments.js";
import { LATENESS_SAMPLES } from "./store.js";

/** Ms until a pending item's deadline (negative when overdue), or undefined when none is pending under `id`. */
export async function delayOf(store, id) {
  checkId(id, "id");
  store.refuseIfClosed();
  return store.exclusive(() => {
    const record = store.pendingItem(id);
    return record === undefined ? undefined : record.deadline - Date.now();
  });
}

/** The number of pending items (waiting for their deadline, or due and not yet handed out). */
export async function size(store) {
  store.refuseIfClosed();
  return store.exclusive(() => store.order.size);
}

/** Counts by state, the head's delay, and this object's delivery figures since open(). */
export async function stats(store) {
  store.refuseIfClosed();
  return store.exclusive(() => {
    const head = store.order.head();
    const n = Math.min(store.counters.delivered, LATENESS_SAMPLES);
    const lateness = store.lateness.slice(0, n).sort();
    const at = (q) => (n ? lateness[Math.min(n - 1, Math.floor(q * n))] : 0);
    return {
      pending: store.order.size,
      inFlight: store.inFlight === null ? 0 : 1,
      dead: store.dead.size,
      paused: store.paused,
      headDelay: head === undefined ? undefined : head.deadline - Date.now(),
      ...store.counters,
      latenessP50: at(0.5),
      latenessP99: at(0.99),
      latenessMax: n ? lateness[n - 1] : 0,
    };
  });
}

/** Durable only, read from memory: a copy of the head's value (due or not), or undefined when none is pending. */
export function peek(store) {
  const head = store.order.head();
  return head === undefined ? undefined : structuredClone(head.value);
}

/** Durable only, read from memory: every pending item as { id, value, deadline, attempt } (values copied), head first. */
export function toArray(store) {
  return store.order.sorted().map(({ id, value, deadline, attempt }) => ({
    id,
    value: structuredClone(value),
    deadline,
    attempt,
  }));
}

/**
 * What the queue holds under `id`: `{ id, state, value, deadline, attempt }`, with `reason`
 * and `diedAt` for a dead letter and `schedule` for an occurrence; undefined when it holds nothing under it. `state` is
 * "pending", "inFlight" (its handler runs) or "dead". The value is a copy.
 */
export async function get(store, id) {
  checkId(id, "id");
  store.refuseIfClosed();
  return store.exclusive(() => {
    const record = store.items.get(id) ?? store.dead.get(id);
    return record === undefined ? undefined : infoOf(record, record === store.inFlight ? "inFlight" : record.state);
  });
}

/**
 * A page of pending items in deadline order (FIFO among equal deadlines): `{ items, next }`,
 * each item as get() gives it; pass `next` back as `after` for the next page (undefined:
 * none). `limit` 1 to 1000, default 100. O(log n + limit), whatever the page.
 */
export async function pending(store, opts) {
  const { limit, after: from } = pageOptions(opts, "pending()", keyOfCursor);
  store.refuseIfClosed();
  return store.exclusive(() => {
    const records = store.order.after(from?.deadline ?? -Infinity, from?.seq ?? 0, limit + 1);
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
export async function inFlight(store, opts) {
  const { after } = pageOptions(opts, "inFlight()", keyOfCursor);
  store.refuseIfClosed();
  return store.exclusive(() => {
    const r = store.inFlight;
    // One page holds it all: a cursor (from a page that had more) finds nothing after.
    return { items: r !== null && after === undefined ? [infoOf(r, "inFlight")] : [], next: undefined };
  });
}

/** What get() and the pages show of a record. */
function infoOf(r, state) {
  const info = { id: r.id, state, value: structuredClone(r.value), deadline: r.deadline, attempt: r.attempt };
  if (state === "dead") Object.assign(info, { reason: r.reason, diedAt: r.diedAt });
  if (state === "dead" && r.stack !== undefined) info.stack = r.stack;
  if (r.schedule !== undefined) info.schedule = r.schedule;
  return info;
}

/** A pending page's cursor: opaque to callers; here, the last item's seq and deadline. */
function pendingCursor(r) {
  return `p${r.seq.toString(36)}_${r.deadline}`;
}

/** A pending page's cursor read: { seq, deadline }, or null for a text that is none. */
function keyOfCursor(cursor) {
  const m = /^p([0-9a-z]{1,11})_(-?[0-9][0-9.e+-]*)$/.exec(cursor);
  const seq = m === null ? Number.NaN : Number.parseInt(m[1], 36);
  const deadline = m === null ? Number.NaN : Number(m[2]);
  return Number.isSafeInteger(seq) && Number.isFinite(deadline) ? { seq, deadline } : null;
}
