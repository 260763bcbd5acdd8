// The producer process of the Redis tests (forked through tests/redis/fleet.mjs): offers items
// and reports, for each offer that resolved, the earliest time (Date.now() before the call + the
// delay) its item may come out.
//
// argv[2]: JSON { url | cluster, names, count (per queue), minDelay, maxDelay, paceMs, edits, shards }
// Items are offered by offerMany() in batches of 250 and by single offer() calls, 64 at a time,
// spread over paceMs. With edits, each queue also gets 300 items due in 3.5-4.5 s, of which 100
// are cancelled, 100 rescheduled to 1 s from the reschedule, and 100 replaced by a new offer
// with the same id (new value, due in 1.5 s), all while the workers wait.

import { Cluster } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { setTimeout as sleep } from "node:timers/promises";

const cfg = JSON.parse(process.argv[2]);
const redis = cfg.cluster ? new Cluster(cfg.cluster, { enableAutoPipelining: true }) : cfg.url;
let failed = 0;
const queues = cfg.names.map((name) => new RedisDelayQueue({ redis, name, shards: cfg.shards, onerror: () => {} }));
const delay = () => cfg.minDelay + Math.floor(Math.random() * (cfg.maxDelay - cfg.minDelay));
const offered = []; // [name, id, notBefore, version]
const cancelled = [];

async function produce(q, name) {
  const rounds = Math.ceil(cfg.count / 250);
  let n = 0;
  for (let r = 0; r < rounds; r++) {
    const size = Math.min(250, cfg.count - n);
    const items = [];
    for (let i = 0; i < size; i++, n++) items.push({ id: `i-${n}`, value: { n, v: 1 }, delayMs: delay() });
    const at = Date.now();
    const calls = [];
    if (r % 5 === 4) {
      // Single offers, 64 in flight at once.
      let next = 0;
      const lane = async () => {
        while (next < items.length) {
          const it = items[next++];
          const t = Date.now();
          try {
            await q.offer(it.value, it.delayMs, { id: it.id });
            offered.push([name, it.id, t + it.delayMs, 1]);
          } catch {
            failed++;
          }
        }
      };
      for (let l = 0; l < 64; l++) calls.push(lane());
    } else {
      calls.push(
        q.offerMany(items).then(
          () => {
            for (const it of items) offered.push([name, it.id, at + it.delayMs, 1]);
          },
          () => failed++,
        ),
      );
    }
    await Promise.all(calls);
    if (cfg.paceMs) await sleep(cfg.paceMs / rounds);
  }
}

async function edit(q, name) {
  const ids = Array.from({ length: 300 }, (_, i) => `e-${i}`);
  await q.offerMany(
    ids.map((id, i) => ({ id, value: { n: i, v: 1 }, delayMs: 3500 + Math.floor(Math.random() * 1000) })),
  );
  await sleep(200);
  const results = await Promise.all(
    ids.map(async (id, i) => {
      const t = Date.now();
      if (i < 100) {
        cancelled.push([name, id]);
        return q.cancel(id);
      }
      if (i < 200) {
        const ok = await q.reschedule(id, 1000);
        offered.push([name, id, t + 1000, 1]);
        return ok;
      }
      await q.offer({ n: i, v: 2 }, 1500, { id });
      offered.push([name, id, t + 1500, 2]);
      return true;
    }),
  );
  if (!results.every(Boolean)) throw new Error(`a cancel or reschedule found its item gone: ${results}`);
}

await Promise.all(queues.map((q, i) => Promise.all([produce(q, cfg.names[i]), cfg.edits && edit(q, cfg.names[i])])));
await Promise.all(queues.map((q) => q.close()));
if (cfg.cluster) await redis.quit();
process.send({ type: "produced", offered, cancelled, failed }, () => process.exit(0));
