// The benchmark figures quoted in README.md, docs/performance.md and docs/browser.md, made
// from the benchmarks' data through the one module that exports it (bench/figures.mjs:
// bench/results.json, bench/redis/results.json, bench/loading/results.json), so that no
// figure in the docs is copied by hand. A quote
// sits between two comments:
//
//   <!-- figures: NAME -->
//   …what `npm run docs` writes…
//   <!-- /figures -->
//
// `npm run docs` rewrites every quote (scripts/docs/build.mjs); tests/docs/generated.test.mjs
// fails when one differs from what the data gives.

import { callsTable, figures, LABELS, loadingQuote, pow10, runtimeTable, short } from "../../bench/figures.mjs";

/** The data the quotes are made of: the benchmarks' figures (bench/figures.mjs). */
export const data = figures;

const times = (r) => `×${r < 10 ? r.toPrecision(3) : r.toFixed(1)}`;

/** Each quote by name: (data, the relative path from its page to the repository root) → Markdown. */
export const QUOTES = {
  /** README.md: three headline figures. */
  compare({ bench, redis, redisMeta }, up) {
    const s = bench.summary;
    const n5 = 1e5;
    const top = Math.max(...bench.meta.comparison.sizes);
    const r = redis.summary["spread 1"];
    return [
      "| | tarry | instead |",
      "| --- | ---: | --- |",
      `| cancel one of ${pow10(n5)} pending items | ${short(s.tarry.cancel[n5])}/s | ${short(s.setTimeout.cancel[n5])}/s with one \`setTimeout\` per item; ${short(s.java.cancel[n5])}/s with Java's \`DelayQueue\` |`,
      `| memory per pending item, ${pow10(top)} pending | ${short(s.tarry.mem[top])} B | ${short(s.setTimeout.mem[top])} B with one \`setTimeout\` per item |`,
      `| Redis: lateness p99 of ${redisMeta.n.toLocaleString("en")} items due over 1–5 s, 1 worker | ${r.tarry.toFixed(2)} ms | ${r.bullmq.toFixed(1)} ms with BullMQ 6.7 |`,
      "",
      `Medians from [the benchmark results](${up}bench/results.md) and [the Redis benchmark](${up}bench/redis/results.md), where the machine, the date and every table are; how they are measured: [Performance](${up}docs/performance.md).`,
    ].join("\n");
  },

  /** docs/performance.md: against the peers at the largest N, and timed expiry. */
  peers({ bench }, up) {
    const s = bench.summary;
    const c = bench.meta.comparison;
    const top = Math.max(...c.sizes);
    const ids = Object.keys(s);
    const ratio = (metric, id) => {
      const t = s.tarry[metric][top];
      const p = s[id][metric]?.[top];
      if (!(t > 0 && p > 0)) return null;
      return metric === "mem" ? p / t : t / p;
    };
    const cell = (metric, id, unit) => {
      const v = s[id][metric]?.[top];
      if (v == null) return "–";
      const r = id === "tarry" ? null : ratio(metric, id);
      return `${short(v)}${unit}${r == null ? "" : ` (${times(r)})`}`;
    };
    const rows = [
      ["offer, ops/s", "offer", ""],
      ["cancel, ops/s", "cancel", ""],
      ["drain: poll() per item, ops/s", "drain", ""],
      ["memory, bytes per pending item", "mem", " B"],
    ];
    const lines = [
      `| N = ${pow10(top)} | ${ids.map((id) => LABELS[id]).join(" | ")} |`,
      `| --- | ${ids.map(() => "---:").join(" | ")} |`,
      ...rows.map(([label, metric, unit]) => `| ${label} | ${ids.map((id) => cell(metric, id, unit)).join(" | ")} |`),
      "",
      `| ${c.expiry.n.toLocaleString("en")} items due in [${c.expiry.from}, ${c.expiry.to}) ms | lateness p50 | p99 | early | host timer arms |`,
      "| --- | ---: | ---: | ---: | ---: |",
    ];
    for (const id of ids.filter((id) => s[id].expiry)) {
      const e = s[id].expiry;
      lines.push(
        `| ${LABELS[id]} | ${e.p50.toFixed(2)} ms | ${e.p99.toFixed(2)} ms | ${e.early.toLocaleString("en")} | ${e.timerArms.toLocaleString("en")} |`,
      );
    }
    lines.push(
      "",
      `(×k): how many times tarry is better than that column (faster, or fewer bytes); below 1, tarry is worse. From [the benchmark results](${up}bench/results.md), which have every N and the notes.`,
    );
    return lines.join("\n");
  },

  /** docs/performance.md: the growth curve, every runtime at a glance. */
  growth({ bench }, up) {
    return `${runtimeTable(bench.growth)}\n\nFrom [the benchmark results](${up}bench/results.md#as-the-queue-grows), which have each runtime in full and block by block.`;
  },

  /** docs/performance.md: tarry-queue/redis against BullMQ. */
  redis({ redis }, up) {
    const keep =
      /^\| (workload|---|bare PING|add,|lateness|delivered early|kill -9|the same|Redis bytes|[\d,]+ queues|one queue on)/;
    return `${redis.lines.filter((l) => keep.test(l)).join("\n")}\n\nFrom [the Redis benchmark](${up}bench/redis/results.md), which has the delivery rates and CPU costs too.`;
  },
};

