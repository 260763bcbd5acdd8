// What an offerMany that failed part way tells its caller. Its items go in scripts of up to
// 500 (js/engine/batch.js), each atomic: the items of a script that answered are stored, those
// of a script that was refused or never sent are not, and those of a script that got no reply
// may or may not be. The error says which are stored for sure (`stored`: their ids) and gives
// every item's id (`ids`, generated ones included), so that the batch can be offered again
// with those ids and ifExists: "keep": what is stored stays as it is, the rest is added.

import { PartlyDone } from "../engine/batch.js";

/** What an offerMany whose scripts did not all answer rejects with: which items are stored. */
export class OfferManyError extends Error {
  /**
   * @param {string} message
   * @param {string[]} stored the ids of the items stored for sure
   * @param {string[]} ids every item's id, in the batch's order (generated ones included)
   * @param {Error} cause what the first script that did not answer failed with
   */
  constructor(message, stored, ids, cause) {
    super(message, { cause });
    this.name = "OfferManyError";
    this.stored = stored;
    this.ids = ids;
  }
}

/**
 * The error an offerMany of `items` rejects with, from what its scripts did.
 * @param {unknown} e what the batcher rejected with
 * @param {{ id: string }[]} items the batch, checked (each with its id)
 * @returns {unknown}
 */
export function batchFailed(e, items) {
  const done = e instanceof PartlyDone ? e.done : [];
  const cause = e instanceof PartlyDone ? e.cause : e;
  if (!(cause instanceof Error)) return cause;
  const stored = done.map((i) => items[i].id);
  return new OfferManyError(
    `tarry-queue/redis: offerMany stored ${stored.length} of ${items.length} items for sure (error.stored lists their ids), then: ${cause.message} — offering the same items again with their ids (error.ids) and ifExists: "keep" stores the rest and leaves the stored ones as they are`,
    stored,
    items.map((it) => it.id),
    cause,
  );
}
