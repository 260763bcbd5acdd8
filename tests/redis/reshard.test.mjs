// A queue whose hash slot moves between the masters of a Redis Cluster while a producer offers
// and two consumers take and ack: (a) a migration held open by hand for seconds (CLUSTER
// SETSLOT IMPORTING / MIGRATING, MIGRATE of some of the queue's keys, a wait, then the rest and
// SETSLOT NODE), (b) `redis-cli --cluster reshard` moving the slot, made to take seconds by
// other keys in the slot, moved one per MIGRATE. While the slot migrates,
// the scripts get TRYAGAIN, ASK and MOVED; none of it may reach a caller: every offer
// resolves, every item is delivered once, none early, and no take or ack rejects.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { Cluster } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startCluster } from "../../tools/redis-server.mjs";

const run = promisify(execFile);
const FILLER = 8000;

let cluster;
let admin;
let first; // the queue of the first test
before(async () => {
  cluster = await startCluster(3);
  admin = new Cluster(cluster.seeds);
});
after(async () => {
  admin?.disconnect();
  await cluster?.stop();
});

/** The slot ranges of the cluster now: [{ from, to, port, id }]. */
async function ranges() {
  const slots = await admin.cluster("SLOTS");
  return slots.map(([from, to, [, port, id]]) => ({ from, to, port, id }));
}

/** The master serving `slot` now: { node (of cluster.nodes), id }. */
async function ownerOf(slot) {
  const r = (await ranges()).find((r) => slot >= r.from && slot <= r.to);
  return { node: cluster.nodes.find((n) => n.port === r.port), id: r.id };
}

/** The id of `node`. */
const idOf = (node) => node.cli("cluster", "myid");

/**
 * A queue name (not in `taken`) whose slot is the lowest slot its master serves, so that
 * `--cluster reshard` of one slot from that master moves it.
 */
async function nameAtTheStartOfARange(taken) {
  const lowest = new Map(); // id -> its lowest slot
  for (const r of await ranges()) lowest.set(r.id, Math.min(lowest.get(r.id) ?? 16384, r.from));
  const firsts = new Set(lowest.values());
  for (let i = 0; i < 200_000; i += 2000) {
    const names = Array.from({ length: 2000 }, (_, j) => `reshard-${i + j}`);
    const slots = await Promise.all(names.map((n) => admin.cluster("KEYSLOT", `{${n}}`)));
    const j = slots.findIndex((s, j) => firsts.has(s) && !taken.has(names[j]));
    if (j >= 0) return { name: names[j], slot: slots[j] };
  }
  throw new Error("no queue name found at the start of a master's slots");
}

/**
 * A producer offering `count` items (single offers, 8 at a time, paced over ~`spreadMs`, each
 * due in 300-2500 ms) and two consumers (a take() loop and a process() worker), each on its
 * own Cluster client, while `move()` runs. Resolves with what the callers saw.
 */
async function runWhile(name, move, { count = 1000, spreadMs = 5000 } = {}) {
  const clients = [0, 1, 2].map(() => new Cluster(cluster.seeds, { enableAutoPipelining: true }));
  const reported = [];
  const open = (redis) => new RedisDelayQueue({ redis, name, onerror: (e) => reported.push(String(e?.message ?? e)) });
  const [producer, takerQ, workerQ] = clients.map(open);
  const rejected = []; // errors that reached a caller
  const offered = new Map(); // id -> earliest time (this process's clock) it may come out
  const got = []; // [id, at, deadline, attempt]
  let stopped = false;
  const taker = (async () => {
    for (;;) {
      let job;
      try {
        job = await takerQ.take({ timeout: 500 });
      } catch (e) {
        if (stopped) return;
        rejected.push(`take: ${e.message}`);
        continue;
      }
      if (!job) {
        if (stopped) return;
        continue;
      }
      got.push([job.id, Date.now(), job.deadline, job.attempt]);
      job.ack().catch((e) => rejected.push(`ack: ${e.message}`));
    }
  })();
  const worker = workerQ.process(
    async (_value, job) => {
      got.push([job.id, Date.now(), job.deadline, job.attempt]);
    },
    { concurrency: 8 },
  );
  const lanes = 8;
  const pause = (spreadMs * lanes) / count;
  let next = 0;
  const produce = Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < count) {
        const n = next++;
        const delay = 300 + Math.floor(Math.random() * 2200);
        const at = Date.now();
        try {
          await producer.offer({ n }, delay, { id: `i-${n}` });
          offered.set(`i-${n}`, at + delay);
        } catch (e) {
          rejected.push(`offer: ${e.message}`);
        }
        await sleep(pause);
      }
    }),
  );
  const started = Date.now();
  await sleep(300);
  await move();
  const moved = Date.now() - started;
  await produce;
  const end = Date.now() + 8000;
  while (Date.now() < end && new Set(got.map(([id]) => id)).size < offered.size) await sleep(50);
  await sleep(300); // a second delivery would show up here
  stopped = true;
  await worker.close();
  await taker;
  await Promise.all([producer, takerQ, workerQ].map((q) => q.close()));
  for (const c of clients) c.disconnect();
  return { offered, got, rejected, reported, moved };
}