/** docs/performance.md: the cost of one call, an earlier build beside this one and the peers. */
QUOTES.calls = ({ calls }, up) =>
  `${callsTable(calls, { before: `earlier build (${calls.meta.beforeDate})`, after: "this build" })}\n\nFrom [the cost-of-one-call benchmark](${up}bench/calls/results.md) (\`npm run bench -- --calls\`, ${calls.meta.date.slice(0, 10)}), which names both builds and how each row is measured.`;

/** docs/browser.md: what loading the wasm costs, inline against fetched. */
QUOTES.loading = ({ loading }, up) => loadingQuote(loading, up);

const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;

/** README.md: the package's size, from `npm pack --dry-run --json` (measured by `npm run docs`). */
QUOTES.package = ({ package: { pack, wasmGzip } }) => {
  const wasm = pack.files.find((f) => f.path === "dist/tarry_bg.wasm");
  const redis = pack.files.filter((f) => /^js\/redis(\.js|\/.*\.js)$/.test(f.path)).reduce((n, f) => n + f.size, 0);
  return [
    `Version ${pack.version}, as \`npm pack --dry-run\` reports it: ${kB(pack.size)} packed, ${kB(pack.unpackedSize)} unpacked, ${pack.entryCount} files`,
    wasm
      ? `, of which \`dist/tarry_bg.wasm\` is ${wasm.size.toLocaleString("en")} bytes (${wasmGzip.toLocaleString("en")} gzipped)`
      : "",
    `. \`tarry-queue/redis\` adds ${kB(redis)} of JS that only its importers load.`,
  ].join("");
};

const REGION = /<!-- figures: ([\w-]+) -->\n[\s\S]*?<!-- \/figures -->/g;

/** `text` with each quote made again from `d` (`up`: from the page to the repository root). */
export function requote(text, d, up) {
  return text.replace(REGION, (_, name) => {
    const quote = QUOTES[name];
    if (!quote) throw new Error(`unknown figures quote "${name}"`);
    return `<!-- figures: ${name} -->\n${quote(d, up)}\n<!-- /figures -->`;
  });
}

/** The quotes' names in `text`. */
export const quotesIn = (text) => [...text.matchAll(REGION)].map((m) => m[1]);

/** Pages that quote figures, with the path from each to the repository root. */
export const QUOTING = { "README.md": "", "docs/performance.md": "../", "docs/browser.md": "../" };
