// The producer process of tests/postgres/faults.test.mjs (forked through
// tests/engines/fleet.mjs): offers `count` items, each due minDelay..maxDelay ms after its call, in offerMany calls of `batch`
// (or one offer() each when batch is 1), `inFlight` calls at a time, spread over `overMs`. A
// call that rejects (Postgres restarting) is not retried: only what an offer resolved is
// promised, and a rejected one may or may not have been stored (its commit may have gone
// through before the connection dropped), so each item has its id from here. Sends
// { offered: [[name, id, notBefore, 1]], maybe: the same for the rejected ones, rejected } and
// exits (tests/engines/fleet.mjs: what a producer reports).
//
// argv[2]: JSON { url, name, count, minDelay, maxDelay, batch, inFlight, overMs }

import { PostgresDelayQueue } from "tarry-queue/postgres";
import { load } from "../../tools/pg-deps.mjs";

const pg = (await load("pg")).default;
const cfg = JSON.parse(process.argv[2]);
const pool = new pg.Pool({ connectionString: cfg.url, max: 10 });
pool.on("error", () => {});
const q = new PostgresDelayQueue({ pg: pool, name: cfg.name, onerror: () => {} });
await q.migrate();
const batch = cfg.batch ?? 500;
const offered = [];
const maybe = [];
let rejected = 0;
let next = 0;
const start = Date.now();

/** One call: `batch` items (or one), each with its notBefore by this process's clock before the call. */
async function call() {
  const n = Math.min(batch, cfg.count - next);
  const first = next;
  next += n;
  const before = Date.now();
  const items = Array.from({ length: n }, (_, i) => {
    const delayMs = cfg.minDelay + Math.floor(Math.random() * (cfg.maxDelay - cfg.minDelay));
    return { id: `${process.pid}-${first + i}`, value: { n: first + i, v: 1 }, delayMs, notBefore: before + delayMs };
  });
  try {
    const ids =
      n === 1
        ? [await q.offer(items[0].value, items[0].delayMs, { id: items[0].id })]
        : await q.offerMany(items.map(({ id, value, delayMs }) => ({ id, value, delayMs })));
    for (const [i, id] of ids.entries()) offered.push([cfg.name, id, items[i].notBefore, 1]);
  } catch {
    for (const item of items) maybe.push([cfg.name, item.id, item.notBefore, 1]);
    rejected += n;
  }
}

const lanes = Array.from({ length: cfg.inFlight ?? 4 }, async () => {
  while (next < cfg.count) {
    // Paced so that the calls take about overMs in all.
    const due = start + ((cfg.overMs ?? 0) * next) / cfg.count;
    if (Date.now() < due) await new Promise((r) => setTimeout(r, due - Date.now()));
    await call();
  }
});
await Promise.all(lanes);
await q.close();
await pool.end();
process.send({ type: "produced", offered, maybe, rejected, ms: Date.now() - start }, () => process.exit(0));
