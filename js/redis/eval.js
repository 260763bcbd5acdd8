// Running one script of a queue's connection (js/redis/connection.js). A lone call runs its
// script's own source (js/redis/lua.js: the script and only the includes it uses), by its SHA
// (EVALSHA) once this process has sent that source to the server, else as EVAL, which loads it
// for the calls behind it; the calls of several queues gathered into one run go as the
// library (js/redis/gather.js). What the server has is known per server (Loaded): each SHA
// this process sent since the client last connected (js/redis/hub.js sets `loaded` false on
// each connection; the record starts again then).
//
// Ground rules:
//
// - Never overtaken by a load. A call whose script the server may lack (EVAL) goes only once
//   every call this connection sent before it has its reply: were one of those refused with
//   NOSCRIPT (SCRIPT FLUSH, a restart), the EVAL could otherwise run before it is sent again.
//   The calls made meanwhile wait behind it, in order; when a call before them is refused by a
//   slot migration, they are refused with it (js/redis/connection.js sends them all again, in
//   order). A server that lost its scripts without
//   this process hearing of it (a SCRIPT FLUSH by someone else) can still run a script another
//   queue of the process loads in that moment before this queue's refused call goes again.
// - A NOSCRIPT comes back for every call on its way after it too, none of which ran: each is
//   sent again, in order, and while they are (`reloading`) the connection sends no call anew.
// - A reply that starts with the server's time is a sample for the server clock
//   (js/engine/clock.js).

import { localNow, moment } from "../engine/clock.js";
import { isMigrating, isNoScript } from "./errors.js";

/** @typedef {import("./scripts.js").Script} Script */
/** @typedef {import("./client.js").Client} Client */

/**
 * The scripts a server has, as far as this process knows: the SHAs it sent since the client
 * last connected. A NOSCRIPT forgets them all (`forget`), once per generation: the refusals
 * of the calls sent before it do not forget again what was sent since.
 */
export class Loaded {
  /** @type {Set<string>} */
  #shas = new Set();
  generation = 0;

  /** @param {string} sha */
  has(sha) {
    return this.#shas.has(sha);
  }

  /** @param {string} sha sent as EVAL: the server has it for the calls behind */
  add(sha) {
    this.#shas.add(sha);
  }

  /** @param {number} generation the generation of a call refused with NOSCRIPT */
  forget(generation) {
    if (generation !== this.generation) return;
    this.#shas.clear();
    this.generation++;
  }
}

/** @type {WeakMap<object, Loaded>} each server's record */
const records = new WeakMap();

/**
 * What `server` has, as far as this process knows; a fresh record after a new connection.
 * @param {{ loaded: boolean }} server
 */
export function loadedOn(server) {
  let record = records.get(server);
  if (!record || !server.loaded) {
    record = new Loaded();
    records.set(server, record);
    server.loaded = true;
  }
  return record;
}

/**
 * A call waiting to be sent.
 * @typedef {{ script: Script, args: (string | number)[], resolve: (reply: any) => void, reject: (e: unknown) => void }} Waiting
 */

export class ScriptRunner {
  /** Calls sent whose first reply has not come yet. */
  #pending = 0;
  /** Calls not sent yet, in call order: the first waits for #pending to reach 0 (it loads its script). */
  /** @type {Waiting[]} */
  #waiting = [];
  /** Whether the calls a NOSCRIPT refused are being sent again. */
  reloading = false;
  #of;

  /**
   * @param {{ keys: () => string[], server: () => { loaded: boolean, clock: import("../engine/clock.js").ServerClock }, client: () => Client, gather: () => import("./gather.js").Gather | undefined | null, explain: (e: unknown) => unknown, resume: () => void }} of
   *   the connection's keys, what it knows of its server (its clock; `loaded` false after a
   *   new connection), its client and the client's gathering of script calls, what a Redis
   *   error means for the queue, and what sends its line again once a reload is over
   */
  constructor(of) {
    this.#of = of;
  }

  /**
   * Runs `script` with `args`; resolves with its raw reply.
   * @param {Script} script
   * @param {(string | number)[]} args
   * @returns {Promise<any>}
   */
  run(script, args) {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ script, args, resolve, reject });
      this.#next();
    });
  }

  /** Sends the waiting calls, in order, up to the first that must wait for the replies of those before it. */
  #next() {
    while (this.#waiting.length > 0) {
      const call = this.#waiting[0];
      if (this.#pending > 0 && !loadedOn(this.#of.server()).has(call.script.sha)) return;
      this.#waiting.shift();
      this.#send(call);
    }
  }

  /** @param {Waiting} call */
  async #send({ script, args, resolve, reject }) {
    const of = this.#of;
    const client = of.client();
    const keys = of.keys();
    const server = of.server();
    const sent = moment();
    const gather = of.gather();
    let generation = 0;
    /** @returns {Promise<any>} */
    const send = () => {
      const loaded = loadedOn(server);
      generation = loaded.generation;
      if (loaded.has(script.sha))
        return gather
          ? gather.evalsha(script, keys, args, loaded)
          : client.evalsha(script.sha, keys.length, ...keys, ...args);
      loaded.add(script.sha);
      gather?.flush(); // what was gathered goes before (order)
      return client.eval(script.source, keys.length, ...keys, ...args);
    };
    this.#pending++;
    let first = true;
    const answered = () => {
      if (!first) return;
      first = false;
      if (--this.#pending === 0 && this.reloading) {
        this.reloading = false;
        queueMicrotask(() => of.resume());
      }
      this.#next();
    };
    let reply;
    try {
      try {
        reply = await send();
      } catch (e) {
        if (!isNoScript(e)) throw e;
        this.reloading = true;
        loadedOn(server).forget(generation);
        const again = send();
        answered();
        reply = await again;
      }
    } catch (e) {
      // A slot migration refused it (it did not run): the connection sends it again later, in
      // order, so the calls waiting behind it are refused with it, never sent before it.
      if (isMigrating(e)) for (const waiting of this.#waiting.splice(0)) waiting.reject(of.explain(e));
      answered();
      return reject(of.explain(e));
    }
    answered();
    if (script.timed) {
      const t = Number(reply[0]);
      if (Number.isFinite(t)) server.clock.sample(sent, t, localNow());
    }
    resolve(reply);
  }
}
