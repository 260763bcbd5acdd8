// The one check that a value is JSON data: that JSON.parse(JSON.stringify(value)) gives the
// same value back. Snapshots (snapshot.js) and the values of tarry-queue/redis use it, so
// both refuse the same things with the same words, naming the offending part by its path
// (`items[3].value.when`). Plain data means: strings, finite numbers, booleans, null, arrays
// (of Array.prototype, no holes, no properties but their elements) and objects (of
// Object.prototype or none) with only enumerable string keys; anything JSON would write
// otherwise or leave out (a toJSON, an Array subclass, a named property on an array, a
// symbol key) is refused.
//
// Two passes: a fast one that only says yes or no (recursive, but never deeper than 64
// levels), and, only when it says no, `jsonProblem`, which finds the first offending part
// depth first with a stack of its own, so that no nesting overflows the call stack. Both
// read each property once. Cost: O(size of the value) for a value that passes.
//
// `jsonText` is the check for a value sent away as text (Redis): it writes the text once and
// compares what the text reads back as with the value, so that what is checked is what is
// sent, even where reading the value twice gives two answers (a getter, a Proxy).
//
// Plain JS, no wasm: the Redis entry loads this without the rest of the package.

import { isRevoked } from "./arguments.js";

/**
 * What counts as JSON data beyond the plain cases.
 * @typedef {object} JsonRules
 * @property {boolean} omitUndefined true: a property whose value is undefined counts as
 *   absent (JSON.stringify leaves it out, and reading it back gives undefined again);
 *   false: it is refused, like any undefined value
 * @property {number} maxDepth the deepest nesting accepted (Infinity: any); deeper values
 *   are refused, naming the first object too deep
 */

/** Nesting the fast check follows before it hands the value to jsonProblem. */
const FAST_DEPTH = 64;

/**
 * Whether `value` comes back the same from JSON: the fast check, with no messages. False
 * when looking throws (a revoked Proxy inside; jsonProblem then says what is wrong, or
 * throws what a getter of the caller's threw).
 * @param {unknown} value
 * @param {JsonRules} rules
 */
export function isJson(value, rules) {
  const t = typeof value;
  if (t === "string" || t === "boolean") return true;
  if (t === "number") return Number.isFinite(value);
  if (t !== "object") return false;
  if (rules.maxDepth < FAST_DEPTH) return false;
  try {
    return plain(value, 0, rules.omitUndefined);
  } catch {
    return false;
  }
}

/**
 * @param {unknown} x an object or null
 * @param {number} depth
 * @param {boolean} omitUndefined
 * @returns {boolean}
 */
function plain(x, depth, omitUndefined) {
  if (x === null) return true;
  if (depth > FAST_DEPTH) return false;
  if (Array.isArray(x)) {
    if (!plainArray(x)) return false;
    for (let i = 0; i < x.length; i++) {
      if (!(i in x)) return false;
      const v = x[i];
      const t = typeof v;
      if (t === "string" || t === "boolean" || (t === "number" && Number.isFinite(v))) continue;
      if (t !== "object" || !plain(v, depth + 1, omitUndefined)) return false;
    }
    return true;
  }
  const proto = Object.getPrototypeOf(x);
  if (proto !== Object.prototype && proto !== null) return false;
  const o = /** @type {Record<string, unknown>} */ (x);
  if (hiddenKeys(o)) return false;
  for (const key in o) {
    if (!Object.hasOwn(o, key)) continue;
    const v = o[key];
    const t = typeof v;
    if (t === "string" || t === "boolean" || (t === "number" && Number.isFinite(v))) continue;
    if (t === "undefined" && omitUndefined) continue;
    if (t !== "object" || !plain(v, depth + 1, omitUndefined)) return false;
  }
  return true;
}

/**
 * Whether an array is plain: of Array.prototype (not a subclass: JSON brings back an Array),
 * with no own property but its elements and length (JSON leaves the others out, and writes
 * what an own toJSON gives).
 * @param {unknown[]} a
 */
