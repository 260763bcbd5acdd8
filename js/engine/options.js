// What every durable engine (js/redis/, js/postgres/) is given beside its own options, checked:
// values as JSON, delays, deadlines, take()'s and process()'s arguments. Bad input gets a TypeError or
// RangeError naming the argument, before anything changes; the rules every queue shares (an
// options bag takes only its call's options, undefined is the default, null a value) are those
// of ./arguments.js.

import {
  checkMs,
  checkSignal,
  checkTimeout,
  deadlineAt,
  deadlineIn,
  describe,
  isRevoked,
  options,
} from "./arguments.js";

/**
 * Values cross processes as JSON text: what JSON.stringify would silently change or refuse is
 * refused, and so is nesting deeper than it can be relied on to write (it recurses).
 */
export const JSON_RULES = { omitUndefined: false, maxDepth: 1000 };

/**
 * process()'s arguments, checked: the handler and `{ concurrency, retryDelayMs }`, as the
 * slots of the whole queue and the retry delay as a function of the attempt and the error.
 * @param {unknown} handler
 * @param {unknown} opts
 * @returns {{ concurrency: number, retry: (attempt: number, error: unknown) => number }}
 */
export function processOptions(handler, opts) {
  if (typeof handler !== "function") throw new TypeError(`handler must be a function, got ${describe(handler)}`);
  const { concurrency = 1, retryDelayMs = 1000 } = options(
    opts,
    "options",
    ["concurrency", "retryDelayMs"],
    "process()",
  );
  if (typeof concurrency !== "number")
    throw new TypeError(`options.concurrency must be a number, got ${describe(concurrency)}`);
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw new RangeError(`options.concurrency must be a whole number >= 1, got ${describe(concurrency)}`);
  if (typeof retryDelayMs !== "function") checkMs(retryDelayMs, "options.retryDelayMs");
  const retry = typeof retryDelayMs === "function" ? retryDelayMs : () => retryDelayMs;
  return { concurrency, retry };
}

/**
 * take()'s options, checked: `{ signal, timeout }`, an AbortSignal and a number of ms >= 0, each
 * undefined when not given.
 * @param {unknown} opts
 * @returns {{ signal: AbortSignal | undefined, timeout: number | undefined }}
 */
export function takeOptions(opts) {
  const { signal, timeout } = options(opts, "options", ["signal", "timeout"], "take()");
  checkSignal(signal, "options.signal");
  checkTimeout(timeout, "options.timeout");
  return { signal, timeout };
}

/**
 * A delay, checked: a finite number of ms that puts the deadline (counted from now) within a
 * Date's range (../engine/arguments.js).
 * @param {unknown} ms
 * @param {string} name
 * @returns {number}
 */
export function checkDelay(ms, name) {
  deadlineIn(ms, name, Date.now());
  return /** @type {number} */ (ms);
}

/**
 * A deadline (epoch ms or a Date), checked: within a Date's range (../engine/arguments.js).
 * @param {unknown} deadline
 * @param {string} name
 * @returns {number}
 */
export function checkDeadline(deadline, name) {
  return deadlineAt(deadline, name);
}

/**
 * A durable engine's constructor options, checked as a bag: an object with only the options
 * `keys` (`call` names the constructor in messages) and a `name` that is a non-empty string.
 * The engine checks the rest.
 * @param {unknown} opts
 * @param {string[]} keys
 * @param {string} call e.g. "new RedisDelayQueue()"
 * @returns {Record<string, any> & { name: string }}
 */
export function queueBag(opts, keys, call) {
  if (opts === undefined) throw new TypeError("options must be an object with a name, got undefined");
  const o = options(opts, "options", keys, call);
  if (typeof o.name !== "string" || o.name === "")
    throw new TypeError(`options.name must be a non-empty string, got ${describe(o.name)}`);
  return /** @type {Record<string, any> & { name: string }} */ (o);
}

/**
 * A positive number of ms in an options bag, `fallback` when it is undefined.
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {number} fallback
 * @returns {number}
 */
export function positiveOption(o, key, fallback) {
  const v = o[key] === undefined ? fallback : o[key];
  checkMs(v, `options.${key}`);
  if (v <= 0) throw new RangeError(`options.${key} must be positive, got ${v}`);
  return v;
}

/**
 * `options.maxAttempts`: deliveries of an item before it goes to the dead letters, a whole
 * number >= 1 (default 5).
 * @param {unknown} value
 * @returns {number}
 */
export function maxAttemptsOption(value = 5) {
  if (typeof value !== "number") throw new TypeError(`options.maxAttempts must be a number, got ${describe(value)}`);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`options.maxAttempts must be a whole number >= 1, got ${describe(value)}`);
  return value;
}

/**
 * `options.onerror`, checked: a function, or undefined.
 * @param {unknown} onerror
 */
export function checkOnerror(onerror) {
  if (onerror !== undefined && typeof onerror !== "function")
    throw new TypeError(`options.onerror must be a function, got ${describe(onerror)}`);
}

/**
 * offerMany()'s items, each checked before anything is sent: an object of offer options with
 * exactly one of delayMs and deadline, its timing checked; then made into an engine's offer by
 * `offerOf`, given the options, the item's path for messages, its kind ("d" a delay, "a" a
 * deadline) and that delay or deadline in ms.
 * @template T
 * @param {unknown} items
 * @param {(o: Record<string, any>, where: string, kind: "d" | "a", ms: number) => T} offerOf
 * @returns {T[]}
 */
export function checkItems(items, offerOf) {
  if (isRevoked(items) || !Array.isArray(items)) throw new TypeError(`items must be an array, got ${describe(items)}`);
  return items.map((it, i) => {
    const where = `items[${i}]`;
    if (it === null || typeof it !== "object" || isRevoked(it))
      throw new TypeError(`${where} must be an object, got ${describe(it)}`);
    const o = options(it, where, ["value", "delayMs", "deadline", "id", "ifExists"], "offerMany()");
    if ((o.delayMs === undefined) === (o.deadline === undefined))
      throw new TypeError(`${where} must have exactly one of delayMs and deadline`);
    return o.delayMs !== undefined
      ? offerOf(o, where, "d", checkDelay(o.delayMs, `${where}.delayMs`))
      : offerOf(o, where, "a", checkDeadline(o.deadline, `${where}.deadline`));
  });
}

/**
 * What a URL option is when its scheme is none of `schemes`, said without the URL itself (it
 * may hold a password): "a URL of scheme http:", or "a string that is no URL (n characters)";
 * null when it is a URL of one of them.
 * @param {string} url
 * @param {string[]} schemes e.g. ["redis:", "rediss:"]
 * @returns {string | null}
 */
export function otherUrl(url, schemes) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  if (parsed && schemes.includes(parsed.protocol)) return null;
  return parsed ? `a URL of scheme ${parsed.protocol}` : `a string that is no URL (${url.length} characters)`;
}
