// What RedisDelayQueue is given, checked: its options (with their defaults), offers' options,
// times, pages. Bad input gets a TypeError or RangeError naming the argument, before anything
// changes; the rules every engine shares (an options bag takes only its call's options, an
// option set to undefined is its default, null is a value) are those of ../engine/arguments.js.

import { checkMs, describe, options } from "../engine/arguments.js";
import { redacted } from "./errors.js";
import { checkOnerror, maxAttemptsOption, otherUrl, positiveOption, queueBag } from "../engine/options.js";

// The checks every durable engine shares, where the Redis modules have always found them.
export { checkDeadline, checkDelay, JSON_RULES, processOptions, takeOptions } from "../engine/options.js";
export { checkCursor, checkLimit, cursorOf } from "../engine/cursors.js";

/** The most hash tags one queue may be spread over (`shards`: js/redis/shards.js). */
export const MAX_SHARDS = 64;

const QUEUE_OPTIONS = [
  "redis",
  "name",
  "prefix",
  "visibilityTimeout",
  "maxAttempts",
  "safetyInterval",
  "clockTolerance",
  "commandTimeout",
  "observe",
  "waitForReplicas",
  "shards",
  "onerror",
];

/**
 * A queue's options with their defaults filled in.
 * @typedef {object} QueueOptions
 * @property {string | object} redis a URL, ioredis options, or an ioredis client
 * @property {string} name
 * @property {string} prefix
 * @property {number} visibilityTimeout ms a delivered item stays leased
 * @property {number} safetyInterval ms between checks that cover a missed message
 * @property {number} clockTolerance how far back (ms) a call may be stamped
 * @property {number} commandTimeout ms within which every call settles
 * @property {number} maxAttempts deliveries before an item goes to the dead letters
 * @property {{ count: number, timeout: number } | null} waitForReplicas replicas that must have an
 *   offer before it resolves, and how long (ms) to wait for them; null: resolve once the primary has it
 * @property {(error: unknown) => void} onerror errors no call can report
 * @property {boolean} observe whether the queue's events are those of every process (js/redis/observer.js)
 * @property {number} shards the hash tags its items are spread over (js/redis/shards.js); for one
 *   shard of a sharded queue, the number its probe checks the queue was created with, or 0 for none
 */

/**
 * The constructor's options, checked, with their defaults.
 * @param {unknown} opts
 * @returns {QueueOptions}
 */
export function queueOptions(opts) {
  const o = queueBag(opts, QUEUE_OPTIONS, "new RedisDelayQueue()");
  const { name, prefix = "tarry:" } = o;
  if (typeof prefix !== "string") throw new TypeError(`options.prefix must be a string, got ${describe(prefix)}`);
  for (const [what, s] of [
    ["options.name", name],
    ["options.prefix", prefix],
  ]) {
    if (/[{}]/.test(s))
      throw new RangeError(`${what} must not contain { or }: the queue's keys use {name} as their hash tag`);
    // Redis gets strings as UTF-8, where every lone surrogate becomes U+FFFD: two names would share keys.
    if (!s.isWellFormed())
      throw new RangeError(
        `${what} must be well-formed Unicode (it has a lone surrogate, which Redis cannot tell apart)`,
      );
  }
  /** @param {string} key @param {number} fallback */
  const positive = (key, fallback) => positiveOption(o, key, fallback);
  const maxAttempts = maxAttemptsOption(o.maxAttempts);
  checkOnerror(o.onerror);
  const redis = o.redis === undefined ? "redis://127.0.0.1:6379" : o.redis;
  if (typeof redis === "string") checkUrl(redis);
  else if (redis === null || typeof redis !== "object")
    throw new TypeError(`options.redis must be a URL, ioredis options or an ioredis client, got ${describe(redis)}`);
  const commandTimeout = positive("commandTimeout", 5000);
  return {
    redis,
    name,
    prefix,
    visibilityTimeout: positive("visibilityTimeout", 5000),
    safetyInterval: positive("safetyInterval", 5000),
    clockTolerance: positive("clockTolerance", 1000),
    commandTimeout,
    maxAttempts,
    waitForReplicas: replicasOption(o.waitForReplicas, redis, commandTimeout),
    onerror: onerrorOption(o.onerror),
    observe: observeOption(o.observe),
    shards: shardsOption(o.shards),
  };
}

/**
 * What the queue tells of errors no call can report: the given function (console.error by
 * default), every error redacted first (no URL's password in it, nor in its causes).
 * @param {((error: unknown) => void) | undefined} onerror
 * @returns {(error: unknown) => void}
 */
function onerrorOption(onerror) {
  const tell = onerror ?? ((/** @type {unknown} */ e) => console.error("tarry-queue/redis:", e));
  return (e) => tell(redacted(e));
}

/** @param {unknown} shards */
function shardsOption(shards = 1) {
  if (typeof shards !== "number") throw new TypeError(`options.shards must be a number, got ${describe(shards)}`);
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS)
    throw new RangeError(`options.shards must be a whole number from 1 to ${MAX_SHARDS}, got ${describe(shards)}`);
  return shards;
}

/** @param {unknown} observe */
function observeOption(observe = false) {
  if (typeof observe !== "boolean") throw new TypeError(`options.observe must be a boolean, got ${describe(observe)}`);
  return observe;
}

/**
 * `waitForReplicas`, checked: `{ count, timeout }`, a whole number of replicas >= 1 and the ms
 * (default 1000) that WAIT may block, less than commandTimeout so that the call settles with
 * WAIT's answer. Not for a Cluster client, which cannot send WAIT to the shard of the queue.
 * @param {unknown} value
 * @param {string | object} redis
 * @param {number} commandTimeout
 * @returns {{ count: number, timeout: number } | null}
 */
function replicasOption(value, redis, commandTimeout) {
  if (value === undefined) return null;
  const name = "options.waitForReplicas";
  const o = options(value, name, ["count", "timeout"], "new RedisDelayQueue()");
  const { count, timeout = 1000 } = o;
  if (typeof count !== "number") throw new TypeError(`${name}.count must be a number, got ${describe(count)}`);
  if (!Number.isSafeInteger(count) || count < 1)
    throw new RangeError(`${name}.count must be a whole number >= 1, got ${describe(count)}`);
  checkMs(timeout, `${name}.timeout`);
  if (timeout <= 0 || !Number.isInteger(timeout))
    throw new RangeError(`${name}.timeout must be a whole number of ms > 0, got ${timeout}`);
  if (timeout >= commandTimeout)
    throw new RangeError(
      `${name}.timeout (${timeout} ms) must be less than options.commandTimeout (${commandTimeout} ms), so that an offer settles with what the replicas answered`,
    );
  if (/** @type {any} */ (redis)?.isCluster === true)
    throw new TypeError(`${name} is not supported with a Redis Cluster client`);
  return { count, timeout };
}

/**
 * A redis:// or rediss:// URL (ioredis takes any other string for a socket path, and waits).
 * @param {string} url
 */
function checkUrl(url) {
  const got = otherUrl(url, ["redis:", "rediss:"]);
  if (got !== null) {
    throw new TypeError(
      `options.redis must be a redis:// or rediss:// URL, got ${got} (for a Unix socket, pass ioredis options: { path })`,
    );
  }
}
