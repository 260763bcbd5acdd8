// What the producing calls of PostgresDelayQueue send: offers checked (id, ifExists, the value's
// JSON text, the delay or deadline) with the Redis engine's checks and messages, the `client`
// option, and the offer statement's parameters. Every item is checked before anything is
// sent; a delay's `elapsed` is read as the statement goes out (./connection.js calls the
// values function then), so that the time spent waiting for a connection is not lateness.

import { checkId, checkIfExists, describe, options } from "../engine/arguments.js";
import { newId } from "../engine/ids.js";
import { jsonText } from "../engine/json.js";
import { localNow } from "../engine/clock.js";
import { checkDeadline, checkDelay, checkItems, JSON_RULES } from "../engine/options.js";
import { idBytes } from "./statements.js";

/** Items per offer statement at most: more are split (each statement atomic, in order). */
export const OFFER_BATCH = 1000;
const MODES = { replace: "r", keep: "k", extend: "e" };

/** @typedef {{ id: string, mode: string, kind: "d" | "a", ms: number, json: string }} Offer */

/** A `client` option: a pg client (something with query()), or absent. @param {unknown} client */
export function checkClient(client) {
  if (client !== undefined && (client === null || typeof (/** @type {any} */ (client).query) !== "function"))
    throw new TypeError(`options.client must be a pg client (from pool.connect()), got ${describe(client)}`);
  return /** @type {any} */ (client);
}

/**
 * The `{ client }` of a call that takes only that.
 * @param {unknown} opts @param {string} of the call, for messages
 */
export function clientOf(opts, of) {
  return checkClient(options(opts, "options", ["client"], of).client);
}

/**
 * An offer checked: its id (generated when not given), ifExists, the value's JSON text.
 * @param {unknown} value @param {string} where the value's path, for messages
 * @param {any} o its id and ifExists @param {string} optsName @param {"d" | "a"} kind @param {number} ms
 * @returns {Offer}
 */
function offerOf(value, where, o, optsName, kind, ms) {
  const id = o.id === undefined ? newId() : o.id;
  checkId(id, `${optsName}.id`);
  const ifExists = checkIfExists(o.ifExists, `${optsName}.ifExists`);
  return { id, mode: MODES[ifExists], kind, ms, json: jsonText(value, where, JSON_RULES) };
}

/**
 * offer()'s or offerAt()'s arguments, checked: [the offer, the client].
 * @param {"offer()" | "offerAt()"} of @param {unknown} value @param {unknown} when @param {unknown} opts
 * @returns {[Offer, any]}
 */
export function checkOne(of, value, when, opts) {
  const [kind, ms] = of === "offer()" ? ["d", checkDelay(when, "delayMs")] : ["a", checkDeadline(when, "deadline")];
  const o = options(opts, "options", ["id", "ifExists", "client"], of);
  const client = checkClient(o.client);
  return [offerOf(value, "value", o, "options", /** @type {"d" | "a"} */ (kind), ms), client];
}

/**
 * offerMany()'s items, every one checked.
 * @param {unknown} items
 * @returns {Offer[]}
 */
export function checkMany(items) {
  return checkItems(items, (o, where, kind, ms) => offerOf(o.value, `${where}.value`, o, where, kind, ms));
}

/**
 * The offer statement's parameters, made as it is sent.
 * @param {string} name the queue @param {Offer[]} items @param {number} at the call's local time
 */
export function offerValues(name, items, at) {
  return () => [
    name,
    items.map((it) => idBytes(it.id)),
    items.map((it) => it.json),
    items.map((it) => it.kind),
    items.map((it) => it.ms),
    items.map((it) => it.mode),
    Math.max(0, localNow() - at),
  ];
}

/**
 * Runs `body` in a transaction on a client of the pool: all or nothing.
 * @param {any} pool @param {(client: any) => Promise<void>} body
 */
export async function inTransaction(pool, body) {
  const client = await pool.connect();
  client.on("error", () => {});
  try {
    await client.query("BEGIN");
    await body(client);
    await client.query("COMMIT");
    client.release();
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {});
    client.release(true);
    throw e;
  }
}