function check({ offered, got, rejected, reported }, count) {
  const summary = (list) => {
    const by = new Map();
    for (const m of list) {
      const k = m.slice(0, 120);
      by.set(k, (by.get(k) ?? 0) + 1);
    }
    return [...by].map(([m, n]) => `${n} × ${m}`).join("\n");
  };
  console.log(
    `# ${offered.size} of ${count} offers resolved; ${rejected.length} calls rejected; ${reported.length} errors reported`,
  );
  if (rejected.length) console.log(`# rejected:\n${summary(rejected)}`);
  if (reported.length) console.log(`# onerror:\n${summary(reported)}`);
  assert.deepEqual(summary(rejected), "", "no call may reject while the slot migrates");
  assert.equal(offered.size, count);
  const times = new Map();
  for (const [id, at, deadline, attempt] of got) {
    assert.ok(offered.has(id), `${id} came out but its offer did not resolve`);
    assert.ok(at >= offered.get(id), `${id} came out ${offered.get(id) - at} ms early`);
    assert.ok(Math.floor(deadline) <= at, `${id} came out before its deadline by the server's clock`);
    assert.equal(attempt, 1, `${id} was delivered as attempt ${attempt}`);
    times.set(id, (times.get(id) ?? 0) + 1);
  }
  for (const [id, n] of times) assert.equal(n, 1, `${id} was delivered ${n} times`);
  const lost = [...offered.keys()].filter((id) => !times.has(id));
  assert.deepEqual(lost.slice(0, 10), [], `${lost.length} items were never delivered`);
}

test("a migration of the queue's slot held open for 2.5 s: no call rejects, each item once, none early", async () => {
  const { name, slot } = await nameAtTheStartOfARange(new Set());
  first = name;
  const { node: from, id: fromId } = await ownerOf(slot);
  const to = cluster.nodes.find((n) => n !== from);
  const toId = await idOf(to);
  const count = 1000;
  const result = await runWhile(
    name,
    async () => {
      await to.cli("cluster", "setslot", String(slot), "importing", fromId);
      await from.cli("cluster", "setslot", String(slot), "migrating", toId);
      const keys = (await from.cli("cluster", "getkeysinslot", String(slot), "100")).split("\n").filter(Boolean);
      const migrate = (ks) =>
        ks.length && from.cli("migrate", "127.0.0.1", String(to.port), "", "0", "5000", "keys", ...ks);
      await migrate(keys.slice(0, Math.ceil(keys.length / 2)));
      await sleep(2500);
      const rest = (await from.cli("cluster", "getkeysinslot", String(slot), "100")).split("\n").filter(Boolean);
      await migrate(rest);
      for (const node of [to, from, ...cluster.nodes.filter((n) => n !== to && n !== from)])
        await node.cli("cluster", "setslot", String(slot), "node", toId);
      console.log(
        `# slot ${slot} of ${name} moved from :${from.port} to :${to.port}; ${keys.length} keys, ${rest.length} moved last`,
      );
    },
    { count },
  );
  assert.equal((await ownerOf(slot)).node, to);
  check(result, count);
});

