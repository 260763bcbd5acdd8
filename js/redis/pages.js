// The pages of a sharded queue (js/redis/shards.js): the K shards' pages of pending items, items
// in flight or dead letters merged in order (deadline, lease expiry, time of death; ties by
// shard), with a cursor that holds each shard's. A page costs K scripts, and one more per
// shard whose page was only partly used (its cursor there).

import { describe, options } from "../engine/arguments.js";
import { checkLimit } from "./options.js";

/** The page kinds, the field each is ordered by and what each page's calls are named. */
const ORDER = /** @type {const} */ ({ pending: "deadline", inFlight: "leaseExpiry", deadLetters: "diedAt" });

/**
 * A page merged from the shards' pages, in order (ties by shard), with a cursor of the
 * shards' cursors: `s` + JSON of one entry per shard, null (from the start), a shard's cursor,
 * or false (that shard has no more).
 * @param {any[]} shards the shard queues
 * @param {keyof typeof ORDER} kind
 * @param {unknown} opts
 * @param {() => Promise<void> | null} gate resolves once the queue's K is checked (after the options are)
 */
export async function mergedPage(shards, kind, opts, gate) {
  const { limit = 100, after } = options(opts, "options", ["limit", "after"], `${kind}()`);
  checkLimit(limit, "options.limit");
  const k = shards.length;
  /** @type {(string | null | false)[]} */
  let from = Array(k).fill(null);
  if (after !== undefined) {
    if (typeof after !== "string")
      throw new TypeError(`options.after must be a cursor (a string), got ${describe(after)}`);
    let parsed;
    try {
      parsed = after.startsWith("s") ? JSON.parse(after.slice(1)) : null;
    } catch {
      parsed = null;
    }
    const ok =
      Array.isArray(parsed) &&
      parsed.length === k &&
      parsed.every((c) => c === null || c === false || typeof c === "string");
    if (!ok)
      throw new RangeError(`options.after must be a cursor that ${kind}() returned as next, got ${describe(after)}`);
    from = parsed;
  }
  await gate();
  const field = ORDER[kind];
  const pages = await Promise.all(
    shards.map((s, i) => (from[i] === false ? null : s[kind]({ limit, after: from[i] ?? undefined }))),
  );
  /** @type {any[]} */
  const items = [];
  const used = Array(k).fill(0);
  while (items.length < limit) {
    let best = -1;
    for (let i = 0; i < k; i++) {
      const it = pages[i]?.items[used[i]];
      if (it && (best < 0 || it[field] < pages[best].items[used[best]][field])) best = i;
    }
    if (best < 0) break;
    items.push(pages[best].items[used[best]++]);
  }
  /** @type {(string | null | false)[]} */
  const next = await Promise.all(
    from.map(async (c, i) => {
      const page = pages[i];
      if (!page) return c;
      if (used[i] === page.items.length) return page.next ?? false;
      if (used[i] === 0) return c;
      // Only part of that shard's page was used: its cursor after the last item used.
      const part = await shards[i][kind]({ limit: used[i], after: c ?? undefined });
      return part.next ?? false;
    }),
  );
  return { items, next: next.every((c) => c === false) ? undefined : `s${JSON.stringify(next)}` };
}
