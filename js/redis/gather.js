// The script calls of many queues on one client, gathered: the calls that the queues sharing a
// client (js/redis/client.js) send by SHA in one turn of the event loop go to Redis as one run
// of the library's batch (js/redis/assemble.js), each call on its own queue's keys, in the
// order they were sent. So ten thousand queues that come due together, offer together or
// open together cost Redis tens of script runs, not ten thousand, and the library's set-up
// (defining every script's function) is paid once per run. A call that goes alone runs its
// own script's source (which defines only what it uses), by its SHA.
//
// Ground rules:
//
// - Only on a plain Redis (a client that is no Cluster): a script's keys must all be on one
//   node of a Cluster, and the queues' keys are spread over its slots, so a Cluster client's
//   calls are each sent on their own.
// - Order. A queue's calls reach the gather in its call order (js/redis/connection.js), and a
//   batch runs its calls in the order they came; a call the connection sends otherwise (EVAL,
//   which loads its script) flushes what is gathered first.
// - When. The calls of a turn go together once the turn's I/O callbacks have run
//   (setImmediate), or as soon as BATCH_CALLS of them (or BATCH_ARGS keys and arguments) are
//   gathered; a call with many arguments (a large offerMany) goes alone; a batch of one call is a
//   plain EVALSHA of its script. So a lone awaited call waits one turn at most, and a
//   consumer's acks and the take that follows them (js/redis/consumer.js) go as one script run
//   in one write. The first batch after the client connected loads the library (EVAL).
// - One call's failure is its own: the batch runs each call under pcall, and a call whose
//   script raised an error rejects with it while the others resolve. A batch Redis refused as
//   a whole did not run at all: on NOSCRIPT every call rejects with it (each connection sends
//   its calls again, in order); a probe (which changes nothing) is sent again on its own, so
//   that an ACL that allows the keys of some queues and not others is found per queue; any
//   other call rejects with the refusal.
//
// Costs: O(keys + arguments) per call, one EVALSHA per batch.

import { setImmediate } from "node:timers";
import { LIBRARY } from "./lua.js";

/** Calls per batch at most, so that no run holds Redis for long. */
const BATCH_CALLS = 128;
/** Keys and arguments per batch at most; a call with more than half of it goes alone. */
const BATCH_ARGS = 8192;

/** @typedef {{ script: import("./scripts.js").Script, keys: string[], args: (string | number)[], resolve: (reply: any) => void, reject: (e: unknown) => void }} Gathered */

export class Gather {
  /** @type {import("./client.js").Client} */
  #client;
  /** @type {Gathered[]} */
  #calls = [];
  /** What the server has (js/redis/eval.js): whether a batch must load the library. */
  /** @type {import("./eval.js").Loaded | null} */
  #loaded = null;
  /** Keys and arguments gathered. */
  #args = 0;
  /** A call was gathered in this turn: its end is on its way. */
  #turn = false;
  #endTurn = () => {
    this.#turn = false;
    this.flush();
  };

  /** @param {import("./client.js").Client} client */
  constructor(client) {
    this.#client = client;
  }

  /**
   * Runs `script` (which the server has) with `keys` and `args`: at once if it is the turn's
   * first call, else in the turn's batch.
   * @param {import("./scripts.js").Script} script
   * @param {string[]} keys
   * @param {(string | number)[]} args
   * @param {import("./eval.js").Loaded} loaded what the server has
   * @returns {Promise<any>}
   */
  evalsha(script, keys, args, loaded) {
    if (!this.#turn) {
      this.#turn = true;
      setImmediate(this.#endTurn);
    }
    const size = keys.length + args.length;
    if (size > BATCH_ARGS / 2) {
      this.flush(); // what was gathered before it goes first
      return this.#client.evalsha(script.sha, keys.length, ...keys, ...args);
    }
    if (this.#args + size > BATCH_ARGS) this.flush();
    this.#loaded = loaded;
    this.#args += size;
    return new Promise((resolve, reject) => {
      this.#calls.push({ script, keys, args, resolve, reject });
      if (this.#calls.length >= BATCH_CALLS) this.flush();
    });
  }

  /** Sends what is gathered now. */
  flush() {
    const calls = this.#calls;
    if (calls.length === 0) return;
    this.#calls = [];
    this.#args = 0;
    const client = this.#client;
    /** @param {Gathered} c */
    const alone = (c) => client.evalsha(c.script.sha, c.keys.length, ...c.keys, ...c.args).then(c.resolve, c.reject);
    if (calls.length === 1) return void alone(calls[0]);
    /** @type {(string | number)[]} */
    const keys = [];
    /** @type {(string | number)[]} */
    const argv = [];
    for (const { script, keys: k, args } of calls) {
      for (const key of k) keys.push(key);
      argv.push(script.name, args.length);
      for (const arg of args) argv.push(arg);
    }
    const loaded = /** @type {import("./eval.js").Loaded} */ (this.#loaded);
    /** @type {Promise<unknown[]>} */
    let run;
    if (loaded.has(LIBRARY.sha)) run = client.evalsha(LIBRARY.sha, keys.length, ...keys, ...argv);
    else {
      loaded.add(LIBRARY.sha);
      run = client.eval(LIBRARY.source, keys.length, ...keys, ...argv);
    }
    run.then(
      (replies) => {
        for (let i = 0; i < calls.length; i++) {
          const r = replies[i];
          if (r instanceof Error) calls[i].reject(r);
          else calls[i].resolve(r);
        }
      },
      (/** @type {unknown} */ e) => {
        const noScript = /^NOSCRIPT/.test(String(/** @type {any} */ (e)?.message));
        for (const c of calls) {
          if (!noScript && c.script.name === "probe") alone(c);
          else c.reject(e);
        }
      },
    );
  }
}