test("redis-cli --cluster reshard moving the queue's slot: no call rejects, each item once, none early", async () => {
  const { name, slot } = await nameAtTheStartOfARange(new Set([first]));
  const { node: from, id: fromId } = await ownerOf(slot);
  const to = cluster.nodes.find((n) => n !== from);
  const toId = await idOf(to);
  // Other keys in the queue's slot, so that the reshard (one key per MIGRATE) takes seconds.
  const filler = admin.pipeline();
  for (let i = 0; i < FILLER; i++) filler.set(`{${name}}:filler:${i}`, "x");
  await filler.exec();
  const count = 1000;
  const result = await runWhile(
    name,
    async () => {
      await sleep(1000);
      const t = Date.now();
      const { stdout } = await run("redis-cli", [
        "--cluster",
        "reshard",
        `127.0.0.1:${from.port}`,
        "--cluster-from",
        fromId,
        "--cluster-to",
        toId,
        "--cluster-slots",
        "1",
        "--cluster-yes",
        "--cluster-pipeline",
        "1",
      ]);
      assert.match(stdout, new RegExp(`Moving slot ${slot} from`));
      console.log(
        `# redis-cli --cluster reshard moved slot ${slot} of ${name} (and ${FILLER} other keys) from :${from.port} to :${to.port} in ${Date.now() - t} ms`,
      );
    },
    { count },
  );
  assert.equal((await ownerOf(slot)).node, to);
  check(result, count);
});

test("during a held migration, calls keep their order, and one that outlasts commandTimeout says the slot was migrating", async () => {
  const name = "reshard-order";
  const slot = await admin.cluster("KEYSLOT", `{${name}}`);
  const { node: from, id: fromId } = await ownerOf(slot);
  const to = cluster.nodes.find((n) => n !== from);
  const toId = await idOf(to);
  const clients = [0, 1].map(() => new Cluster(cluster.seeds, { enableAutoPipelining: true }));
  const ordered = new RedisDelayQueue({ redis: clients[0], name, onerror: () => {} });
  const bounded = new RedisDelayQueue({ redis: clients[1], name, commandTimeout: 2000, onerror: () => {} });
  try {
    await ordered.offer({ v: 0 }, 60_000, { id: "before" }); // the queue's keys exist
    await to.cli("cluster", "setslot", String(slot), "importing", fromId);
    await from.cli("cluster", "setslot", String(slot), "migrating", toId);
    const keys = (await from.cli("cluster", "getkeysinslot", String(slot), "100")).split("\n").filter(Boolean);
    await from.cli("migrate", "127.0.0.1", String(to.port), "", "0", "5000", "keys", keys[0]);
    // Each id: offered, offered again with a new value (replacing it), rescheduled.
    const calls = [];
    for (let i = 0; i < 30; i++) {
      const id = `o-${i}`;
      calls.push(
        ordered.offer({ v: 1 }, 60_000, { id }),
        ordered.offer({ v: 2 }, 60_000, { id }),
        ordered.reschedule(id, 50_000),
      );
    }
    // An offer refused and handed back by ioredis is sent again before a call made after that.
    calls.push(ordered.offer({ v: 1 }, 60_000, { id: "held" }));
    const later = sleep(1800).then(() => ordered.offer({ v: 2 }, 60_000, { id: "held" }));
    const t0 = Date.now();
    const outlasted = bounded.offer({ v: 1 }, 1000).then(
      () => null,
      (e) => ({ e, ms: Date.now() - t0 }),
    );
    await sleep(3000);
    const rest = (await from.cli("cluster", "getkeysinslot", String(slot), "100")).split("\n").filter(Boolean);
    if (rest.length) await from.cli("migrate", "127.0.0.1", String(to.port), "", "0", "5000", "keys", ...rest);
    for (const node of [to, from, ...cluster.nodes.filter((n) => n !== to && n !== from)])
      await node.cli("cluster", "setslot", String(slot), "node", toId);
    const replies = await Promise.all(calls);
    await later;
    const late = await outlasted;
    assert.ok(late, "an offer made while the slot migrated for longer than its commandTimeout resolved");
    console.log(`# the offer that outlasted commandTimeout (2000 ms) rejected after ${late.ms} ms: ${late.e.message}`);
    assert.match(late.e.message, /slot .* was migrating .* 2000 ms \(options\.commandTimeout\)/);
    assert.ok(late.ms >= 1990 && late.ms < 3500, `it rejected after ${late.ms} ms`);
    for (let i = 0; i < 30; i++) {
      assert.equal(replies[3 * i + 2], true, `o-${i}: its reschedule ran before its offers`);
      const item = await ordered.get(`o-${i}`);
      assert.equal(item.value.v, 2, `o-${i}: the first offer ran after the second`);
    }
    assert.equal((await ordered.get("held")).value.v, 2, "an offer made later overtook an offer being retried");
    assert.equal((await ownerOf(slot)).node, to);
  } finally {
    await ordered.clear();
    await Promise.all([ordered.close(), bounded.close()]);
    for (const c of clients) c.disconnect();
  }
});
