// What RedisDelayQueue is given, checked: its options (with their defaults), ids and times.
// Bad input gets a TypeError or RangeError naming the argument, before anything changes.

import { checkMs, describe, options } from "../arguments.js";

/**
 * Values cross processes as JSON text: what JSON.stringify would silently change or refuse is
 * refused, and so is nesting deeper than it can be relied on to write (it recurses).
 */
export const JSON_RULES = { omitUndefined: false, maxDepth: 1000 };

/** The longest id, in UTF-16 code units. */
export const MAX_ID_LENGTH = 512;
/** Deadlines must stay within the range of a Date. */
const MAX_TIME = 8.64e15;

/**
 * A queue's options with their defaults filled in.
 * @typedef {object} QueueOptions
 * @property {string | object} redis a URL, ioredis options, or an ioredis client
 * @property {string} name
 * @property {string} prefix
 * @property {number} visibilityTimeout ms a delivered item stays leased
 * @property {number} safetyInterval ms between checks that cover a missed message
 * @property {number} clockTolerance how far back (ms) a call may be stamped
 * @property {number} maxAttempts deliveries before an item goes to the dead letters
 * @property {(error: unknown) => void} onerror errors no call can report
 * @property {boolean} observe whether the queue's events are those of every process (js/redis/observer.js)
 */

/**
 * The constructor's options, checked, with their defaults.
 * @param {unknown} opts
 * @returns {QueueOptions}
 */
export function queueOptions(opts) {
  const o = options(opts, "options");
  const { name, prefix = "tarry:" } = o;
  if (typeof name !== "string" || name === "")
    throw new TypeError(`options.name must be a non-empty string, got ${describe(name)}`);
  if (typeof prefix !== "string") throw new TypeError(`options.prefix must be a string, got ${describe(prefix)}`);
  for (const [what, s] of [
    ["options.name", name],
    ["options.prefix", prefix],
  ]) {
    if (/[{}]/.test(s))
      throw new RangeError(`${what} must not contain { or }: the queue's keys use {name} as their hash tag`);
  }
  /** @param {string} key @param {number} fallback */
  const positive = (key, fallback) => {
    const v = o[key] ?? fallback;
    checkMs(v, `options.${key}`);
    if (v <= 0) throw new RangeError(`options.${key} must be positive, got ${v}`);
    return v;
  };
  const maxAttempts = o.maxAttempts ?? 5;
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1)
    throw new RangeError(`options.maxAttempts must be a whole number >= 1, got ${describe(maxAttempts)}`);
  if (o.onerror !== undefined && typeof o.onerror !== "function")
    throw new TypeError(`options.onerror must be a function, got ${describe(o.onerror)}`);
  const redis = o.redis ?? "redis://127.0.0.1:6379";
  if (typeof redis !== "string" && (redis === null || typeof redis !== "object"))
    throw new TypeError(`options.redis must be a URL, ioredis options or an ioredis client, got ${describe(redis)}`);
  return {
    redis,
    name,
    prefix,
    visibilityTimeout: positive("visibilityTimeout", 5000),
    safetyInterval: positive("safetyInterval", 5000),
    clockTolerance: positive("clockTolerance", 1000),
    maxAttempts,
    onerror: o.onerror ?? ((/** @type {unknown} */ e) => console.error("tarry-queue/redis:", e)),
    observe: observeOption(o.observe),
  };
}

/** @param {unknown} observe */
function observeOption(observe = false) {
  if (typeof observe !== "boolean") throw new TypeError(`options.observe must be a boolean, got ${describe(observe)}`);
  return observe;
}

/**
 * An id: a non-empty, well-formed string of at most MAX_ID_LENGTH code units.
 * @param {unknown} id
 * @param {string} name
 * @returns {asserts id is string}
 */
export function checkId(id, name) {
  if (typeof id !== "string") throw new TypeError(`${name} must be a string, got ${describe(id)}`);
  if (id === "") throw new RangeError(`${name} must not be empty`);
  if (id.length > MAX_ID_LENGTH)
    throw new RangeError(`${name} must be at most ${MAX_ID_LENGTH} characters, got ${id.length}`);
  if (!id.isWellFormed()) throw new RangeError(`${name} must be well-formed Unicode (it has a lone surrogate)`);
}

/**
 * A delay or deadline (ms, already checked to be a finite number) within the range of a Date.
 * @param {number} ms
 * @param {string} name
 */
export function checkRange(ms, name) {
  if (Math.abs(ms) > MAX_TIME) throw new RangeError(`${name} must be within ±${MAX_TIME} ms, got ${ms}`);
  return ms;
}
