// The waiting takes that the K consumers of a sharded queue share (js/redis/shards.js, the
// hooks in js/redis/consumer.js): the take policy of a queue over several shards.

import { Lateness } from "../engine/lateness.js";
import { Takers } from "../engine/takers.js";

/**
 * The waiting takes of a sharded queue's K consumers (js/redis/consumer.js): one line, the part
 * of it that take scripts on their way have reserved or that is set aside for a consumer's
 * next script, one lateness histogram.
 *
 * Until every consumer has answered its first take script (or failed), none takes: the first
 * scripts only learn the heads, so that the first takes go to the earliest. Then, when takes
 * wait, the free ones are set aside for the due consumer whose known head is earliest; what
 * its script does not use is free again when it answers, for the next.
 */
export class Pool {
  takers = new Takers();
  lateness = new Lateness();
  /** @type {import("./consumer.js").Consumer[]} */
  consumers = [];
  /** Takes reserved by scripts on their way, or set aside (#aside) for a consumer's next script. */
  #reserved = 0;
  /** @type {Map<import("./consumer.js").Consumer, number>} */
  #aside = new Map();
  /** @type {Set<import("./consumer.js").Consumer>} the consumers that answered a take script or failed */
  #answered = new Set();

  /** Waiting takes neither reserved nor set aside (none until every consumer has answered once). */
  get free() {
    if (this.#answered.size < this.consumers.length) return 0;
    return Math.max(0, this.takers.size - this.#reserved);
  }

  /**
   * What `c` may take for: the free takes and those set aside for it.
   * @param {import("./consumer.js").Consumer} c
   */
  freeFor(c) {
    return this.free + (this.#aside.get(c) ?? 0);
  }

  /**
   * Reserves up to `n` takes for one take script of `c`: what was set aside for it, then free ones.
   * @param {number} n
   * @param {import("./consumer.js").Consumer} c
   */
  reserve(n, c) {
    this.#release(c);
    const k = Math.min(n, this.free);
    this.#reserved += k;
    return k;
  }

  /** @param {import("./consumer.js").Consumer} c */
  #release(c) {
    this.#reserved -= this.#aside.get(c) ?? 0;
    this.#aside.delete(c);
  }

  /**
   * A take script of `c` answered (its items handed out) or failed: what it reserved is free again.
   * @param {number} n
   * @param {import("./consumer.js").Consumer} c
   */
  unreserve(n, c) {
    this.#reserved -= n;
    if (!this.answered(c) && n > 0 && this.free > 0) this.demand();
  }

  /**
   * `c` answered a take script or failed; returns whether it was the first time.
   * @param {import("./consumer.js").Consumer} c
   */
  answered(c) {
    if (this.#answered.has(c)) return false;
    this.#answered.add(c);
    if (this.free > 0) this.demand(); // the last to answer: the takes may go now
    return true;
  }

  /** Whether a demand() is on its way (in a microtask): the takes of one turn share it. */
  #demanding = false;

  /** Takes wait (or may be taken for again): once per turn, #demand(). */
  demand() {
    if (this.#demanding) return;
    this.#demanding = true;
    queueMicrotask(() => {
      this.#demanding = false;
      this.#demand();
    });
  }

  /**
   * The free takes set aside for the consumer whose known head is earliest among those that
   * are due (the next one if it cannot take now); the others arm for their heads.
   */
  #demand() {
    const by = [...this.consumers].sort((a, b) => a.head - b.head);
    let given = null;
    for (const c of by) {
      const free = this.free;
      if (free === 0) break;
      if (!c.due) continue;
      this.#reserved += free;
      this.#aside.set(c, (this.#aside.get(c) ?? 0) + free);
      if (c.demand()) {
        given = c;
        break;
      }
      this.#release(c);
    }
    for (const c of by) if (c !== given) c.demand();
  }
}
