// Snapshots: a queue's pending items as plain data, so they survive a restart.
//
//   { version: 1, size: 2, items: [{ value, deadline }, { id, value, deadline }, …] }
//
// in deadline order, FIFO among ties; `id` only on the items offered with one, so that a
// restored item can be cancelled by what the application kept (its id) in another process.
// A snapshot of a queue without ids is what it was before ids existed, and a reader that
// does not know ids restores the items without them: the version stays 1.
//
// A deadline is absolute wall-clock time in epoch milliseconds, because a reading of a
// monotonic clock means nothing in another process. It is converted once each way, with
// one reading of both clocks for the whole snapshot, so relative order and ties are kept
// exactly. Each conversion errs late, never early (clock.js): written deadlines are
// rounded up, and a restored item is never due before its written deadline.
//
// A value must come back the same from JSON; restore() refuses what snapshot() refuses.
// The check (json.js) is in JS rather than in Rust through serde-wasm-bindgen: values live on
// the JS side, and reading each one across the boundary would cost far more than the check.
//
// The queue's methods (DelayQueue#snapshot, DelayQueue.restore) live in queue.js and call
// these with its internals.

import { checkId, isRevoked } from "../engine/arguments.js";
import { isJson, jsonProblem, kind } from "../engine/json.js";
import { Deadlines } from "../wasm.js";

export const SNAPSHOT_VERSION = 1;

/** A snapshot's values: JSON leaves out undefined properties, and gives them back as undefined. */
const JSON_RULES = { omitUndefined: true, maxDepth: Number.POSITIVE_INFINITY };

/**
 * The snapshot of items given by their slots and deadlines (on `clock`) in deadline order,
 * their values in `values` (a slot table). Throws a TypeError naming the first item whose
 * value would not survive JSON.
 */
export function writeSnapshot(slots, deadlines, values, clock) {
  const high = clock.offset().high;
  const items = new Array(slots.length);
  for (let i = 0; i < slots.length; i++) {
    const value = values.get(slots[i]);
    if (!isJson(value, JSON_RULES)) {
      const problem = jsonProblem(value, "value", JSON_RULES);
      if (problem !== null) {
        throw new TypeError(
          `snapshot(): items[${i}] (the item at position ${i} in deadline order) cannot be saved as JSON: ${problem}`,
        );
      }
    }
    const deadline = clock.toEpoch(deadlines[i], high);
    const id = values.idOf(slots[i]);
    items[i] = id === undefined ? { value, deadline } : { id, value, deadline };
  }
  return { version: SNAPSHOT_VERSION, size: items.length, items };
}

/**
 * Checks a snapshot and hands each item to `add(value, deadline, id)` in the snapshot's
 * order, each deadline converted to `clock` (`id` undefined for an item without one).
 * Nothing is added unless the whole snapshot is well formed, its ids are all different,
 * and it fits in a new queue of `capacity` (Infinity: unbounded).
 */
export function readSnapshot(snapshot, capacity, clock, add) {
  const n = checkEnvelope(snapshot, capacity);
  const items = snapshot.items;
  const values = new Array(n);
  const deadlines = new Float64Array(n);
  /** id -> index of the item that has it; null until the first id. */
  let ids = null;
  for (let i = 0; i < n; i++) {
    const item = items[i];
    if (item === null || typeof item !== "object" || isRevoked(item)) {
      throw new TypeError(`DelayQueue.restore(): items[${i}] must be an object { value, deadline }, got ${kind(item)}`);
    }
    const deadline = item.deadline;
    if (typeof deadline !== "number" || !Number.isFinite(deadline)) {
      const got = deadline === undefined && !("deadline" in item) ? "nothing" : shown(deadline);
      throw new TypeError(
        `DelayQueue.restore(): items[${i}].deadline must be a finite number of epoch milliseconds, got ${got}`,
      );
    }
    const value = item.value;
    if (value === undefined) {
      throw new TypeError(`DelayQueue.restore(): items[${i}].value is ${!("value" in item) ? "missing" : "undefined"}`);
    }
    if (!isJson(value, JSON_RULES)) {
      const problem = jsonProblem(value, `items[${i}].value`, JSON_RULES);
      if (problem !== null) throw new TypeError(`DelayQueue.restore(): ${problem}: snapshot() would refuse it`);
    }
    const id = item.id;
    if (id !== undefined) {
      try {
        checkId(id, `items[${i}].id`);
      } catch (e) {
        throw new TypeError(`DelayQueue.restore(): ${e.message}`);
      }
      ids ??= new Map();
      const first = ids.get(id);
      if (first !== undefined) {
        throw new TypeError(
          `DelayQueue.restore(): items[${i}].id ${shown(id)} is also the id of items[${first}]: ids name one item each`,
        );
      }
      ids.set(id, i);
    }
    values[i] = value;
    deadlines[i] = deadline;
  }
  const low = clock.offset().low;
  if (ids === null) {
    for (let i = 0; i < n; i++) add(values[i], clock.fromEpoch(deadlines[i], low), undefined);
  } else {
    const idOf = new Array(n);
    for (const [id, i] of ids) idOf[i] = id;
    for (let i = 0; i < n; i++) add(values[i], clock.fromEpoch(deadlines[i], low), idOf[i]);
  }
}

function refuse(Kind, message) {
  return new Kind(`DelayQueue.restore(): ${message}`);
}

/**
 * Checks a snapshot's envelope (the version first, so a newer format is named as such; the
 * declared size against the array, for a truncated one; the count against the room in the
 * queue, for a huge one) in O(1), without reading an item. The number of items.
 */
function checkEnvelope(snapshot, capacity) {
  if (snapshot === null || typeof snapshot !== "object" || isRevoked(snapshot) || Array.isArray(snapshot)) {
    throw refuse(TypeError, `a snapshot must be an object { version, size, items }, got ${kind(snapshot)}`);
  }
  const { version, size, items } = snapshot;
  if (version !== SNAPSHOT_VERSION) {
    throw refuse(
      TypeError,
      version === undefined
        ? "missing field `version`: not a tarry snapshot"
        : typeof version === "number"
          ? `unsupported snapshot version ${version}: this tarry reads version ${SNAPSHOT_VERSION}`
          : `invalid version: ${shown(version)}, expected the number ${SNAPSHOT_VERSION}`,
    );
  }
  if (!Number.isSafeInteger(size) || size < 0) {
    throw refuse(
      TypeError,
      size === undefined ? "missing field `size`" : `invalid size: ${shown(size)}, expected a count of items`,
    );
  }
  if (isRevoked(items) || !Array.isArray(items)) {
    throw refuse(
      TypeError,
      items === undefined
        ? "missing field `items`"
        : `invalid items: ${kind(items)}, expected an array of { value, deadline }`,
    );
  }
  // Read once: an array-like Proxy may answer otherwise the second time.
  const length = items.length;
  const max = Deadlines.maxItems();
  if (length > Math.min(capacity, max)) {
    const most = capacity < max ? `the queue's capacity (${capacity})` : `tarry restores at once (${max})`;
    throw refuse(RangeError, `the snapshot holds ${length} items, more than ${most}`);
  }
  if (length !== size) {
    throw refuse(TypeError, `the snapshot is truncated: it says it holds ${size} items and has ${length}`);
  }
  return size;
}

/**
 * A bad field's value for a message: its kind, and for a number, string or boolean the value
 * (no String() of an object: it may throw, recurse without end, or run the input's code).
 */
function shown(x) {
  if (typeof x !== "number" && typeof x !== "string" && typeof x !== "boolean") return kind(x);
  const s = String(x);
  return `${kind(x)} ${JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s)}`;
}
