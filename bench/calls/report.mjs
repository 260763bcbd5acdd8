// bench/calls/results.md from a run of bench/calls/run.mjs, and the table docs/performance.md
// quotes (`table`): each row's peer or limit, tarry before and after, the target and whether
// the after column meets it.

import { median } from "../numbers.mjs";

const med = (xs, f = (x) => x) => median(xs.map(f));
const k = (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)}M` : x >= 1e3 ? `${(x / 1e3).toFixed(2)}k` : x.toFixed(0));
const ms = (x) => (x >= 1000 ? `${Math.round(x).toLocaleString("en")} ms` : `${x.toFixed(x < 10 ? 2 : 1)} ms`);
const times = (x) => `×${x.toFixed(2)}`;
const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;
const met = (ok) => (ok ? "met" : "not met");

/** The rows: [what, peer or limit, before, after, target, met]. */
function rows({ meta, results: r }) {
  const out = [];
  const adds = (impl, f = "perSec") => med(r.adds[impl], (x) => x[f]);
  if (r.adds.tarry.length) {
    const bull = adds("bullmq");
    const ratio = (impl) => adds(impl) / bull;
    const pings = (impl) => adds(impl, "pingPerSec") / adds(impl);
    out.push([
      "one awaited offer on Redis, offers/s (÷ BullMQ `add`)",
      `BullMQ ${k(bull)}/s`,
      `${k(adds("before"))}/s (${times(ratio("before"))})`,
      `${k(adds("tarry"))}/s (${times(ratio("tarry"))})`,
      "≥ ×1.5",
      met(ratio("tarry") >= 1.5),
    ]);
    out.push([
      "the same: one offer's time in PING round trips on its connection",
      `PING ${k(adds("tarry", "pingPerSec"))}/s`,
      pings("before").toFixed(2),
      pings("tarry").toFixed(2),
      "≤ 1.3",
      met(pings("tarry") <= 1.3),
    ]);
    const script = (impl) => adds(impl, "scriptUs").toFixed(1);
    out.push([
      "the same: Redis µs in scripts per awaited offer (INFO commandstats; each is one script run)",
      `BullMQ ${script("bullmq")} µs`,
      `${script("before")} µs`,
      `${script("tarry")} µs`,
      "",
      "",
    ]);
  }
  if (r.calls.tarry.length) {
    const call = (impl, name) => med(r.calls[impl], (x) => x.callUs[name]);
    const setUp = (name) => med(r.calls.tarry, (x) => x.setUpUs[name]);
    const names = ["delayOf", "offer", "take", "ack"];
    out.push([
      `Redis µs per lone ${names.join(" / ")} (INFO commandstats)`,
      "",
      names.map((n) => call("before", n).toFixed(1)).join(" / "),
      names.map((n) => call("tarry", n).toFixed(1)).join(" / "),
      "",
      "",
    ]);
    // The set-up is measured directly for this tree's scripts; before, every lone call ran the
    // library of every script, whose set-up is the difference between the two calls' times.
    const before = call("before", "delayOf") - (call("tarry", "delayOf") - setUp("delayOf"));
    out.push([
      "set-up per lone call (µs before a script's own code runs), delayOf",
      "",
      `${before.toFixed(1)} µs`,
      `${setUp("delayOf").toFixed(1)} µs`,
      "≤ 2 µs",
      met(setUp("delayOf") <= 2),
    ]);
  }
  if (r.queues.tarry.length) {
    const p99 = (impl) => med(r.queues[impl], (x) => x.latenessP99);
    out.push([
      "10^4 queues in one process, one item each, all due together: lateness p99",
      `BullMQ ${ms(p99("bullmq"))}`,
      ms(p99("before")),
      ms(p99("tarry")),
      "≤ 100 ms",
      met(p99("tarry") <= 100),
    ]);
    const runs = (impl) => {
      const scripts = med(r.queues[impl], (x) => x.scripts);
      return `${scripts.toLocaleString("en")} runs, ${med(r.queues[impl], (x) => x.scriptMs).toLocaleString("en")} ms`;
    };
    out.push([
      "the same: script runs Redis made from the offers to the last ack, and its ms in them",
      "",
      runs("before"),
      runs("tarry"),
      "",
      "",
    ]);
  }
  if (r.spread.tarry.length) {
    const p99 = (impl) => med(r.spread[impl], (x) => x.p99);
    const ok = p99("tarry") <= p99("bullmq") / 10;
    out.push([
      "lateness p99, 10^4 items due over 1–5 s, 2 worker processes",
      `BullMQ ${ms(p99("bullmq"))}`,
      ms(p99("before")),
      ms(p99("tarry")),
      "≤ 5 ms quiet; ≤ BullMQ ÷ 10",
      `${met(ok)} (÷ 10); ${p99("tarry") <= 5 ? "≤" : ">"} 5 ms at load ${Math.max(...meta.load).toFixed(1)}`,
    ]);
    const early = (impl) =>
      [...r.spread[impl], ...Object.values(r.burst[impl]).flat()].reduce((n, x) => n + x.early + x.lost + x.twice, 0);
    out.push([
      "delivered early, lost or twice, every delivery run",
      `BullMQ ${early("bullmq")}`,
      early("before"),
      early("tarry"),
      "0",
      met(early("tarry") === 0),
    ]);
  }
  if (r.burst.tarry[meta.workers[0]].length) {
    const rate = (impl, w) => med(r.burst[impl][w], (x) => x.perSec);
    const ratios = (impl) => meta.workers.map((w) => rate(impl, w) / rate("bullmq", w));
    out.push([
      `burst of 2·10^4 due at once, ${meta.workers.join(" / ")} worker processes × 8: deliveries/s (÷ BullMQ)`,
      `BullMQ ${meta.workers.map((w) => k(rate("bullmq", w))).join(" / ")}`,
      `${meta.workers.map((w) => k(rate("before", w))).join(" / ")} (${ratios("before").map(times).join(" / ")})`,
      `${meta.workers.map((w) => k(rate("tarry", w))).join(" / ")} (${ratios("tarry").map(times).join(" / ")})`,
      "≥ ×3 at every count",
      met(ratios("tarry").every((x) => x >= 3)),
    ]);
    const commands = (impl) => meta.workers.map((w) => med(r.burst[impl][w], (x) => x.commandsPerItem).toFixed(2));
    out.push([
      "the same: Redis commands per delivery",
      `BullMQ ${commands("bullmq").join(" / ")}`,
      commands("before").join(" / "),
      commands("tarry").join(" / "),
      "",
      "",
    ]);
  }
  const sizes = meta.offerSizes;
  const offer = (impl, n, f = "offer") => med(r.offers[impl][n], (x) => x[f]);
  const ratios = (impl) => sizes.map((n) => offer(impl, n) / offer("js-heap", n));
  const pow = (n) => `10^${Math.log10(n)}`;
  out.push([
    `in memory, offer() at ${sizes.map(pow).join(" / ")} pending: offers/s (÷ plain-JS heap)`,
    `plain-JS heap ${sizes.map((n) => k(offer("js-heap", n))).join(" / ")}`,
    `${sizes.map((n) => k(offer("before", n))).join(" / ")} (${ratios("before").map(times).join(" / ")})`,
    `${sizes.map((n) => k(offer("tarry", n))).join(" / ")} (${ratios("tarry").map(times).join(" / ")})`,
    "≥ ×1.0 at every N",
    met(ratios("tarry").every((x) => x >= 1)),
  ]);
  const cost = (impl) =>
    `${offer(impl, sizes[0], "heapBytes").toFixed(1)} B, ${offer(impl, sizes[0], "wasmCalls").toFixed(0)} calls`;
  out.push([
    `the same at ${pow(sizes[0])}: JS heap bytes allocated and calls into wasm per offer`,
    `plain-JS heap ${offer("js-heap", sizes[0], "heapBytes").toFixed(1)} B`,
    cost("before"),
    cost("tarry"),
    "",
    "",
  ]);
  const page = r.page;
  out.push([
    "a page that uses `DelayQueue` (esbuild --bundle --minify, the wasm inline): gzipped (minified)",
    "",
    `${kB(page.before.gzip)} (${kB(page.before.bytes)})`,
    `${kB(page.tarry.gzip)} (${kB(page.tarry.bytes)})`,
    "≤ 20 kB gzipped",
    met(page.tarry.gzip <= 20_000),
  ]);
  out.push([
    "the wasm, raw (gzipped)",
    "",
    `${page.before.wasm.bytes.toLocaleString("en")} B (${page.before.wasm.gzip.toLocaleString("en")})`,
    `${page.tarry.wasm.bytes.toLocaleString("en")} B (${page.tarry.wasm.gzip.toLocaleString("en")})`,
    "≤ 30,000 B",
    met(page.tarry.wasm.bytes <= 30_000),
  ]);
  return out;
}

/**
 * The table: one row per measurement, before and after side by side; `labels` names the two
 * columns (by default, the commits).
 */
export function table(run, labels = { before: `before (${run.meta.before})`, after: `after (${run.meta.commit})` }) {
  return [
    `| what | peer / limit | ${labels.before} | ${labels.after} | target | |`,
    "| --- | ---: | ---: | ---: | --- | --- |",
    ...rows(run).map((row) => `| ${row.join(" | ")} |`),
  ].join("\n");
}

export function render(run) {
  const { meta } = run;
  return `# The cost of one call: before and after

