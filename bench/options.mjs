// What a benchmark run measures, from its command line:
//
//   npm run bench                  quick: the peers at N = 10^4, 10^5; the growth curve to
//                                  3·10^6 in Node
//   npm run bench -- --full        the peers also at 10^6; the growth curve to 3·10^7 in Node
//                                  and to 10^7 in Node 24, Deno and Chromium
//   Both write bench/results.json (every sample), bench/results.md, bench/chart.svg and
//   bench/growth.svg; the README says how long each takes.
//   node bench/run.mjs --smoke     tiny N, one round, no Java: every implementation, workload
//                                  and runtime runs (and --only offer's table), order and
//                                  "never early" are asserted;
//                                  writes nothing (the test suite runs it, seconds)
//
//   --rounds R          rounds of the peer comparison (default 5)
//   --growth-rounds R   rounds of the growth curve (default 3 with --full, else 1)
//   --no-java           leave out Java's DelayQueue
//   --growth-plan "node:1e6,1e7 deno:1e6"   the growth curve's runtimes and sizes
//                       (runtimes: node, node24, deno, chromium)
//   --only comparison|growth   one part; prints its tables, writes nothing
//   --only offer        offer() alone, tarry against the plain-JS heap at 10^4, 10^5 and
//                       10^6 pending, rounds interleaved (--rounds, default 5); prints its
//                       table (ops/s, JS heap bytes and wasm calls per offer), writes nothing
//   --render            measures nothing: rewrites bench/results.md and the charts from
//                       bench/results.json (after a change to how results are shown)

export function parseOptions(argv) {
  const value = (name) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const smoke = argv.includes("--smoke");
  const full = !smoke && argv.includes("--full");
  const only = value("--only");
  if (only !== undefined && only !== "comparison" && only !== "growth" && only !== "offer")
    throw new Error(`--only takes comparison, growth or offer, got ${only}`);
  const rounds = smoke ? 1 : Number(value("--rounds") ?? 5);
  const mode = smoke ? "smoke" : full ? "full" : "quick";
  return {
    mode,
    render: argv.includes("--render"),
    write: !smoke && only === undefined,
    offers:
      only === "offer" || smoke
        ? { sizes: smoke ? [1000] : [1e4, 1e5, 1e6], rounds, impls: ["tarry", "js-heap"] }
        : null,
    comparison:
      only === "growth" || only === "offer"
        ? null
        : {
            sizes: smoke ? [1000] : full ? [1e4, 1e5, 1e6] : [1e4, 1e5],
            rounds,
            // Churn and timed expiry take seconds per run (setTimeout/item churns for ~6 s).
            churnRounds: full ? rounds : Math.min(rounds, 3),
            expiryRounds: smoke ? 1 : Math.min(rounds, 3),
            // At 10^4 the heap's own noise (code, feedback, a GC's timing) is a few hundred kB.
            memRounds: smoke ? 1 : Math.min(rounds, 3),
            churn: smoke ? { pending: 1000, steps: 10_000 } : { pending: 100_000, steps: 1_000_000 },
            expiry: smoke ? { n: 1000, from: 20, to: 200 } : { n: 100_000, from: 200, to: 1000 },
            java: !smoke && !argv.includes("--no-java"),
          },
    growth:
      only === "comparison" || only === "offer"
        ? null
        : {
            plan: value("--growth-plan")
              ? parsePlan(value("--growth-plan"))
              : smoke
                ? { node: [20_000], node24: [20_000], deno: [20_000], chromium: [20_000] }
                : full
                  ? { node: [1e6, 1e7, 3e7], node24: [1e6, 1e7], deno: [1e6, 1e7], chromium: [1e6, 1e7] }
                  : { node: [1e6, 3e6] },
            block: smoke ? 10_000 : 1_000_000,
            rounds: smoke ? 1 : Number(value("--growth-rounds") ?? (full ? 3 : 1)),
          },
  };
}

/** "node:1e6,1e7 deno:1e6" -> { node: [1e6, 1e7], deno: [1e6] } */
function parsePlan(text) {
  const plan = {};
  for (const part of text.trim().split(/\s+/)) {
    const [runtime, sizes] = part.split(":");
    if (!["node", "node24", "deno", "chromium"].includes(runtime))
      throw new Error(`--growth-plan: unknown runtime ${runtime}`);
    plan[runtime] = sizes.split(",").map(Number);
    if (plan[runtime].some((n) => !(Number.isInteger(n) && n > 0)))
      throw new Error(`--growth-plan: bad sizes ${sizes}`);
  }
  return plan;
}
