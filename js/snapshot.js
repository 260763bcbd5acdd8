// Snapshots: a queue's pending items as plain data, so they survive a restart.
//
//   { version: 1, size: 2, items: [{ value, deadline }, …] }   (deadline order, FIFO ties)
//
// A deadline is absolute wall-clock time in epoch milliseconds, because a monotonic
// reading means nothing in another process. It is converted once each way, with one
// reading of both clocks for the whole snapshot, so relative order and ties are kept
// exactly. Date.now() lags the true time by up to 1 ms and a thread can be preempted
// between two clock reads, so each conversion errs late, never early: written deadlines
// are rounded up, and a restored item is never due before its written deadline.
//
// The queue's methods (DelayQueue#snapshot, DelayQueue.restore) live in queue.js and call
// these with its internals.
//
// The whole check is here, in JS, not in Rust through serde-wasm-bindgen. Measured here
// (Node 20, 2×10⁵ items): reading each { value, deadline } through serde-wasm-bindgen cost
// 700–900 ns per item against 10–25 ns in JS, and even checking only the envelope
// ({ version, size, items }) in Rust added 48.6 KB to the wasm (64.6 → 113.2 KB; gzipped
// 25.9 → 47.4 KB): serde's deserializer and Rust's number formatting, for three fields.

import { clockOffset } from "./clock.js";

export const SNAPSHOT_VERSION = 1;

/**
 * The snapshot of items given by their slots and monotonic deadlines in deadline order.
 * Throws a TypeError naming the first item whose value would not survive JSON.
 */
export function writeSnapshot(slots, deadlines, values) {
  const offset = clockOffset().high;
  const items = new Array(slots.length);
  for (let i = 0; i < slots.length; i++) {
    const value = values[slots[i]];
    if (
      typeof value === "object"
        ? !plainJson(value, 0)
        : typeof value !== "string" && typeof value !== "boolean" && !Number.isFinite(value)
    ) {
      const problem = jsonProblem(value, "value", []);
      if (problem !== null) {
        throw new TypeError(
          `snapshot(): items[${i}] (the item at position ${i} in deadline order) cannot be saved as JSON: ${problem}`,
        );
      }
    }
    items[i] = { value, deadline: Math.ceil(deadlines[i] + offset) };
  }
  return { version: SNAPSHOT_VERSION, size: items.length, items };
}

/**
 * Checks a snapshot and hands each item to `add(value, monotonicDeadline, index)` in the
 * snapshot's order. Nothing is added unless the whole snapshot is well formed.
 * `capacity` < 0 means unbounded.
 */
export function readSnapshot(snapshot, capacity, add) {
  const n = checkEnvelope(snapshot, capacity);
  const items = snapshot.items;
  const values = new Array(n);
  const deadlines = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const item = items[i];
    if (item === null || typeof item !== "object") {
      throw new TypeError(
        `DelayQueue.restore(): items[${i}] must be an object { value, deadline }, got ${item === null ? "null" : typeof item}`,
      );
    }
    const deadline = item.deadline;
    if (typeof deadline !== "number" || !Number.isFinite(deadline)) {
      const got =
        deadline === undefined && !("deadline" in item)
          ? "nothing"
          : kind(deadline) +
            (typeof deadline === "number" || typeof deadline === "string"
              ? ` ${JSON.stringify(String(deadline))}`
              : "");
      throw new TypeError(
        `DelayQueue.restore(): items[${i}].deadline must be a finite number of epoch milliseconds, got ${got}`,
      );
    }
    const value = item.value;
    if (value === undefined || value === null) {
      throw new TypeError(
        `DelayQueue.restore(): items[${i}].value is ${value === undefined && !("value" in item) ? "missing" : value}`,
      );
    }
    values[i] = value;
    deadlines[i] = deadline;
  }
  const offset = clockOffset().low;
  for (let i = 0; i < n; i++) add(values[i], deadlines[i] - offset);
}

/**
 * Whether an object comes back the same from JSON: the fast check, with no messages
 * (jsonProblem says what is wrong). Objects nested deeper than 64 levels (or cyclic) go
 * to jsonProblem, which tells a cycle from depth.
 */
