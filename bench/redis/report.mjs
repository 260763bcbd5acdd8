// The page of bench/redis/results.json: bench/redis/results.md, the table of tarry-queue/redis
// against BullMQ with the command that made it, the machine, the date, how to read it, and
// each target met or not. bench/redis/run.mjs writes both after a run; `node
// bench/redis/run.mjs --render` writes the page again from the JSON.

import { shardRows } from "./shards.mjs";

const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return null;
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export const fmt = (x) =>
  x == null
    ? "–"
    : x >= 1e6
      ? `${(x / 1e6).toPrecision(3)}M`
      : x >= 1e3
        ? `${(x / 1e3).toPrecision(3)}k`
        : x.toPrecision(3);
export const ms = (x) => (x == null ? "–" : `${x.toFixed(x < 10 ? 2 : x < 1000 ? 1 : 0)} ms`);
const s = (x) => (x == null ? "not within 120 s" : `${(x / 1000).toFixed(2)} s`);

/**
 * The table's rows, the medians behind them (`summary`) and the targets, from a run's
 * samples and its settings (`meta`: n, workers, concurrency, lease, withDefaults).
 */
export function summarise({ meta, results }) {
  const { n: N, workers: WORKERS, concurrency: CONCURRENCY, lease: LEASE, withDefaults } = meta;
  const BURST = meta.burst ?? N; // runs before the burst grew had N items in a burst too
  const lines = [];
  const add = (l) => lines.push(l);

  const ping = median(results.ping.tarry);
  // Each add process also timed PINGs on its own connection, in alternating blocks: the ratio
  // within a process is what the machine's noise disturbs least.
  const perPing = median(results.ping.tarry.map((p, i) => p / results.adds["add-serial"].tarry[i]));
  add("| workload | tarry-queue/redis | BullMQ 6.7 | tarry ÷ BullMQ |");
  add("| --- | ---: | ---: | ---: |");
  add(
    `| bare PING on the same connection, awaited one at a time (the floor of one awaited call), round trips/s | ${fmt(ping)} | ${fmt(median(results.ping.bullmq))} | |`,
  );
  const addNames = {
    "add-serial": "add, one awaited call at a time",
    "add-concurrent": `add, ${N} concurrent calls from one process`,
    "add-bulk": "add, bulk (offerMany / addBulk, 500 per call)",
  };
  const summary = { ping };
  for (const [task, label] of Object.entries(addNames)) {
    const t = median(results.adds[task].tarry);
    const b = median(results.adds[task].bullmq);
    summary[task] = { tarry: t, bullmq: b };
    add(`| ${label}, adds/s | ${fmt(t)} | ${fmt(b)} | ×${(t / b).toFixed(2)} |`);
  }
  const stat = (samples, key) => median(samples.map((x) => x[key]));
  for (const w of WORKERS) {
    const t = results.delivery[`burst ${w}`].tarry;
    const b = results.delivery[`burst ${w}`].bullmq;
    summary[`burst ${w}`] = { tarry: stat(t, "perSec"), bullmq: stat(b, "perSec") };
    add(
      `| deliveries/s, ${BURST} items due at one instant, ${w} worker process${w > 1 ? "es" : ""} × ${CONCURRENCY} | ${fmt(stat(t, "perSec"))} | ${fmt(stat(b, "perSec"))} | ×${(stat(t, "perSec") / stat(b, "perSec")).toFixed(2)} |`,
    );
  }
  for (const w of WORKERS) {
    const t = results.delivery[`spread ${w}`].tarry;
    const b = results.delivery[`spread ${w}`].bullmq;
    summary[`spread ${w}`] = { tarry: stat(t, "p99"), bullmq: stat(b, "p99") };
    add(
      `| lateness p50 / p99 / max, ${N} items due over 1–5 s, ${w} worker process${w > 1 ? "es" : ""} | ${ms(stat(t, "p50"))} / ${ms(stat(t, "p99"))} / ${ms(stat(t, "max"))} | ${ms(stat(b, "p50"))} / ${ms(stat(b, "p99"))} / ${ms(stat(b, "max"))} | |`,
    );
  }
  for (const w of WORKERS) {
    const t = results.delivery[`spread ${w}`].tarry;
    const b = results.delivery[`spread ${w}`].bullmq;
    const cpu = (xs) => `${stat(xs, "workerCpuUs").toFixed(0)} µs / ${stat(xs, "redisCpuUs").toFixed(0)} µs`;
    add(
      `| CPU per delivered item: worker processes / Redis (adds included), spread, ${w} worker${w > 1 ? "s" : ""} | ${cpu(t)} | ${cpu(b)} | |`,
    );
  }
  for (const w of WORKERS) {
    const t = results.delivery[`burst ${w}`].tarry;
    const b = results.delivery[`burst ${w}`].bullmq;
    if (!t.every((x) => x.commandUs !== undefined)) continue; // a run from before these were measured
    const cpu = (xs) =>
      `${stat(xs, "workerCpuUs").toFixed(0)} µs / ${stat(xs, "redisCpuUs").toFixed(0)} µs / ${stat(xs, "commandUs").toFixed(0)} µs`;
    add(
      `| CPU per delivered item, burst, ${w} worker${w > 1 ? "s" : ""}: worker processes / Redis (adds included) / Redis in commands (INFO commandstats, after the adds) | ${cpu(t)} | ${cpu(b)} | |`,
    );
  }
  for (const w of WORKERS) {
    const t = results.delivery[`burst ${w}`].tarry;
    const b = results.delivery[`burst ${w}`].bullmq;
    if (!t.every((x) => x.scriptsPerItem !== undefined)) continue;
    const per = (xs) => `${stat(xs, "scriptsPerItem").toFixed(3)} / ${stat(xs, "commandsPerItem").toFixed(1)}`;
    add(
      `| scripts / Redis commands (those the scripts call included) per delivered item, burst, ${w} worker${w > 1 ? "s" : ""} | ${per(t)} | ${per(b)} | |`,
    );
  }
  if (results.calls) {
    // bench/redis/calls.mjs: Redis' own µs per script run (INFO commandstats), medians of its rounds.
    const { callUs, setUpUs } = results.calls;
    const us = (x) => (x == null ? "–" : `${x.toFixed(1)} µs`);
    add(
      callUs.take === undefined
        ? `| Redis per lone awaited call (INFO commandstats): delayOf / get / offer | ${us(callUs.delayOf)} / ${us(callUs.get)} / ${us(callUs.offer)} | | |`
        : `| Redis per lone awaited call (INFO commandstats): delayOf / get / offer / take of one due item / ack | ${us(callUs.delayOf)} / ${us(callUs.get)} / ${us(callUs.offer)} / ${us(callUs.take)} / ${us(callUs.ack)} | | |`,
    );
    add(
      `| set-up per call before a script's own code: its includes, delayOf / offer / take / ack; the library of every script (a batch of calls) | ${us(setUpUs.delayOf)} / ${us(setUpUs.offer)} / ${us(setUpUs.take)} / ${us(setUpUs.ack)}; ${us(setUpUs.library)} | | |`,
    );
  }
  if (results.wait)
    for (const [task, label] of [
      ["add-serial", "one awaited call at a time"],
      ["add-concurrent", `${N} concurrent calls`],
    ]) {
      const without = median(results.wait[task].tarry);
      const withWait = median(results.wait[task]["tarry-wait"]);
      summary[`wait ${task}`] = { without, with: withWait };
      add(
        `| offers/s on a primary with one replica, ${label}: without / with waitForReplicas { count: 1 } (tarry only) | ${fmt(without)} / ${fmt(withWait)} | | ×${(withWait / without).toFixed(2)} |`,
      );
    }
  if (results.memory)
    for (const [bytes, by] of Object.entries(results.memory)) {
      const t = median(by.tarry.map((x) => x.bytesPerItem));
      const b = median(by.bullmq.map((x) => x.bytesPerItem));
      summary[`memory ${bytes}`] = { tarry: t, bullmq: b };
      add(
        `| Redis bytes per pending item, ${bytes}-byte JSON values (used_memory after ${meta.fill.toLocaleString("en-US")} items due in an hour, minus before, per item) | ${t.toFixed(0)} B | ${b.toFixed(0)} B | ×${(t / b).toFixed(2)} |`,
      );
    }
  const many = results.queues?.tarry ?? [];
  if (many.length) {
    const of = (xs) => {
      const m = (k) => median(xs.map((x) => x[k]));
      return {
        connections: m("connections"),
        openMs: m("openMs"),
        p50: m("latenessP50"),
        p99: m("latenessP99"),
        early: xs.reduce((n, x) => n + (x.early ?? 0), 0),
      };
    };
    summary.queues = of(many);
    const bull = results.queues.bullmq ?? [];
    const cells = (x) => `${x.connections} / ${ms(x.openMs)} / ${ms(x.p50)} / ${ms(x.p99)}`;
    if (bull.length) summary.queuesBullmq = of(bull);
    const count = meta.queues.toLocaleString("en-US");
    add(
      `| ${count} queues in one process (bench/redis/queues.mjs: opened by URL; BullMQ, bench/redis/queues-bullmq.mjs: a Queue and a Worker each, on shared clients, ${bull.length} run): connections while consuming / open time / lateness p50 / p99 of one item each, all due 2 s after their offers | ${cells(summary.queues)} | ${bull.length ? cells(summary.queuesBullmq) : "–"} | |`,
    );
    const spread = results.queuesSpread?.tarry ?? [];
    if (spread.length) {
      summary.queuesSpread = of(spread);
      const bullSpread = results.queuesSpread.bullmq ?? [];
      if (bullSpread.length) summary.queuesSpreadBullmq = of(bullSpread);
      add(
        `| the same, the items due one after another over ${(meta.queuesSpread / 1000).toFixed(0)} s (2 s after their offers plus a seeded uniform share; BullMQ ${bullSpread.length} run) | ${cells(summary.queuesSpread)} | ${bullSpread.length ? cells(summary.queuesSpreadBullmq) : "–"} | |`,
      );
    }
  }
  const runs = Object.values(results.delivery).flatMap((d) =>
    Object.entries(d).flatMap(([impl, xs]) => xs.map((x) => ({ impl, ...x }))),
  );
  for (const key of ["early", "lost", "twice"]) {
    const of = (impl) => runs.filter((x) => x.impl === impl).reduce((n, x) => n + x[key], 0);
    summary[key] = { tarry: of("tarry"), bullmq: of("bullmq") };
  }
  add(
    `| delivered early / lost / delivered twice, all delivery runs (${runs.length / 2} each) | ${summary.early.tarry} / ${summary.lost.tarry} / ${summary.twice.tarry} | ${summary.early.bullmq} / ${summary.lost.bullmq} / ${summary.twice.bullmq} | |`,
  );
  const rec = { tarry: median(results.recovery.tarry), bullmq: median(results.recovery.bullmq) };
  summary.recovery = { ...rec, bullmqDefaults: results.recovery["bullmq-defaults"][0] };
  add(
    `| kill -9 of a worker holding 20 items: all 20 with another worker after (lease ${LEASE / 1000} s: visibilityTimeout / lockDuration + stalledInterval) | ${s(rec.tarry)} | ${s(rec.bullmq)} | |`,
  );
  if (withDefaults)
    add(
      `| the same, BullMQ with its defaults (lockDuration 30 s, stalledInterval 30 s) | | ${s(summary.recovery.bullmqDefaults)} | |`,
    );

  const scheduleTargets = results.schedules ? scheduleRows(results.schedules, add, summary) : [];
  for (const row of results.shards ? shardRows(results.shards, fmt) : []) add(row); // bench/redis/shards.mjs

  const p99s = WORKERS.map((w) => summary[`spread ${w}`].tarry);
  const bursts = WORKERS.map((w) => summary[`burst ${w}`].tarry);
  // Worker CPU per delivered item in a burst before the burst work (the run of main at 0bd88dd,
  // 10^4 items): the target is a third of it.
  const cpuBefore = { 1: 272, 2: 286, 4: 642 };
  const cpuNow = Object.fromEntries(WORKERS.map((w) => [w, stat(results.delivery[`burst ${w}`].tarry, "workerCpuUs")]));
  const targets = [
    [
      "one awaited add ≥ 1.5× BullMQ's",
      summary["add-serial"].tarry / summary["add-serial"].bullmq >= 1.5,
      `×${(summary["add-serial"].tarry / summary["add-serial"].bullmq).toFixed(2)}`,
    ],
    [
      "one awaited add within 1.5× of the bare round trip",
      perPing <= 1.5,
      `a PING round trip is ×${perPing.toFixed(2)} as fast (median of the per-process ratios; ${fmt(summary["add-serial"].tarry)}/s vs ${fmt(ping)}/s)`,
    ],
    [
      "concurrent adds ≥ 2× BullMQ's",
      summary["add-concurrent"].tarry / summary["add-concurrent"].bullmq >= 2,
      `×${(summary["add-concurrent"].tarry / summary["add-concurrent"].bullmq).toFixed(2)}`,
    ],
    [
      "bulk adds ≥ 2× BullMQ's",
      summary["add-bulk"].tarry / summary["add-bulk"].bullmq >= 2,
      `×${(summary["add-bulk"].tarry / summary["add-bulk"].bullmq).toFixed(2)}`,
    ],
    [
      `burst deliveries/s ≥ 5× BullMQ's with ${WORKERS.join(", ")} workers`,
      WORKERS.every((w) => summary[`burst ${w}`].tarry >= 5 * summary[`burst ${w}`].bullmq),
      WORKERS.map((w) => `×${(summary[`burst ${w}`].tarry / summary[`burst ${w}`].bullmq).toFixed(2)}`).join(", "),
    ],
    [
      `burst deliveries/s growing with workers (${WORKERS.join(", ")})`,
      bursts.every((x, i) => i === 0 || x > bursts[i - 1]),
      bursts.map((x) => `${fmt(x)}/s`).join(", "),
    ],
    [
      `worker CPU per delivered item in a burst ≤ 1/3 of before (${WORKERS.map((w) => `${cpuBefore[w]} µs`).join(", ")})`,
      WORKERS.every((w) => cpuNow[w] <= cpuBefore[w] / 3),
      WORKERS.map((w) => `${cpuNow[w]?.toFixed(0)} µs`).join(", "),
    ],
    ...(summary.queues
      ? [
          [
            `${meta.queues.toLocaleString("en-US")} queues in one process on ≤ 4 connections with lateness p99 ≤ 10 ms`,
            summary.queues.connections <= 4 && summary.queues.p99 <= 10,
            `${summary.queues.connections} connections, p99 ${ms(summary.queues.p99)}`,
          ],
        ]
      : []),
    ...(results.memory
      ? [
          [
            `Redis bytes per pending item ≤ 0.5× BullMQ's (${Object.keys(results.memory).join(" and ")}-byte values)`,
            Object.keys(results.memory).every(
              (b) => summary[`memory ${b}`].tarry <= 0.5 * summary[`memory ${b}`].bullmq,
            ),
            Object.keys(results.memory)
              .map((b) => `×${(summary[`memory ${b}`].tarry / summary[`memory ${b}`].bullmq).toFixed(2)}`)
              .join(", "),
          ],
        ]
      : []),
    [
      "lateness p99 ≤ 5 ms with 1, 2 and 4 workers (medians of runs)",
      p99s.every((x) => x <= 5),
      p99s.map((x) => ms(x)).join(", "),
    ],
    [
      "0 early, 0 lost, 0 completed twice",
      summary.early.tarry + summary.lost.tarry + summary.twice.tarry === 0,
      `${summary.early.tarry} / ${summary.lost.tarry} / ${summary.twice.tarry}`,
    ],
    [
      "in-flight items back within the visibility timeout + 1 s",
      rec.tarry != null && rec.tarry <= LEASE + 1000,
      s(rec.tarry),
    ],
    ...scheduleTargets,
  ];
  return { lines, summary, targets, perPing, ping };
}

