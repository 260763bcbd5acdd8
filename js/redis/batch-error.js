// What an offerMany that failed part way tells its caller. Its items go in scripts of up to
// 500 (js/redis/batch.js), each atomic: the items of a script that answered are stored, those
// of a script that was refused or never sent are not, and those of a script that got no reply
// may or may not be. The error says which are stored for sure (`stored`: their ids) and gives
// every item's id (`ids`, generated ones included), so that the batch can be offered again
// with those ids and ifExists: "keep": what is stored stays as it is, the rest is added.

import { PartlyDone } from "./batch.js";

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
  const error = new Error(
    `tarry-queue/redis: offerMany stored ${stored.length} of ${items.length} items for sure (error.stored lists their ids), then: ${cause.message} — offering the same items again with their ids (error.ids) and ifExists: "keep" stores the rest and leaves the stored ones as they are`,
    { cause },
  );
  return Object.assign(error, { stored, ids: items.map((it) => it.id) });
}