function plainArray(a) {
  return Object.getPrototypeOf(a) === Array.prototype && Reflect.ownKeys(a).length === a.length + 1;
}

/**
 * Whether an object has keys JSON leaves out: symbols, or properties that are not enumerable.
 * @param {object} o
 */
function hiddenKeys(o) {
  return Reflect.ownKeys(o).length !== Object.keys(o).length;
}

/**
 * Why `x` would not come back the same from JSON.parse(JSON.stringify(x)), or null; `path`
 * names x in the message. Depth first with a stack of its own; `onPath` holds the objects
 * being visited (cycles).
 * @param {unknown} x
 * @param {string} path
 * @param {JsonRules} rules
 * @returns {string | null}
 */
export function jsonProblem(x, path, rules) {
  const onPath = new Set();
  /** @type {[unknown, string | null, number][]} [value, its path (null: leaving it), depth] */
  const stack = [[x, path, 0]];
  while (stack.length !== 0) {
    const [v, at, depth] = /** @type {[unknown, string | null, number]} */ (stack.pop());
    if (at === null) {
      onPath.delete(v); // every child of v has been checked
      continue;
    }
    const problem = leafProblem(v, at);
    if (problem !== undefined) {
      if (problem === null) continue;
      return problem;
    }
    if (onPath.has(v)) return `${short(at)} refers back to itself (a cycle)`;
    if (isRevoked(v)) return `${short(at)} is a revoked Proxy (JSON cannot read it)`;
    if (depth >= rules.maxDepth) {
      return `${short(at)} is nested more than ${rules.maxDepth} levels deep, deeper than JSON.stringify can be relied on to write`;
    }
    /** @type {[unknown, string, number][]} */
    const children = [];
    if (Array.isArray(v)) {
      if (Object.getPrototypeOf(v) !== Array.prototype)
        return `${short(at)} is an array of another class (${Object.getPrototypeOf(v)?.constructor?.name || "no prototype of Array's"}), not a plain array (JSON would bring it back as an Array)`;
      for (let i = 0; i < v.length; i++) {
        if (!(i in v)) return `${short(at)}[${i}] is a hole (JSON writes it as null)`;
        children.push([v[i], `${at}[${i}]`, depth + 1]);
      }
      const extra = Reflect.ownKeys(v).find((k) => k !== "length" && !(typeof k === "string" && isIndex(k, v.length)));
      if (extra !== undefined) {
        return `${short(at)} is an array with a property ${describeKey(extra)} that JSON ${extra === "toJSON" ? "would write instead of the array" : "leaves out"}`;
      }
    } else {
      const o = /** @type {object} */ (v);
      const proto = Object.getPrototypeOf(o);
      if (proto !== Object.prototype && proto !== null) {
        return `${short(at)} is ${kind(o)}, not a plain object (JSON would not bring it back as one)`;
      }
      const hidden = Reflect.ownKeys(o).find(
        (k) => typeof k === "symbol" || !Object.prototype.propertyIsEnumerable.call(o, k),
      );
      if (hidden !== undefined)
        return `${short(at)} has a ${typeof hidden === "symbol" ? "symbol key" : "property that is not enumerable"}, ${describeKey(hidden)}, that JSON leaves out`;
      for (const key of Object.keys(o)) {
        const child = /** @type {Record<string, unknown>} */ (o)[key];
        // JSON leaves out undefined properties, and reading one back gives undefined again.
        if (child === undefined && rules.omitUndefined) continue;
        children.push([
          child,
          /^[A-Za-z_$][\w$]*$/.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`,
          depth + 1,
        ]);
      }
    }
    onPath.add(v);
    stack.push([v, null, depth]);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return null;
}

/**
 * Whether `key` is an array index below `length`.
 * @param {string} key
 * @param {number} length
 */
function isIndex(key, length) {
  const n = Number(key);
  return Number.isInteger(n) && n >= 0 && n < length && String(n) === key;
}

/** @param {string | symbol} key */
function describeKey(key) {
  return typeof key === "symbol" ? String(key) : JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key);
}

/**
 * The JSON text of `value`, checked to read back as `value` (see the module doc): what is
 * checked is the text sent. Throws a TypeError naming the offending part by its path (`where`
 * names the value) when it would not; what a getter of the caller's throws, it throws.
 * @param {unknown} value
 * @param {string} where
 * @param {JsonRules} rules
 * @returns {string}
 */
export function jsonText(value, where, rules) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    // A cycle, a bigint, nesting too deep for it, a revoked Proxy, or a getter that threw.
    const problem = jsonProblem(value, where, rules);
    if (problem !== null) throw new TypeError(problem);
    throw e;
  }
  const back = typeof text === "string" ? JSON.parse(text) : undefined;
  const differs = text === undefined ? "" : difference(value, back, 0, rules);
  if (differs === null) return /** @type {string} */ (text);
  const problem = jsonProblem(value, where, rules);
  throw new TypeError(
    problem ??
      `${short(where + differs)} changed while it was read (a getter or Proxy that gives another value each time?): JSON would not bring it back as it is`,
  );
}

/**
 * Where `back` (what the JSON text of `x` reads back as) differs from `x`, as a path suffix
 * ("" for x itself), or null when it does not. Recursive, but no deeper than rules.maxDepth
 * (a deeper x counts as different).
 * @param {unknown} x
 * @param {unknown} back
 * @param {number} depth
 * @param {JsonRules} rules
 * @returns {string | null}
 */
function difference(x, back, depth, rules) {
  if (typeof x !== "object" || x === null) return x === back ? null : "";
  if (typeof back !== "object" || back === null || depth >= rules.maxDepth) return "";
  if (Array.isArray(x)) {
    if (!Array.isArray(back) || !plainArray(x) || x.length !== back.length) return "";
    for (let i = 0; i < x.length; i++) {
      if (!(i in x)) return `[${i}]`;
      const d = difference(x[i], back[i], depth + 1, rules);
      if (d !== null) return `[${i}]${d}`;
    }
    return null;
  }
  const proto = Object.getPrototypeOf(x);
  if (Array.isArray(back) || (proto !== Object.prototype && proto !== null) || hiddenKeys(x)) return "";
  const keys = Object.keys(x);
  const b = /** @type {Record<string, unknown>} */ (back);
  let seen = 0;
  for (const key of keys) {
    const v = /** @type {Record<string, unknown>} */ (x)[key];
    if (v === undefined && rules.omitUndefined) continue;
    const suffix = /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
    if (!Object.hasOwn(b, key)) return suffix;
    seen++;
    const d = difference(v, b[key], depth + 1, rules);
    if (d !== null) return suffix + d;
  }
  return seen === Object.keys(b).length ? null : "";
}

/**
 * The problem of a value that is not an object (null if none), or undefined for an object.
 * @param {unknown} x
 * @param {string} path
 */
function leafProblem(x, path) {
  switch (typeof x) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(x) ? null : `${short(path)} is ${x} (JSON writes it as null)`;
    case "undefined":
      return `${short(path)} is undefined`;
    case "bigint":
      return `${short(path)} is a bigint (JSON cannot write it)`;
    case "function":
    case "symbol":
      return `${short(path)} is a ${typeof x} (JSON cannot write it)`;
  }
  return x === null ? null : undefined;
}

/**
 * A path short enough for a message.
 * @param {string} path
 */
function short(path) {
  return path.length > 160 ? `${path.slice(0, 80)}…${path.slice(-60)}` : path;
}

/**
 * What a value is, for a message: "null", "an array", "a Date", "an object", "a revoked
 * Proxy" or its typeof; never its String() (which may throw or run the caller's code).
 * @param {unknown} x
 */
export function kind(x) {
  if (x === null) return "null";
  if (isRevoked(x)) return "a revoked Proxy";
  if (Array.isArray(x)) return "an array";
  if (typeof x !== "object") return typeof x;
  const proto = Object.getPrototypeOf(x);
  const name = proto?.constructor?.name;
  return name && proto !== Object.prototype ? `a ${name}` : "an object";
}