/**
 * The rows of the schedules (bench/redis/schedules.mjs) and their targets: lateness of
 * recurring occurrences, and 10^5 schedules in one queue.
 * @param {any} sch results.schedules
 * @param {(line: string) => void} add
 * @param {any} summary
 */
function scheduleRows(sch, add, summary) {
  const lat = (x) => `${ms(x.p50)} / ${ms(x.p99)} / ${ms(x.max)}`;
  const runs = [];
  const p99s = [];
  for (const w of Object.keys(sch.lateness)) {
    const { tarry, bullmq } = sch.lateness[w];
    const procs = `${w} worker process${w > 1 ? "es" : ""} × 8`;
    for (const [key, what] of [
      ["every", "every 100 ms"],
      ["cron", "a per-second cron (Europe/Berlin)"],
    ]) {
      const t = tarry.map((x) => x[key]);
      const b = bullmq.map((x) => x[key]);
      add(
        `| recurring occurrences, lateness p50 / p99 / max: ${what}, ${procs}, ${tarry[0].seconds} s (${t[0].occurrences} and ${b[0].occurrences} occurrences) | ${lat(t[0])} | ${lat(b[0])} | |`,
      );
      runs.push(...t.map((x) => ({ impl: "tarry", ...x })), ...b.map((x) => ({ impl: "bullmq", ...x })));
      p99s.push(...t.map((x) => x.p99));
    }
  }
  const sum = (impl, key) => runs.filter((x) => x.impl === impl).reduce((n, x) => n + x[key], 0);
  const bad = Object.fromEntries(
    ["tarry", "bullmq"].map((i) => [i, ["missed", "doubled", "early"].map((k) => sum(i, k))]),
  );
  add(
    `| occurrences missed / handed out twice / early, in those runs | ${bad.tarry.join(" / ")} | ${bad.bullmq.join(" / ")} | |`,
  );
  const [ft] = sch.fleet.tarry;
  const [fb] = sch.fleet.bullmq;
  add(
    `| 10⁵ schedules in one queue: Redis memory per schedule | ${ft.bytes.toFixed(0)} B | ${fb.bytes.toFixed(0)} B | ×${(ft.bytes / fb.bytes).toFixed(2)} |`,
  );
  add(
    `| 10⁵ schedules: created, schedules/s (schedule() / upsertJobScheduler(), 64 calls at a time) | ${fmt(ft.perSec)} | ${fmt(fb.perSec)} | ×${(ft.perSec / fb.perSec).toFixed(2)} |`,
  );
  add(
    `| 10⁵ schedules firing, one a minute each (${fmt(ft.perSecond)} and ${fmt(fb.perSecond)} occurrences/s), 1 worker × 8: CPU per occurrence, Redis / worker process | ${ft.redisCpuUs.toFixed(0)} µs / ${ft.workerCpuUs.toFixed(0)} µs | ${fb.redisCpuUs.toFixed(0)} µs / ${fb.workerCpuUs.toFixed(0)} µs | |`,
  );
  add(
    `| 10⁵ schedules firing: lateness p50 / p99; handed out twice / early | ${ms(ft.p50)} / ${ms(ft.p99)}; ${ft.doubled} / ${ft.early} | ${ms(fb.p50)} / ${ms(fb.p99)}; ${fb.doubled} / ${fb.early} | |`,
  );
  summary.schedules = { p99s, bad, bytes: { tarry: ft.bytes, bullmq: fb.bytes } };
  return [
    [
      "recurring occurrences: lateness p99 ≤ 5 ms (every 100 ms and a per-second cron, 1 and 4 workers)",
      p99s.every((x) => x <= 5),
      p99s.map((x) => ms(x)).join(", "),
    ],
    [
      "recurring occurrences: 0 missed, 0 handed out twice, 0 early",
      bad.tarry.every((n) => n === 0) && ft.doubled + ft.early === 0,
      `${bad.tarry.join(" / ")}; with 10⁵ schedules ${ft.doubled} / ${ft.early}`,
    ],
    [
      "Redis memory per schedule ≤ BullMQ's",
      ft.bytes <= fb.bytes,
      `${ft.bytes.toFixed(0)} B against ${fb.bytes.toFixed(0)} B`,
    ],
  ];
}

