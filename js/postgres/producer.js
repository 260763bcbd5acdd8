// The producing calls of PostgresDelayQueue: offer, offerAt, offerMany, cancel and reschedule.
// Offers are checked (id, ifExists, the value's JSON text, the delay or deadline) with the
// Redis engine's checks and messages, and the `client` option; every item is checked before
// anything is sent. A delay's `elapsed` is read as the statement goes out (./connection.js
// calls the values function then), so that the time spent waiting for a connection is not
// lateness. The offers of one turn without a client go in as few statements as possible.

import { checkId, checkIfExists, describe, options } from "../engine/arguments.js";
import { newId } from "../engine/ids.js";
import { jsonText } from "../engine/json.js";
import { Batcher } from "../engine/batch.js";
import { localNow } from "../engine/clock.js";
import { checkDeadline, checkDelay, checkItems, JSON_RULES } from "../engine/options.js";
import { guard } from "./connection.js";
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
  guard(client);
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

/** @typedef {Offer & { at: number }} Timed an offer and its call's local time */

export class Producer {
  #q;
  /** The offer() and offerAt() calls of one turn (without a client), gathered into as few statements as possible. @type {Batcher<Timed, Timed>} */
  #offers;

  /**
   * @param {{ query(what: string, statement: string | import("./statements.js").Prepared, values: unknown[] | (() => unknown[]), client?: any): Promise<any[]>,
   *   st: import("./statements.js").Statements, name: string, pool: () => Promise<any>,
   *   sawHead: (deadline: number) => void, open: () => void }} q
   */
  constructor(q) {
    this.#q = q;
    this.#offers = new Batcher(OFFER_BATCH, async (items) => {
      // The latest call's time for all: an earlier call's item comes out a little late, none early.
      await this.#send("offer()", items, Math.max(...items.map((it) => it.at)), undefined);
      return items;
    });
  }

  /** offer() or offerAt(), timed at `at`. @param {"offer()" | "offerAt()"} of @param {unknown} value @param {unknown} when @param {unknown} opts @param {number} at */
  async offer(of, value, when, opts, at) {
    const [item, client] = checkOne(of, value, when, opts);
    this.#q.open();
    if (client === undefined) await this.#offers.add([{ ...item, at }]);
    else await this.#send(of, [item], at, client);
    return item.id;
  }

  /** offerMany(), timed at `at`. @param {unknown} items @param {unknown} opts @param {number} at */
  async offerMany(items, opts, at) {
    const client = clientOf(opts, "offerMany()");
    const checked = checkMany(items);
    this.#q.open();
    const send = async (/** @type {any} */ c) => {
      for (let i = 0; i < checked.length; i += OFFER_BATCH)
        await this.#send("offerMany()", checked.slice(i, i + OFFER_BATCH), at, c);
    };
    // More than one statement: one transaction for all of them.
    if (client === undefined && checked.length > OFFER_BATCH) await inTransaction(await this.#q.pool(), send);
    else if (checked.length > 0) await send(client);
    return checked.map((it) => it.id);
  }

  /** @param {string} what @param {Offer[]} items @param {number} at the call's local time @param {any} client */
  async #send(what, items, at, client) {
    const q = this.#q;
    const [{ head }] = await q.query(what, q.st.offer, offerValues(q.name, items, at), client);
    // Committed already without a client: this process's consumer hears of the head at once.
    if (client === undefined && head !== null) q.sawHead(head);
  }

  /** @param {unknown} id @param {unknown} opts */
  async cancel(id, opts) {
    checkId(id, "id");
    const client = clientOf(opts, "cancel()");
    const q = this.#q;
    q.open();
    return (await q.query("cancel()", q.st.cancel, [q.name, idBytes(/** @type {string} */ (id))], client)).length > 0;
  }

  /** reschedule(), timed at `at`. @param {unknown} id @param {unknown} delayMs @param {unknown} opts @param {number} at */
  async reschedule(id, delayMs, opts, at) {
    checkId(id, "id");
    const ms = checkDelay(delayMs, "delayMs");
    const client = clientOf(opts, "reschedule()");
    const q = this.#q;
    q.open();
    const values = () => [q.name, idBytes(/** @type {string} */ (id)), ms, Math.max(0, localNow() - at)];
    const [{ found, head }] = await q.query("reschedule()", q.st.reschedule, values, client);
    if (client === undefined && head !== null) q.sawHead(head);
    return found;
  }
}
