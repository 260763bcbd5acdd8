// The producing side of a Redis queue: an offer's arguments checked into an Offer (its id,
// generated when not given, what it does when that id is present, its delay or deadline, the
// value's JSON text, when it was called), every one before anything is sent; and one offer
// script run, followed by WAIT when the queue asks for replicas (js/redis/durability.js).
// `Producer`, the producing calls of js/redis.js, gathers a turn's offers into such runs
// (js/engine/batch.js); a sharded queue (js/redis/shards.js) checks here too, then sends each
// item to its shard. A reschedule is one script too, stamped like an offer.

import { checkId, checkIfExists, options } from "../engine/arguments.js";
import { newId } from "../engine/ids.js";
import { jsonText } from "../engine/json.js";
import { moment } from "../engine/clock.js";
import { batchFailed } from "./batch-error.js";
import { fewerReplicas } from "./durability.js";
import { checkItems } from "../engine/options.js";
import { checkDeadline, checkDelay, JSON_RULES } from "./options.js";
import { SCRIPTS } from "./scripts.js";

/** Items per offer script at most: more are split, so that no script holds Redis for long. */
const OFFER_BATCH = 500;

/**
 * An offer, checked: its id, what it does when that id is present, how its deadline is given
 * ("d" a delay from its call, "a" an absolute deadline), that delay or deadline, the value's
 * JSON text, and when it was called.
 * @typedef {{ id: string, ifExists: "replace" | "keep" | "extend", kind: "d" | "a", ms: number, json: string, at: import("../engine/clock.js").Moment }} Offer
 */

/**
 * offer()'s arguments, checked.
 * @param {unknown} value
 * @param {unknown} delayMs
 * @param {unknown} opts
 * @param {import("../engine/clock.js").Moment} at
 */
export function checkOffer(value, delayMs, opts, at) {
  const ms = checkDelay(delayMs, "delayMs");
  return itemOf(value, "value", opts, "options", "offer()", "d", ms, at);
}

/**
 * offerAt()'s arguments, checked.
 * @param {unknown} value
 * @param {unknown} deadline
 * @param {unknown} opts
 * @param {import("../engine/clock.js").Moment} at
 */
export function checkOfferAt(value, deadline, opts, at) {
  const ms = checkDeadline(deadline, "deadline");
  return itemOf(value, "value", opts, "options", "offerAt()", "a", ms, at);
}

/**
 * offerMany()'s items, checked, every one before anything is sent.
 * @param {unknown} items
 * @param {import("../engine/clock.js").Moment} at
 * @returns {Offer[]}
 */
export function checkMany(items, at) {
  return checkItems(items, (o, where, kind, ms) =>
    itemOf(o.value, `${where}.value`, { id: o.id, ifExists: o.ifExists }, where, "offerMany()", kind, ms, at),
  );
}

/**
 * An offer checked: its id (generated when not given), ifExists and the value's JSON text.
 * @param {unknown} value
 * @param {string} where the value's path, for messages
 * @param {unknown} opts
 * @param {string} optsName
 * @param {string} of the call, for messages
 * @param {"d" | "a"} kind
 * @param {number} ms
 * @param {import("../engine/clock.js").Moment} at
 * @returns {Offer}
 */
function itemOf(value, where, opts, optsName, of, kind, ms, at) {
  const o = optsName === "options" ? options(opts, optsName, ["id", "ifExists"], of) : /** @type {any} */ (opts);
  const id = o.id === undefined ? newId() : o.id;
  checkId(id, `${optsName}.id`);
  const ifExists = checkIfExists(o.ifExists, `${optsName}.ifExists`);
  return { id, ifExists, kind, ms, json: jsonText(value, where, JSON_RULES), at };
}

/**
 * Runs one offer script for `items` (one script's worth) on `queue`'s connection, then WAIT
 * when the queue asks for replicas; resolves with the items once Redis has them.
 * @param {{ conn: import("./connection.js").Connection, channel: string, options: import("./options.js").QueueOptions, consumer: import("./consumer.js").Consumer, vanished: () => void }} queue
 *   (`vanished`: tells that a script found the sequence counter gone)
 * @param {Offer[]} items
 * @returns {Promise<Offer[]>}
 */
