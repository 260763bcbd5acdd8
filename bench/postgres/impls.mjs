// The three implementations of bench/postgres behind one small interface, so that every
// workload (bench/postgres/child.mjs) is written once:
//
//   const q = await open(impl, { url, name, lease, polling });
//   await q.add(value, at);              // one item due at `at` (ms since the epoch)
//   await q.addMany([{ value, at }]);     // one call, the library's bulk add
//   const w = await q.work(handler, { concurrency });   // handler(value) per delivery
//   await w.close(); await q.close();
//
// tarry-queue/postgres (js/postgres.js), pg-boss 12 and graphile-worker 0.18, each with its
// documented defaults (pg-boss's worker: one poller fetching `concurrency` jobs a time, see
// below) except where `polling: "finest"` (the finest poll each allows: pg-boss's
// 0.5 s minimum, graphile-worker's pollInterval at 10 ms; tarry has no poll) or `lease` (the ms
// after which a killed worker's items go to another: tarry's visibilityTimeout, pg-boss's
// expireInSeconds with its monitor at its 1 s minimum; graphile-worker has no such setting: a
// dead worker's jobs are unlocked after 4 hours) say otherwise. Every library gets a pool of
// 10 connections (pg's default) for its adds.
//
// The peers, and pg, come from tools/pg-deps.mjs.

import { load } from "../../tools/pg-deps.mjs";

const pg = (await load("pg")).default;

export const IMPLS = ["tarry", "pgboss", "graphile"];

/** A pg.Pool whose idle and checked-out clients may lose their connection without killing the process. */
function pool(url, max = 10) {
  const p = new pg.Pool({ connectionString: url, max });
  p.on("error", () => {});
  p.on("connect", (client) => client.on("error", () => {}));
  return p;
}

const openers = {
  async tarry({ url, name, lease }) {
    const { PostgresDelayQueue } = await import("../../js/postgres.js");
    const p = pool(url);
    const q = new PostgresDelayQueue({
      pg: p,
      name,
      ...(lease ? { visibilityTimeout: lease } : {}),
      // The peers' calls have no time limit; tarry's commandTimeout (5 s) counts the wait for one
      // of the pool's 10 connections too, which 10^4 concurrent adds on a loaded machine exceed.
      commandTimeout: 60_000,
      onerror: () => {},
    });
    await q.migrate();
    return {
      add: (value, at) => q.offerAt(value, at),
      addMany: (items) => q.offerMany(items.map(({ value, at }) => ({ value, deadline: at }))),
      async work(handler, { concurrency }) {
        const w = q.process(async (value) => handler(value), { concurrency });
        await q.stats(); // connected and listening before "ready"
        return { close: () => w.close() };
      },
      async close() {
        await q.close();
        await p.end();
      },
    };
  },

  async pgboss({ url, name, lease, polling }) {
    const { PgBoss } = await load("pg-boss");
    const monitor = lease ? { monitorIntervalSeconds: 1, superviseIntervalSeconds: 1 } : {};
    const boss = new PgBoss({ connectionString: url, max: 10, ...monitor });
    boss.on("error", () => {});
    await boss.start();
    await boss.createQueue(name);
    const job = lease ? { expireInSeconds: Math.max(1, Math.round(lease / 1000)), retryLimit: 5 } : {};
    return {
      add: (value, at) => boss.send(name, value, { startAfter: new Date(at), ...job }),
      addMany: (items) =>
        boss.insert(
          name,
          items.map(({ value, at }) => ({ data: value, startAfter: new Date(at), ...job })),
        ),
      async work(handler, { concurrency }) {
        // One poller fetching `concurrency` jobs, and again at once while its fetches come back
        // full: pg-boss's documented way to a throughput (with its default batchSize of 1, each
        // of `concurrency` pollers takes one job per pollingIntervalSeconds: 4/s for 8).
        const options = {
          batchSize: concurrency,
          burstWhenBatchFull: true,
          ...(polling === "finest" ? { pollingIntervalSeconds: 0.5 } : {}),
        };
        const id = await boss.work(name, options, async (jobs) => Promise.all(jobs.map((job) => handler(job.data))));
        return { close: () => boss.offWork(name, { id }).catch(() => {}) };
      },
      close: () => boss.stop({ graceful: false, timeout: 5000 }),
    };
  },

  async graphile({ url, name, polling }) {
    const { Logger, makeWorkerUtils, run } = await load("graphile-worker");
    const p = pool(url);
    const utils = await makeWorkerUtils({ pgPool: p });
    await utils.migrate();
    return {
      add: (value, at) => utils.addJob(name, value, { runAt: new Date(at) }),
      addMany: (items) =>
        utils.addJobs(items.map(({ value, at }) => ({ identifier: name, payload: value, runAt: new Date(at) }))),
      async work(handler, { concurrency }) {
        const runner = await run({
          connectionString: url,
          concurrency,
          noHandleSignals: true,
          ...(polling === "finest" ? { pollInterval: 10 } : {}),
          logger: new Logger(() => () => {}),
          taskList: { [name]: async (payload) => handler(payload) },
        });
        return { close: () => runner.stop().catch(() => {}) };
      },
      async close() {
        await utils.release();
        await p.end();
      },
    };
  },
};

/** One implementation, connected, its schema in place. */
export async function open(impl, options) {
  const opener = openers[impl];
  if (!opener) throw new Error(`impl: one of ${IMPLS.join(", ")}; got ${impl}`);
  return opener(options);
}
