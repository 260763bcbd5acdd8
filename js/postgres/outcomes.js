// The outcomes of one queue's deliveries in this process: ack, nack and extend, by the job and
// its delivery's token (each changes the item only while that token holds the lease, and
// resolves false otherwise), with their events.
//
// - The acks of one turn go in one statement (../engine/batch.js's lazy Batcher): carried by
//   this process's next take when it runs first (one round trip and one transaction for both:
//   carry()), else an ack statement of their own at the end of the turn.
// - The nacks go one after another, each once the one before it is answered: they may go on
//   different connections of the pool, and dead letters die in the order their deliveries
//   failed.
// - Each ack statement and nack sent is among the consumer's settlements until answered: the
//   next take waits for them, so that it sees their outcomes (./consumer.js).

import { Batcher } from "../engine/batch.js";
import { OFFER_BATCH } from "./producer.js";
import { idBytes } from "./statements.js";

/** @typedef {import("../engine/job.js").Job} Job */

export class Outcomes {
  #q;
  /** @type {Batcher<[Job, string], boolean>} */
  #acks;
  #nacks = Promise.resolve();

  /**
   * @param {{ query: (what: string, text: string, values: unknown[]) => Promise<any[]>,
   *   st: import("./statements.js").Statements, o: import("./options.js").QueueOptions,
   *   tell: (type: string, detail: () => object) => void, consumer: () => import("./consumer.js").Consumer,
   *   live: () => void }} q
   */
  constructor(q) {
    this.#q = q;
    this.#acks = new Batcher(OFFER_BATCH, (entries) => this.#ackAll(entries), true);
  }

  /** What a job asks of its queue (../engine/job.js). @type {import("../engine/job.js").JobOps} */
  ops = {
    ack: (job, token) => this.#ack(job, token),
    nack: (job, token, delayMs, reason) => this.#settle(this.#nack(job, token, delayMs, reason)),
    extend: (job, token, ms) => this.#extend(job, token, ms),
  };

  /**
   * The acks gathered so far, for the take about to run to carry (the take statement's ack
   * arrays), or undefined when there are none: `settle(rows)` with the take's rows (those of
   * kind 'a' name the items acked) or `fail(e)` when the take failed.
   */
  carry() {
    const batch = this.#acks.detach();
    if (batch.entries.length === 0) return undefined;
    const ids = batch.entries.map(([job]) => idBytes(job.id));
    return {
      ids,
      tokens: batch.entries.map(([, token]) => token),
      settle: (/** @type {any[]} */ rows) =>
        batch.settle(
          this.#acked(
            batch.entries,
            ids,
            rows.filter((r) => r.kind === "a"),
          ),
        ),
      fail: batch.fail,
    };
  }

  /** An ack statement or nack, counted among the consumer's settlements until it is answered. @template T @param {Promise<T>} p */
  #settle(p) {
    const settling = this.#q.consumer().settling;
    settling.add(p);
    p.finally(() => settling.delete(p)).catch(() => {});
    return p;
  }

  /** @param {Job} job @param {string} token */
  async #ack(job, token) {
    this.#q.live();
    return (await this.#acks.add([[job, token]]))[0];
  }

  /** One turn's acks in one statement: each true if its delivery still held the lease. @param {[Job, string][]} entries */
  #ackAll(entries) {
    const q = this.#q;
    const ids = entries.map(([job]) => idBytes(job.id));
    const sent = q.query("ack()", q.st.ack, [q.o.name, ids, entries.map(([, token]) => token)]);
    this.#settle(sent);
    return sent.then((rows) => this.#acked(entries, ids, rows));
  }

  /**
   * Each entry's outcome from the rows of the items acked, with their events.
   * @param {[Job, string][]} entries @param {Buffer[]} ids @param {{ id: Buffer }[]} rows
   */
  #acked(entries, ids, rows) {
    const q = this.#q;
    const acked = new Set(rows.map((r) => r.id.toString("hex")));
    return entries.map(([job], i) => {
      const done = acked.delete(ids[i].toString("hex"));
      if (done) q.tell("acked", () => ({ id: job.id }));
      return done;
    });
  }

  /** @param {Job} job @param {string} token @param {number} delayMs @param {string} reason */
  async #nack(job, token, delayMs, reason) {
    const q = this.#q;
    q.live();
    const values = [q.o.name, idBytes(job.id), token, delayMs, JSON.stringify(reason), q.o.maxAttempts];
    const sent = this.#nacks.then(() => q.query("nack()", q.st.nack, values));
    this.#nacks = sent.then(
      () => {},
      () => {},
    );
    const rows = await sent;
    if (rows.length === 0) return false;
    const [{ outcome, deadline }] = rows;
    if (outcome === "d") q.tell("dead", () => ({ id: job.id, reason }));
    else {
      q.tell("nacked", () => ({ id: job.id, attempt: job.attempt, delayMs, reason }));
      q.consumer().sawHead(deadline);
    }
    return true;
  }

  /** @param {Job} job @param {string} token @param {number | undefined} ms */
  async #extend(job, token, ms) {
    const q = this.#q;
    q.live();
    const values = [q.o.name, idBytes(job.id), token, ms ?? q.o.visibilityTimeout];
    return (await q.query("extend()", q.st.extend, values))[0].expiry !== null;
  }
}
