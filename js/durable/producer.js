// A DurableDelayQueue's offers, cancel and reschedule: each checked first (the value as
// storage would copy it, the deadline, the id and ifExists), then planned from memory as one
// change (what `ifExists` does to an id that is present: invariant 5 of ./queue.js) and
// committed in one transaction.

import { checkId, checkIfExists, deadlineAt, deadlineIn, describe, isRevoked, options } from "../engine/arguments.js";
import { newId } from "../engine/ids.js";
import { LATEST_DEADLINE } from "./store.js";

/** @typedef {import("./store.js").DurableRecord} DurableRecord */
/** @typedef {import("./store.js").Change} Change */

/**
 * Adds `value`, due `delayMs` from now; resolves to its id once it is in storage. `id`
 * names it (default: 22 random base64url characters); `ifExists` says what happens when that id is present:
 * "replace" (default), "keep" or "extend".
 */
export async function offer(store, value, delayMs, opts) {
  const deadline = deadlineIn(delayMs, "delayMs", Date.now(), LATEST_DEADLINE);
  return (await offerAll(store, [offerOf(value, "value", opts, "options", deadline, "offer()")]))[0];
}

/** Adds `value`, due at `deadline` (epoch ms or a Date); options and result as offer(). */
export async function offerAt(store, value, deadline, opts) {
  const at = deadlineAt(deadline, "deadline", LATEST_DEADLINE);
  return (await offerAll(store, [offerOf(value, "value", opts, "options", at, "offerAt()")]))[0];
}

/**
 * Adds every item of `[{ value, delayMs } | { value, deadline }, with optional id and
 * ifExists]` in one transaction: all or none. Each item is checked before anything is
 * written; they take effect in order (a later item may name an earlier one's id).
 * Resolves to their ids, in order.
 */
export async function offerMany(store, items) {
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
        ? deadlineIn(o.delayMs, `${where}.delayMs`, now, LATEST_DEADLINE)
        : deadlineAt(o.deadline, `${where}.deadline`, LATEST_DEADLINE);
    offers.push(offerOf(o.value, `${where}.value`, { id: o.id, ifExists: o.ifExists }, where, deadline, "offerMany()"));
  }
  return offerAll(store, offers);
}

export async function offerAll(store, offers) {
  store.refuseIfClosed();
  if (offers.length === 0) return [];
  return store.exclusive(async () => {
    await store.commit(planOffers(store, offers));
    return offers.map((o) => o.id);
  });
}

/** The change that `offers`, applied in order, make (see invariant 5). */
function planOffers(store, offers) {
  let next = store.next;
  /** id → the item as the offers so far leave it. */
  const after = new Map();
  for (const o of offers) {
    const present = after.has(o.id) ? after.get(o.id) : (store.items.get(o.id) ?? store.dead.get(o.id));
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
    const live = store.items.get(id);
    const dead = store.dead.get(id);
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
export async function cancel(store, id) {
  checkId(id, "id");
  store.refuseIfClosed();
  return store.exclusive(async () => {
    const record = store.pendingItem(id);
    if (record === undefined || store.isChain(record)) return false;
    await store.commit({ removes: [record] });
    return true;
  });
}

/**
 * Gives a pending item a new deadline, `delayMs` from this call (behind the items already
 * due then); its value and attempt stay. Resolves true if it was pending.
 */
export async function reschedule(store, id, delayMs) {
  checkId(id, "id");
  const deadline = deadlineIn(delayMs, "delayMs", Date.now(), LATEST_DEADLINE);
  store.refuseIfClosed();
  return store.exclusive(async () => {
    const old = store.pendingItem(id);
    if (old === undefined || store.isChain(old)) return false;
    const moved = { ...old, deadline, seq: store.next, inOrder: false };
    await store.commit({ removes: [old], adds: [moved], next: store.next + 1 });
    return true;
  });
}

/** One checked offer: { id, ifExists, value (the copy kept), deadline }. */
function offerOf(value, valueName, opts, optsName, deadline, of) {
  const o = options(opts, optsName, ["id", "ifExists"], of);
  const { id = newId() } = o;
  checkId(id, `${optsName}.id`);
  const ifExists = checkIfExists(o.ifExists, `${optsName}.ifExists`);
  return { id, ifExists, value: storable(value, valueName), deadline };
}

/** The copy of `value` the queue keeps: what storage would store (structured clone). */
export function storable(value, name) {
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
