#!/usr/bin/env node
// What one lone script call costs Redis, from INFO commandstats, against a private
// redis-server (default settings):
//
//   node bench/redis/calls.mjs [--calls N] [--rounds R]       default: 5000 calls, 5 rounds
//
// - set-up: the µs a script spends before its own code runs (defining the functions of what
//   it runs with), per call: the EVALSHA of each source with its own code replaced by
//   `return 0`, less the EVALSHA of `return 0` alone. `library` is the source with every
//   script in it (the batch a gathered run of several calls uses), the others each script's
//   own source (its includes).
// - calls: the µs Redis spent per script run (EVAL and EVALSHA) in N lone awaited calls of a
//   RedisDelayQueue: delayOf and get of an id that is not there, and offer; take of one due
//   item (N items due now, taken by one awaited take() at a time; takeRunsPerItem says how
//   many take scripts that took per item) and ack of one delivery.
//
// Rounds interleave the measurements; each figure is the median over rounds. Prints one JSON
// object; bench/redis/run.mjs (`--only calls`) keeps it in results.json.

import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "../../tools/redis-server.mjs";
import { assemble } from "../../js/redis/assemble.js";
import { libraryOf, loadScripts } from "../../scripts/lua.mjs";

const median = (/** @type {number[]} */ xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** The µs per script run Redis spent since `redis` last reset its statistics, and the runs. */
async function scriptStats(/** @type {Redis} */ redis) {
  const info = await redis.info("commandstats");
  let calls = 0;
  let usec = 0;
  for (const m of info.matchAll(/^cmdstat_(?:eval|evalsha|fcall):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(m[1]);
    usec += Number(m[2]);
  }
  return { calls, usec };
}

/** Each source as it runs set-up only: its code replaced by `return 0`. */
function setUps() {
  const scripts = loadScripts();
  /** @type {Record<string, string>} */
  const sources = { floor: "return 0" };
  const lib = libraryOf(scripts).source;
  // Everything before the batch's loop: every include and every script's function.
  sources.library = `${lib.split("\n-- the batch\n")[0]}\nreturn 0`;
  for (const name of ["delayOf", "get", "offer", "take", "ack"]) {
    const s = scripts[name];
    sources[name] = s.parts.length
      ? assemble(s.head, s.parts, s.includes, "return 0", s.unused)
      : `${s.head}\nreturn 0`;
  }
  return sources;
}

export async function measureCalls({ calls = 5000, rounds = 5 } = {}) {
  const server = await startRedis();
  const raw = new Redis(server.url);
  const q = new RedisDelayQueue({ redis: server.url, name: "calls", onerror: () => {} });
  try {
    const sources = setUps();
    /** @type {Record<string, string>} */
    const shas = {};
    for (const [name, source] of Object.entries(sources)) shas[name] = await raw.script("LOAD", source);
    await q.size();
    /** @type {Record<string, number[]>} */
    const samples = {};
    const keep = (/** @type {string} */ k, /** @type {number} */ v) => (samples[k] ??= []).push(v);
    /** @type {Record<string, () => Promise<unknown>>} */
    const lone = {
      delayOf: () => q.delayOf("nothing"),
      get: () => q.get("nothing"),
      offer: () => q.offer(1, 60_000),
    };
    for (let r = 0; r < rounds; r++) {
      for (const [name, sha] of Object.entries(shas)) {
        await raw.config("RESETSTAT");
        const p = [];
        for (let i = 0; i < calls; i++) p.push(raw.evalsha(sha, 0));
        await Promise.all(p);
        const s = await scriptStats(raw);
        keep(`setup:${name}`, s.usec / s.calls);
      }
      for (const [name, call] of Object.entries(lone)) {
        await raw.config("RESETSTAT");
        for (let i = 0; i < calls; i++) await call();
        const s = await scriptStats(raw);
        keep(`call:${name}`, s.usec / s.calls);
      }
      await q.clear();
      // take and ack of one item each: N items due now, taken one awaited take() at a time
      // (each run leases the one item its one waiting take asks for), then acked one at a time.
      await q.offerMany(Array.from({ length: calls }, (_, i) => ({ value: { order: i }, delayMs: 0 })));
      await raw.config("RESETSTAT");
      const jobs = [];
      for (let i = 0; i < calls; i++) jobs.push(await q.take());
      let s = await scriptStats(raw);
      keep("call:take", s.usec / s.calls);
      keep("runs:take", s.calls / calls);
      await raw.config("RESETSTAT");
      for (const job of jobs) await job.ack();
      s = await scriptStats(raw);
      keep("call:ack", s.usec / s.calls);
      await q.clear();
    }
    const floor = median(samples["setup:floor"]);
    /** @type {Record<string, number>} */
    const setUp = {};
    /** @type {Record<string, number>} */
    const call = {};
    for (const [k, xs] of Object.entries(samples)) {
      const [kind, name] = k.split(":");
      if (kind === "setup" && name !== "floor") setUp[name] = +(median(xs) - floor).toFixed(2);
      if (kind === "call") call[name] = +median(xs).toFixed(2);
    }
    const takeRuns = +median(samples["runs:take"]).toFixed(3);
    return { calls, rounds, floorUs: +floor.toFixed(2), setUpUs: setUp, callUs: call, takeRunsPerItem: takeRuns };
  } finally {
    await q.close();
    raw.disconnect();
    await server.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const flag = (/** @type {string} */ name) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? Number(process.argv[i + 1]) : undefined;
  };
  console.log(JSON.stringify(await measureCalls({ calls: flag("--calls"), rounds: flag("--rounds") })));
}
