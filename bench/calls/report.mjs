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

/**
 * A row: what, the peer or limit, `cell(build)` of the earlier build and of this one, the
 * target, and whether this build meets it (`ok`: a boolean, or the words; none without a target).
 */
const row = (what, peer, cell, target = "", ok = undefined) => [
  what,
  peer,
  cell("before"),
  cell("tarry"),
  target,
  typeof ok === "boolean" ? met(ok) : (ok ?? ""),
];

/** The rows: [what, peer or limit, before, after, target, met]. */
function rows({ meta, results: r }) {
  const out = [];
  const adds = (impl, f = "perSec") => med(r.adds[impl], (x) => x[f]);
  if (r.adds.tarry.length) {
    const bull = adds("bullmq");
    const ratio = (impl) => adds(impl) / bull;
    const pings = (impl) => adds(impl, "pingPerSec") / adds(impl);
    const script = (impl) => `${adds(impl, "scriptUs").toFixed(1)} µs`;
    out.push(
      row(
        "one awaited offer on Redis, offers/s (÷ BullMQ `add`)",
        `BullMQ ${k(bull)}/s`,
        (b) => `${k(adds(b))}/s (${times(ratio(b))})`,
        "≥ ×1.5",
        ratio("tarry") >= 1.5,
      ),
      row(
        "the same: one offer's time in PING round trips on its connection",
        `PING ${k(adds("tarry", "pingPerSec"))}/s`,
        (b) => pings(b).toFixed(2),
        "≤ 1.3",
        pings("tarry") <= 1.3,
      ),
      row(
        "the same: Redis µs in scripts per awaited offer (INFO commandstats; each is one script run)",
        `BullMQ ${script("bullmq")}`,
        script,
      ),
    );
  }
  if (r.calls.tarry.length) {
    const call = (impl, name) => med(r.calls[impl], (x) => x.callUs[name]);
    const names = ["delayOf", "offer", "take", "ack"];
    // The set-up is measured directly for this tree's scripts; before, every lone call ran the
    // library of every script, whose set-up is the difference between the two calls' times.
    const setUp = med(r.calls.tarry, (x) => x.setUpUs.delayOf);
    const setUps = { before: call("before", "delayOf") - (call("tarry", "delayOf") - setUp), tarry: setUp };
    out.push(
      row(`Redis µs per lone ${names.join(" / ")} (INFO commandstats)`, "", (b) =>
        names.map((n) => call(b, n).toFixed(1)).join(" / "),
      ),
      row(
        "set-up per lone call (µs before a script's own code runs), delayOf",
        "",
        (b) => `${setUps[b].toFixed(1)} µs`,
        "≤ 2 µs",
        setUp <= 2,
      ),
    );
  }
  if (r.queues.tarry.length) {
    const p99 = (impl) => med(r.queues[impl], (x) => x.latenessP99);
    const runs = (impl) =>
      `${med(r.queues[impl], (x) => x.scripts).toLocaleString("en")} runs, ${med(r.queues[impl], (x) => x.scriptMs).toLocaleString("en")} ms`;
    out.push(
      row(
        "10^4 queues in one process, one item each, all due together: lateness p99",
        `BullMQ ${ms(p99("bullmq"))}`,
        (b) => ms(p99(b)),
        "≤ 100 ms",
        p99("tarry") <= 100,
      ),
      row("the same: script runs Redis made from the offers to the last ack, and its ms in them", "", runs),
    );
  }
  if (r.spread.tarry.length) {
    const p99 = (impl) => med(r.spread[impl], (x) => x.p99);
    const ok = p99("tarry") <= p99("bullmq") / 10;
    const early = (impl) =>
      [...r.spread[impl], ...Object.values(r.burst[impl]).flat()].reduce((n, x) => n + x.early + x.lost + x.twice, 0);
    out.push(
      row(
        "lateness p99, 10^4 items due over 1–5 s, 2 worker processes",
        `BullMQ ${ms(p99("bullmq"))}`,
        (b) => ms(p99(b)),
        "≤ 5 ms quiet; ≤ BullMQ ÷ 10",
        `${met(ok)} (÷ 10); ${p99("tarry") <= 5 ? "≤" : ">"} 5 ms at load ${Math.max(...meta.load).toFixed(1)}`,
      ),
      row(
        "delivered early, lost or twice, every delivery run",
        `BullMQ ${early("bullmq")}`,
        early,
        "0",
        early("tarry") === 0,
      ),
    );
  }
  if (r.burst.tarry[meta.workers[0]].length) {
    const rate = (impl, w) => med(r.burst[impl][w], (x) => x.perSec);
    const rates = (impl) => meta.workers.map((w) => k(rate(impl, w))).join(" / ");
    const ratios = (impl) => meta.workers.map((w) => rate(impl, w) / rate("bullmq", w));
    const commands = (impl) =>
      meta.workers.map((w) => med(r.burst[impl][w], (x) => x.commandsPerItem).toFixed(2)).join(" / ");
    out.push(
      row(
        `burst of 2·10^4 due at once, ${meta.workers.join(" / ")} worker processes × 8: deliveries/s (÷ BullMQ)`,
        `BullMQ ${rates("bullmq")}`,
        (b) => `${rates(b)} (${ratios(b).map(times).join(" / ")})`,
        "≥ ×3 at every count",
        ratios("tarry").every((x) => x >= 3),
      ),
      row("the same: Redis commands per delivery", `BullMQ ${commands("bullmq")}`, commands),
    );
  }
  const sizes = meta.offerSizes;
  const offer = (impl, n, f = "offer") => med(r.offers[impl][n], (x) => x[f]);
  const offers = (impl) => sizes.map((n) => k(offer(impl, n))).join(" / ");
  const ratios = (impl) => sizes.map((n) => offer(impl, n) / offer("js-heap", n));
  const pow = (n) => `10^${Math.log10(n)}`;
  const cost = (impl) =>
    `${offer(impl, sizes[0], "heapBytes").toFixed(1)} B, ${offer(impl, sizes[0], "wasmCalls").toFixed(0)} calls`;
  const page = r.page;
  out.push(
    row(
      `in memory, offer() at ${sizes.map(pow).join(" / ")} pending: offers/s (÷ plain-JS heap)`,
      `plain-JS heap ${offers("js-heap")}`,
      (b) => `${offers(b)} (${ratios(b).map(times).join(" / ")})`,
      "≥ ×1.0 at every N",
      ratios("tarry").every((x) => x >= 1),
    ),
    row(
      `the same at ${pow(sizes[0])}: JS heap bytes allocated and calls into wasm per offer`,
      `plain-JS heap ${offer("js-heap", sizes[0], "heapBytes").toFixed(1)} B`,
      cost,
    ),
    row(
      "a page that uses `DelayQueue` (esbuild --bundle --minify, the wasm inline): gzipped (minified)",
      "",
      (b) => `${kB(page[b].gzip)} (${kB(page[b].bytes)})`,
      "≤ 20 kB gzipped",
      page.tarry.gzip <= 20_000,
    ),
    row(
      "the wasm, raw (gzipped)",
      "",
      (b) => `${page[b].wasm.bytes.toLocaleString("en")} B (${page[b].wasm.gzip.toLocaleString("en")})`,
      "≤ 30,000 B",
      page.tarry.wasm.bytes <= 30_000,
    ),
  );
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