/** bench/redis/results.md: the title, the run, the table, how to read it, the targets. */
export function render({ meta, results }) {
  const { lines, targets } = summarise({ meta, results });
  const load = meta.load;
  const loads = `load average (1 min) ${Math.min(...load).toFixed(2)}–${Math.max(...load).toFixed(2)} during the run`;
  return [
    "# Redis benchmark: tarry-queue/redis against BullMQ",
    "",
    "> Generated by `node bench/redis/run.mjs --render` from results.json, which `npm run bench -- --redis` writes; do not edit.",
    "",
    `Made by \`${meta.command}\` on ${meta.date.slice(0, 10)} (${Math.round(meta.seconds)} s in all), tarry at commit \`${meta.commit}\`; \`node bench/redis/run.mjs --render\` writes this page again from [results.json](results.json), which keeps every sample. How it is measured: [Performance](../../docs/performance.md#redis).`,
    "",
    `- Redis ${meta.redis} (a private redis-server, default settings, no persistence), Node ${meta.node}, ${meta.cpu} × ${meta.cores}; ${loads}.`,
    `- Medians of ${meta.rounds} interleaved rounds, each measurement in fresh processes; ioredis with auto-pipelining for both libraries; ${meta.concurrency} concurrent handlers per worker process for both, BullMQ otherwise with its defaults.`,
    "- Lateness = the time a handler starts minus (the time before the add call + the delay), each on its own process's clock (one machine).",
    ...(meta.schedules
      ? [
          `- Schedules (bench/redis/schedules.mjs): measured by the same command on ${meta.schedules.date.slice(0, 10)} (${meta.schedules.seconds} s, tarry at \`${meta.schedules.commit}\`), one run of each, ${meta.schedules.scheduleSeconds} s per lateness run, load average (1 min) ${Math.min(...meta.schedules.load).toFixed(2)}–${Math.max(...meta.schedules.load).toFixed(2)}; an occurrence's lateness = its handler's start minus its due time (tarry's \`job.deadline\`, the instant in BullMQ's job id).`,
        ]
      : []),
    "",
    ...lines,
    "",
    "Targets:",
    "",
    ...targets.map(([what, met, got]) => `- ${met ? "met" : "**not met**"}: ${what}: ${got}`),
    "",
  ].join("\n");
}
