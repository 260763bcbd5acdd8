// What a Redis queue's connection (js/redis/connection.js) checks before its first call, and
// again after every reconnection: the probe script (js/redis/lua/probe.lua) finds, without
// changing anything, what the Redis user may not do (an ACL without the queue's channel, keys
// or commands) and whether the queue's shard count is the one it was created with
// (js/redis/shards.js). The calls waiting then reject with an error naming the rules to add
// (js/redis/errors.js), and the next call probes again, so that a fixed ACL is seen. A probe
// refused by a Cluster slot migration changes nothing, so it goes again after the line's
// back-off (js/redis/line.js); while it waits, a call that times out says the slot was migrating.

import { isClusterRefusal, isLasting, isMigrating, notACluster, refusedByAcl, shardsRefused } from "./errors.js";
import { SCRIPTS } from "./scripts.js";

/**
 * What the probe runs on.
 * @typedef {object} Probing
 * @property {import("./eval.js").ScriptRunner} scripts
 * @property {string} channel the queue's head channel
 * @property {number} shards what the queue was created with, or 0 for a shard that does not keep it
 * @property {object} where what errors say of the queue
 * @property {import("./line.js").Line} line the calls waiting for it
 * @property {() => boolean} cluster whether the client is a Redis Cluster client
 * @property {() => void} send sends the line, once the probe passed
 */

export class Probe {
  /** @type {Probing} */
  #p;
  /** Whether the probe found nothing refused on this connection; whether it runs now. */
  #passed = false;
  #running = false;
  /** @type {unknown} the last refusal of the probe by a slot migration, until it runs */
  #refused = null;

  /** @param {Probing} probing */
  constructor(probing) {
    this.#p = probing;
  }

  /** Whether the probe passed on this connection. */
  get passed() {
    return this.#passed;
  }

  /** The probe's last refusal by a slot migration, while it waits to go again; else null. */
  get refused() {
    return this.#refused;
  }

  /** A new connection: it may have another ACL. */
  reset() {
    this.#passed = false;
  }

  /** Runs the probe script (unless it runs, or no call waits), then sends the line. */
  run() {
    const { scripts, channel, shards, where, line, cluster, send } = this.#p;
    if (this.#running || !line.waiting) return;
    this.#running = true;
    const probe = SCRIPTS.probe;
    scripts
      .run(probe, probe.argv({ channel, shards }))
      .then((reply) => {
        const found = probe.reply(reply);
        const refused = shardsRefused(found, where, shards) ?? refusedByAcl(found, where);
        if (refused) throw refused;
        this.#passed = true;
        this.#refused = null;
        line.probed();
      })
      .catch((e) => {
        // A permission missing, or a cluster node reached through a client that is no Cluster:
        // the calls waiting fail now (the next call probes again).
        // A slot migration refused it (it changes nothing, so it may go again): it goes again
        // after the back-off. Anything else (the connection dropped): they wait for the next
        // connection.
        if (isLasting(e)) line.rejectUnsent(/** @type {Error} */ (e));
        else if (!cluster() && isClusterRefusal(e)) line.rejectUnsent(notACluster(e));
        else if (isMigrating(e) && cluster()) {
          this.#refused = e;
          line.retryLater();
        }
      })
      .finally(() => {
        this.#running = false;
        if (this.#passed) send();
      });
  }

  /** The line's retry alarm rang: a probe a slot migration refused goes again, after a longer back-off next time. */
  retrying() {
    if (!this.#refused || this.#passed) return;
    this.#p.line.backOff();
    this.#p.send(); // probes again
  }
}