export function sendOffers({ conn, channel, options: o, consumer, vanished: lost }, items) {
  const first = items[0].at;
  const params = () => ({
    channel,
    // One stamp for the run, the first call's; a later call's delay counts from its own call.
    stamp: conn.clock.stamp(first),
    first: first.at,
    tolerance: o.clockTolerance,
    items,
  });
  const ran = conn.run(SCRIPTS.offer, params).then(({ head, vanished }) => {
    if (vanished) lost();
    consumer.sawHead(head);
    return items;
  });
  const asked = o.waitForReplicas;
  if (!asked) return ran;
  // Once the script has answered, on the same connection: WAIT counts the replicas that have
  // every write this connection made so far, the script's included. Not sooner: a command
  // pipelined with WAIT (ioredis' auto-pipelining) has its reply only once WAIT answered. WAIT
  // blocks for up to its timeout, and Redis answers it up to a server tick (~100 ms) after:
  // its limit counts from there, so that it fails saying how many replicas confirmed.
  const wait = (/** @type {import("./client.js").Client} */ client) => client.wait(asked.count, asked.timeout);
  const waited = ran.then(() => conn.command(wait, asked.timeout));
  return Promise.all([ran, waited]).then(([offered, acknowledged]) => {
    if (Number(acknowledged) < asked.count) throw fewerReplicas(Number(acknowledged), asked);
    return offered;
  });
}

/**
 * What the producing calls of a queue run on: its connection and head channel, its options,
 * its consumer (told of the heads they place), `vanished` (a script found the sequence counter
 * gone: js/redis/durability.js) and `open` (throws ClosedError once the queue is closing).
 * @typedef {{ conn: import("./connection.js").Connection, channel: string, options: import("./options.js").QueueOptions, consumer: import("./consumer.js").Consumer, vanished: () => void, open: () => void }} Queue
 */

/** The producing calls of one RedisDelayQueue (offers, cancel, reschedule), as js/redis.js documents them. */
export class Producer {
  /** @type {Queue} */
  #q;
  /** The offers made in one turn, gathered: one script per OFFER_BATCH items (each script atomic). @type {import("../engine/batch.js").Batcher<Offer, Offer>} */
  #offers;

  /** @param {Queue} queue */
  constructor(queue) {
    this.#q = queue;
    this.#offers = queue.conn.batcher(SCRIPTS.offer, OFFER_BATCH, (/** @type {Offer[]} */ items) =>
      sendOffers(queue, items),
    );
  }

  /** @param {unknown} value @param {number} delayMs @param {{ id?: string, ifExists?: "replace" | "keep" | "extend" }} [opts] */
  async offer(value, delayMs, opts) {
    const item = checkOffer(value, delayMs, opts, moment());
    this.#q.open();
    await this.#offers.add([item]);
    return item.id;
  }

  /** @param {unknown} value @param {number | Date} deadline @param {{ id?: string, ifExists?: "replace" | "keep" | "extend" }} [opts] */
  async offerAt(value, deadline, opts) {
    const item = checkOfferAt(value, deadline, opts, moment());
    this.#q.open();
    await this.#offers.add([item]);
    return item.id;
  }

  /** @param {{ value: unknown, delayMs?: number, deadline?: number | Date, id?: string, ifExists?: "replace" | "keep" | "extend" }[]} items */
  async offerMany(items) {
    const checked = checkMany(items, moment());
    this.#q.open();
    try {
      await this.#offers.add(checked);
    } catch (e) {
      // One script is all or nothing; a batch of several says which of them are stored.
      throw checked.length > OFFER_BATCH ? batchFailed(e, checked) : e;
    }
    return checked.map((it) => it.id);
  }

  /** Items checked already (a sharded queue's, for this shard), gathered like this queue's own. @param {Offer[]} items */
  send(items) {
    this.#q.open();
    return this.#offers.add(items);
  }

  /** Removes a pending item: true if it was pending. @param {string} id */
  async cancel(id) {
    checkId(id, "id");
    this.#q.open();
    return this.#q.conn.run(SCRIPTS.cancel, { id });
  }

  /** A new delay for a pending item, counted from this call (stamped like an offer): true if it was pending. @param {string} id @param {number} delayMs */
  async reschedule(id, delayMs) {
    const at = moment();
    checkId(id, "id");
    const ms = checkDelay(delayMs, "delayMs");
    const { conn, channel, options: o, consumer, vanished: lost, open } = this.#q;
    open();
    const params = () => ({
      channel,
      stamp: conn.clock.stamp(at),
      tolerance: o.clockTolerance,
      id,
      kind: /** @type {const} */ ("d"),
      ms,
    });
    const { found, head, vanished } = await conn.run(SCRIPTS.reschedule, params);
    if (vanished) lost();
    consumer.sawHead(head);
    return found;
  }
}