function plainJson(x, depth) {
  if (x === null) return true;
  if (depth > 64) return false;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      if (!(i in x)) return false;
      const v = x[i];
      const t = typeof v;
      if (t === "string" || t === "boolean" || (t === "number" && Number.isFinite(v))) continue;
      if (t !== "object" || !plainJson(v, depth + 1)) return false;
    }
    return true;
  }
  const proto = Object.getPrototypeOf(x);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in x) {
    if (!Object.hasOwn(x, key)) continue;
    const v = x[key];
    const t = typeof v;
    if (t === "string" || t === "boolean" || t === "undefined" || (t === "number" && Number.isFinite(v))) continue;
    if (t !== "object" || !plainJson(v, depth + 1)) return false;
  }
  return true;
}

/** The most items a snapshot may hold: about 1 GiB of wasm memory at ~32 bytes per item. */
const MAX_ITEMS = 2 ** 25;

function refuse(Kind, message) {
  return new Kind(`DelayQueue.restore(): ${message}`);
}

/**
 * Checks a snapshot's envelope (the version first, so a newer format is named as such; the
 * declared size against the array, for a truncated one; the count against the capacity
 * and memory, for a huge one) in O(1), without reading an item. The number of items.
 */
function checkEnvelope(snapshot, capacity) {
  if (snapshot === null || typeof snapshot !== "object" || Array.isArray(snapshot)) {
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
          : `invalid version: ${kind(version)} ${JSON.stringify(String(version))}, expected the number ${SNAPSHOT_VERSION}`,
    );
  }
  if (!Number.isSafeInteger(size) || size < 0) {
    throw refuse(
      TypeError,
      size === undefined
        ? "missing field `size`"
        : `invalid size: ${kind(size)} ${JSON.stringify(String(size))}, expected a count of items`,
    );
  }
  if (!Array.isArray(items)) {
    throw refuse(
      TypeError,
      items === undefined
        ? "missing field `items`"
        : `invalid items: ${kind(items)}, expected an array of { value, deadline }`,
    );
  }
  const limit = capacity < 0 ? MAX_ITEMS : Math.min(capacity, MAX_ITEMS);
  if (items.length > limit) {
    throw refuse(
      RangeError,
      `the snapshot holds ${items.length} items, more than ${limit === MAX_ITEMS ? `tarry restores at once (${MAX_ITEMS})` : `the queue's capacity (${limit})`}`,
    );
  }
  if (items.length !== size) {
    throw refuse(TypeError, `the snapshot is truncated: it says it holds ${size} items and has ${items.length}`);
  }
  return size;
}

function kind(x) {
  if (x === null) return "null";
  if (Array.isArray(x)) return "an array";
  if (typeof x !== "object") return typeof x;
  const proto = Object.getPrototypeOf(x);
  const name = proto?.constructor?.name;
  return name && proto !== Object.prototype ? `a ${name}` : "an object";
}

/**
 * Why `x` would not come back the same from JSON.parse(JSON.stringify(x)), or null.
 * `path` names x for the message; `stack` holds the objects being visited (cycles).
 */
function jsonProblem(x, path, stack) {
  switch (typeof x) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(x) ? null : `${path} is ${x} (JSON writes it as null)`;
    case "undefined":
      return `${path} is undefined`;
    case "bigint":
      return `${path} is a bigint (JSON cannot write it)`;
    case "function":
    case "symbol":
      return `${path} is a ${typeof x} (JSON cannot write it)`;
  }
  if (x === null) return null;
  if (stack.includes(x)) return `${path} refers back to itself (a cycle)`;
  if (Array.isArray(x)) {
    stack.push(x);
    for (let i = 0; i < x.length; i++) {
      if (!(i in x)) return `${path}[${i}] is a hole (JSON writes it as null)`;
      const p = jsonProblem(x[i], `${path}[${i}]`, stack);
      if (p !== null) return p;
    }
    stack.pop();
    return null;
  }
  const proto = Object.getPrototypeOf(x);
  if (proto !== Object.prototype && proto !== null) {
    return `${path} is ${kind(x)}, not a plain object (JSON would not bring it back as one)`;
  }
  stack.push(x);
  for (const key of Object.keys(x)) {
    const v = x[key];
    // JSON leaves out undefined properties, and reading one back gives undefined again.
    if (v === undefined) continue;
    const p = jsonProblem(
      v,
      /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`,
      stack,
    );
    if (p !== null) return p;
  }
  stack.pop();
  return null;
}
