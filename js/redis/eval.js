// Running one script of a queue's connection (js/redis/connection.js): by SHA (EVALSHA) once the
// connection has sent the library, else as EVAL, which loads it for the calls behind it. Redis
// runs every script as a function of one library (js/redis/lua.js), so it has all of them or
// none. A NOSCRIPT anyway (SCRIPT FLUSH while connected) comes back for every call on its way
// after it too, none of which ran: each is sent again, and while they are (`reloading`), the
// connection sends no call anew, so that none overtakes. A reply that starts with the server's
// time is a sample for the server clock (js/engine/clock.js).

import { localNow, moment } from "../engine/clock.js";
import { isNoScript } from "./errors.js";

/** @typedef {import("./scripts.js").Script} Script */
/** @typedef {import("./client.js").Client} Client */

export class ScriptRunner {
  /** Calls sent whose first reply has not come yet; while a NOSCRIPT's calls are sent again, none is sent anew. */
  #pending = 0;
  /** Whether the calls a NOSCRIPT refused are being sent again. */
  reloading = false;
  #of;

  /**
   * @param {{ keys: () => string[], server: () => { loaded: boolean, clock: import("../engine/clock.js").ServerClock }, client: () => Client, gather: () => import("./gather.js").Gather | undefined | null, explain: (e: unknown) => unknown, resume: () => void }} of
   *   the connection's keys, what it knows of its server (whether the library was sent since
   *   it last connected, its clock), its client and the client's gathering of script calls,
   *   what a Redis error means for the queue, and what sends its line again once a reload is over
   */
  constructor(of) {
    this.#of = of;
  }

  /**
   * Runs `script` with `args`; resolves with its raw reply.
   * @param {Script} script
   * @param {(string | number)[]} args
   */
  async run(script, args) {
    const of = this.#of;
    const client = of.client();
    const keys = of.keys();
    const server = of.server();
    const sent = moment();
    const gather = of.gather();
    /** @returns {Promise<any>} */
    const send = () => {
      if (server.loaded)
        return gather
          ? gather.evalsha(script.sha, keys, args)
          : client.evalsha(script.sha, keys.length, ...keys, ...args);
      server.loaded = true;
      gather?.flush(); // what was gathered goes before (order)
      return client.eval(script.source, keys.length, ...keys, ...args);
    };
    let reply;
    this.#pending++;
    let first = true;
    const answered = () => {
      if (!first) return;
      first = false;
      if (--this.#pending === 0 && this.reloading) {
        this.reloading = false;
        queueMicrotask(() => of.resume());
      }
    };
    try {
      try {
        reply = await send();
      } catch (e) {
        if (!isNoScript(e)) throw e;
        this.reloading = true;
        server.loaded = false;
        const again = send();
        answered();
        reply = await again;
      }
    } catch (e) {
      throw of.explain(e);
    } finally {
      answered();
    }
    if (script.timed) {
      const t = Number(reply[0]);
      if (Number.isFinite(t)) server.clock.sample(sent, t, localNow());
    }
    return reply;
  }
}
