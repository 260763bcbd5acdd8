// What PostgresDelayQueue is given, checked: its options with their defaults. Bad input gets a
// TypeError or RangeError naming the argument, before anything is sent; the checks every
// engine shares (ids, delays, deadlines, pages, process()) are those of ../engine/arguments.js and
// ../engine/options.js, imported rather than copied.

import { describe } from "../engine/arguments.js";
import { checkOnerror, maxAttemptsOption, otherUrl, positiveOption, queueBag } from "../engine/options.js";

const QUEUE_OPTIONS = [
  "pg",
  "name",
  "schema",
  "visibilityTimeout",
  "maxAttempts",
  "safetyInterval",
  "commandTimeout",
  "preparedStatements",
  "onerror",
];

/** A schema name: an unquoted-style identifier, short enough for the channel 'tarry.<schema>'. */
const SCHEMA = /^[A-Za-z_][A-Za-z0-9_]{0,49}$/;
/** The longest queue name, in UTF-16 code units: it travels in NOTIFY payloads (8000 bytes at most). */
export const MAX_NAME = 1000;

/**
 * A queue's options with their defaults filled in.
 * @typedef {object} QueueOptions
 * @property {string | object} pg a postgres:// URL or a pg.Pool
 * @property {string} name
 * @property {string} schema
 * @property {number} visibilityTimeout ms a delivered item stays leased
 * @property {number} safetyInterval ms between the checks that cover a missed notification
 * @property {number} commandTimeout ms within which every call settles
 * @property {number} maxAttempts deliveries before an item goes to the dead letters
 * @property {boolean} preparedStatements whether the hot paths' statements are named (prepared once per connection)
 * @property {(error: unknown) => void} onerror errors no call can report
 */

/**
 * The constructor's options, checked, with their defaults.
 * @param {unknown} opts
 * @returns {QueueOptions}
 */
export function queueOptions(opts) {
  const o = queueBag(opts, QUEUE_OPTIONS, "new PostgresDelayQueue()");
  const { name, schema = "tarry" } = o;
  if (name.length > MAX_NAME)
    throw new RangeError(`options.name must be at most ${MAX_NAME} characters, got ${name.length}`);
  if (!name.isWellFormed() || name.includes("\u0000"))
    throw new RangeError("options.name must be well-formed Unicode without U+0000 (Postgres text cannot hold them)");
  if (typeof schema !== "string") throw new TypeError(`options.schema must be a string, got ${describe(schema)}`);
  if (!SCHEMA.test(schema))
    throw new RangeError(
      `options.schema must be letters, digits and _ (not first a digit), at most 50, got ${describe(schema)}`,
    );
  /** @param {string} key @param {number} fallback */
  const positive = (key, fallback) => positiveOption(o, key, fallback);
  const maxAttempts = maxAttemptsOption(o.maxAttempts);
  checkOnerror(o.onerror);
  const { preparedStatements = true } = o;
  if (typeof preparedStatements !== "boolean")
    throw new TypeError(`options.preparedStatements must be a boolean, got ${describe(preparedStatements)}`);
  const pg = o.pg === undefined ? "postgres://127.0.0.1:5432/postgres" : o.pg;
  if (typeof pg === "string") checkUrl(pg);
  else if (pg === null || typeof pg !== "object" || typeof (/** @type {any} */ (pg).connect) !== "function")
    throw new TypeError(`options.pg must be a postgres:// URL or a pg.Pool, got ${describe(pg)}`);
  return {
    pg,
    name,
    schema,
    visibilityTimeout: positive("visibilityTimeout", 5000),
    safetyInterval: positive("safetyInterval", 30_000),
    commandTimeout: positive("commandTimeout", 5000),
    maxAttempts,
    preparedStatements,
    onerror: o.onerror ?? ((/** @type {unknown} */ e) => console.error("tarry-queue/postgres:", e)),
  };
}

/**
 * A postgres:// or postgresql:// URL: anything else is refused at once (the URL itself is not
 * quoted: it may hold a password).
 * @param {string} url
 */
function checkUrl(url) {
  const got = otherUrl(url, ["postgres:", "postgresql:"]);
  if (got !== null) {
    throw new TypeError(`options.pg must be a postgres:// or postgresql:// URL or a pg.Pool, got ${got}`);
  }
}
