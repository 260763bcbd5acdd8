// What Redis runs for a call, against a private redis-server: a lone call runs its own
// script's source (only the includes it uses), by that source's SHA, and never the library of
// every script; the library runs only where several queues' calls go in one batch; a script
// loaded for the first time after the server lost its scripts does not overtake the calls
// made before it, which are sent again.

import { test } from "node:test";
import assert from "node:assert/strict";
import { RedisDelayQueue } from "tarry-queue/redis";
import { LIBRARY } from "../../js/redis/lua.js";
import { SCRIPTS } from "../../js/redis/scripts.js";
import { privateRedis } from "./fixture.mjs";

const fx = privateRedis("sl");

let clients = 0;
/** Queues on a client of their own (ioredis options no other test's queues have). */
function openOwn(n = 1) {
  const redis = { host: "127.0.0.1", port: fx.server.port, connectionName: `own-${++clients}` };
  return Array.from({ length: n }, () => new RedisDelayQueue({ redis, name: fx.name(), onerror: () => {} }));
}

/** Which of `shas` the server has (SCRIPT EXISTS). */
async function has(...shas) {
  return (await fx.raw.script("EXISTS", ...shas)).map((x) => x === 1);
}

test("a lone call runs its own script by its SHA, not the library of every script", async () => {
  await fx.raw.script("FLUSH");
  const [q] = openOwn();
  try {
    assert.equal(await q.delayOf("nothing"), undefined);
    assert.equal(await q.get("nothing"), undefined);
    await q.offer(1, 60_000, { id: "a" });
    assert.equal((await q.delayOf("a")) > 0, true);
    assert.deepEqual(await has(SCRIPTS.probe.sha, SCRIPTS.delayOf.sha, SCRIPTS.get.sha, SCRIPTS.offer.sha), [
      true,
      true,
      true,
      true,
    ]);
    assert.deepEqual(await has(LIBRARY.sha, SCRIPTS.take.sha), [false, false], "a script no call ran was loaded");
  } finally {
    await q.close();
  }
});

test("the calls of several queues on one client in one turn run as one batch of the library", async () => {
  await fx.raw.script("FLUSH");
  const queues = openOwn(4);
  try {
    await Promise.all(queues.map((q) => q.size())); // each connection's probe, then its call
    await queues[0].offer("warm", 60_000); // the first offer loads offer's script, alone
    await fx.raw.config("RESETSTAT");
    const ids = await Promise.all(queues.map((q, i) => q.offer(i, 60_000, { id: `x${i}` })));
    assert.deepEqual(ids, ["x0", "x1", "x2", "x3"]);
    const stats = await fx.raw.info("commandstats");
    const runs = [...stats.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    assert.equal(runs, 1, `four queues' offers in one turn took ${runs} script runs`);
    assert.deepEqual(await has(LIBRARY.sha), [true]);
    for (const [i, q] of queues.entries()) assert.equal(await q.size(), i === 0 ? 2 : 1, `queue ${i}`);
  } finally {
    await Promise.all(queues.map((q) => q.close()));
  }
});

test("after SCRIPT FLUSH, a script loaded for the first time waits for the calls made before it, which are sent again", async () => {
  const [q] = openOwn();
  try {
    await q.offer(0, 60_000, { id: "warm" }); // offer's script is loaded; cancel's is not yet
    await fx.raw.script("FLUSH");
    // The offer goes by its SHA and is refused (NOSCRIPT); the cancel loads its script (EVAL):
    // sent at once, it would run before the offer is sent again, and find nothing.
    const [, cancelled] = await Promise.all([q.offer(1, 60_000, { id: "x" }), q.cancel("x")]);
    assert.equal(cancelled, true, "the cancel, loading its script, overtook the offer");
    assert.equal(await q.delayOf("x"), undefined);
    assert.equal(await q.size(), 1);
  } finally {
    await q.close();
  }
});