\`${meta.command}\` on ${meta.date.slice(0, 10)}, ${meta.seconds} s: ${meta.cpu} (${meta.cores} cores), Node ${meta.node}, Redis ${meta.redis}, load ${Math.min(...meta.load).toFixed(1)}–${Math.max(...meta.load).toFixed(1)}. Medians of ${meta.rounds} rounds, the three columns interleaved in each (BullMQ's 10^4 queues once).

- **before**: tarry at ${meta.before}, built by that commit's own \`scripts/build.sh\`; **after**: this tree at ${meta.commit}. Both run the same workload code (this tree's \`bench/\`), \`tarry-queue\` imported from the tree measured (\`bench/calls/root.mjs\`).
- Redis rows: one private \`redis-server\` (default settings, no persistence), ioredis with auto-pipelining for every library, 8 handlers per worker process, the processes and workloads of the Redis benchmark (\`bench/redis/child.mjs\`, \`queues.mjs\`, \`calls.mjs\`). An awaited offer: ${meta.serial} in a row, in blocks of 100 alternating with blocks of PINGs on the same connection.
- In-memory rows: \`offer()\` alone into an empty queue, items due in [1 h, 2 h] (\`bench/child.mjs offer\`); heap bytes per offer in steady state, after a full GC.
- Page rows: \`tests/schedule/page-weight.mjs\` on each tree.

${table(run)}
`;
}
