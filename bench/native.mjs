// The native comparison as a markdown table, from what `cargo bench` (benches/native.rs)
// left in target/criterion: tarry's core against tokio-util's DelayQueue, and tarry's heap at
// three arities. Prints ns per item (criterion's median) and the ratio tokio ÷ tarry.
//
//   cargo bench && node bench/native.mjs

import { readFileSync, readdirSync, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ns, pow10 } from "./numbers.mjs";

const root = fileURLToPath(new URL("../target/criterion/", import.meta.url));

/** ns per item of one benchmark, or null when it has not run. */
function nsPerItem(id) {
  const dir = `${root}${id}/new/`;
  if (!existsSync(`${dir}estimates.json`)) return null;
  const est = JSON.parse(readFileSync(`${dir}estimates.json`, "utf8"));
  const bench = JSON.parse(readFileSync(`${dir}benchmark.json`, "utf8"));
  const items = bench.throughput?.Elements ?? 1;
  return est.median.point_estimate / items;
}

const out = [];
out.push("| operation | N | tarry core, ns/item | tokio-util DelayQueue, ns/item | tarry faster by |");
out.push("| --- | --- | ---: | ---: | ---: |");
for (const [op, label] of [
  ["insert", "insert (offer_at / insert_at)"],
  ["remove", "remove N/2 by handle / key"],
  ["pop", "pop expired (poll_expired)"],
]) {
  for (const n of [1e4, 1e5, 1e6]) {
    const t = nsPerItem(`${op}/tarry/${n}`);
    const k = nsPerItem(`${op}/tokio/${n}`);
    if (t == null && k == null) continue;
    out.push(`| ${label} | ${pow10(n)} | ${ns(t)} | ${ns(k)} | ${t && k ? `×${(k / t).toFixed(2)}` : "–"} |`);
  }
}
{
  const t = nsPerItem("churn/tarry");
  const k = nsPerItem("churn/tokio");
  if (t != null || k != null)
    out.push(
      `| churn: insert + remove | 10^5 + 10^6 | ${ns(t)} | ${ns(k)} | ${t && k ? `×${(k / t).toFixed(2)}` : "–"} |`,
    );
}
// Criterion names the directory of `arity/4/insert` "arity/4_insert".
const arityDirs = existsSync(`${root}arity`) ? readdirSync(`${root}arity`) : [];
const arities = [...new Set(arityDirs.map((d) => d.match(/^(\d+)_/)?.[1]).filter(Boolean))].sort((a, b) => a - b);
if (arities.length) {
  out.push("");
  out.push(
    `| tarry's heap (src/heap.rs) by arity, N = 10^6, ns/item | ${arities.map((a) => `${a}-ary`).join(" | ")} |`,
  );
  out.push(`| --- | ${arities.map(() => "---:").join(" | ")} |`);
  for (const op of ["insert", "remove", "pop"]) {
    out.push(`| ${op} | ${arities.map((a) => ns(nsPerItem(`arity/${a}_${op}/1000000`))).join(" | ")} |`);
  }
}
console.log(out.join("\n"));
