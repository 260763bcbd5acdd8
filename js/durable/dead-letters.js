// A DurableDelayQueue's dead letters: the items whose last allowed delivery failed, kept by
// id and in order of death (their seq) for pages; the page, retry, delete and purge calls.

import { checkId, checkTimeout, options, pageOptions } from "../engine/arguments.js";

/** The dead letters: by id, and in order of death (their seq) for pages. */
export class DeadLetters {
  #byId = new Map();
  /** Records sorted by seq; deaths come with a new seq, so they are appended. */
  #bySeq = [];

  get size() {
    return this.#byId.size;
  }

  get(id) {
    return this.#byId.get(id);
  }

  add(record) {
    this.#byId.set(record.id, record);
    const at = this.#after(record.seq);
    if (at === this.#bySeq.length) this.#bySeq.push(record);
    else this.#bySeq.splice(at, 0, record);
  }

  remove(record) {
    if (this.#byId.get(record.id) !== record) return;
    this.#byId.delete(record.id);
    this.#bySeq.splice(this.#after(record.seq - 1), 1);
  }

  /** Up to `limit` records that died after seq `after` (-1: from the first), and whether more follow. */
  page(after, limit) {
    const from = this.#after(after);
    return { records: this.#bySeq.slice(from, from + limit), more: from + limit < this.#bySeq.length };
  }

  /** The records that died at `time` or before. */
  diedBy(time) {
    return this.#bySeq.filter((r) => r.diedAt <= time);
  }

  /** The index of the first record whose seq is greater than `seq` (binary search). */
  #after(seq) {
    let lo = 0;
    let hi = this.#bySeq.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#bySeq[mid].seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * A page of dead letters in order of death: `{ items: [{ id, state: "dead", value,
 * deadline, attempt, reason, diedAt }], next }`; pass `next` back as `after` for the next
 * page (undefined: none). `limit` 1 to 1000, default 100.
 */
export async function deadLetters(store, opts) {
  const { limit, after = -1 } = pageOptions(opts, "deadLetters()", seqOfCursor);
  const from = after;
  store.refuseIfClosed();
  return store.exclusive(() => {
    const { records, more } = store.dead.page(from, limit);
    const items = records.map(({ id, value, deadline, attempt, reason, stack, diedAt }) => ({
      id,
      state: "dead",
      value: structuredClone(value),
      deadline,
      attempt,
      reason,
      ...(stack !== undefined && { stack }),
      diedAt,
    }));
    return { items, next: more ? cursorOf(records[records.length - 1].seq) : undefined };
  });
}

/** Puts a dead letter back, due now, its attempts reset; resolves true if it was dead. */
export async function retryDead(store, id) {
  checkId(id, "id");
  store.refuseIfClosed();
  return store.exclusive(async () => {
    const dead = store.dead.get(id);
    if (dead === undefined) return false;
    const { value } = dead;
    const item = { id, state: "pending", value, deadline: Date.now(), seq: store.next, attempt: 0 };
    await store.commit({ deadRemoves: [dead], adds: [item], next: store.next + 1 });
    return true;
  });
}

/** Removes a dead letter; resolves true if it was dead. */
export async function deleteDead(store, id) {
  checkId(id, "id");
  store.refuseIfClosed();
  return store.exclusive(async () => {
    const dead = store.dead.get(id);
    if (dead === undefined) return false;
    await store.commit({ deadRemoves: [dead] });
    return true;
  });
}

/** Removes the dead letters that died at least `olderThan` ms ago (default 0: all); resolves to how many. */
export async function purgeDead(store, opts) {
  const { olderThan = 0 } = options(opts, "options", ["olderThan"], "purgeDead()");
  checkTimeout(olderThan, "options.olderThan");
  store.refuseIfClosed();
  return store.exclusive(async () => {
    const old = store.dead.diedBy(Date.now() - olderThan);
    if (old.length > 0) await store.commit({ deadRemoves: old });
    return old.length;
  });
}

/** A page cursor: opaque to callers; here, the seq of the last item on the page. */
function cursorOf(seq) {
  return `d${seq.toString(36)}`;
}

/** A dead-letter page's cursor read: the seq after which the page begins, or null for a text that is none. */
function seqOfCursor(cursor) {
  return /^d[0-9a-z]{1,11}$/.test(cursor) ? Number.parseInt(cursor.slice(1), 36) : null;
}
