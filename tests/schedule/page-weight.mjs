// What a page loads: the JS of tarry's browser entry bundled and minified with esbuild
// (`--bundle --minify`, ESM), raw and gzipped (level 9), for what each kind of page
// imports; the wasm is in it, inline (dist/tarry_inline.js), and nothing else is fetched. It
// shows that `every` brings no cron code in, and what tarry-queue/cron adds (croner).
//
//   node tests/schedule/page-weight.mjs      (esbuild from tests/bundlers: bash scripts/setup-consumers.sh)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const repository = fileURLToPath(new URL("../..", import.meta.url));

/** The pages: what each imports and uses, from the tree at `root` (this one by default). */
export function pagesOf(root = repository) {
  const web = JSON.stringify(join(root, "js/web.js"));
  const cronEntry = JSON.stringify(join(root, "js/cron.js"));
  return {
    DelayQueue: `import { DelayQueue } from ${web};
    new DelayQueue().offer(1, 10);`,
    "DelayQueue + Scheduler#schedule": `import { DelayQueue, Scheduler } from ${web};
    new DelayQueue().offer(1, 10); new Scheduler().schedule(() => {}, 10);`,
    "DelayQueue + Scheduler#every": `import { DelayQueue, Scheduler } from ${web};
    new DelayQueue().offer(1, 10); new Scheduler().every(1000, () => {});`,
    "DelayQueue + Scheduler#cron (tarry-queue/cron)": `import { DelayQueue, Scheduler } from ${web};
    import { cron } from ${cronEntry};
    new DelayQueue().offer(1, 10);
    new Scheduler({ cron }).cron("0 9 * * 1-5", () => {}, { timezone: "Europe/Berlin" });`,
  };
}

function esbuild() {
  try {
    return createRequire(join(repository, "tests/bundlers/package.json"))("esbuild");
  } catch (e) {
    throw new Error(`esbuild is installed by bash scripts/setup-consumers.sh (tests/bundlers): ${e.message}`);
  }
}

/** { page: { bytes, gzip, code } } for each page, and the wasm's { bytes, gzip }, of the tree at `root`. */
export function measure(root = repository) {
  const { buildSync } = esbuild();
  const dir = mkdtempSync(join(tmpdir(), "tarry-weight-"));
  try {
    const pages = {};
    for (const [name, source] of Object.entries(pagesOf(root))) {
      const entry = join(dir, "page.mjs");
      writeFileSync(entry, source);
      const out = buildSync({
        entryPoints: [entry],
        bundle: true,
        minify: true,
        format: "esm",
        platform: "browser",
        write: false,
        logLevel: "silent",
        outdir: join(dir, "out"),
      });
      const code = out.outputFiles.find((f) => f.path.endsWith(".js")).contents;
      pages[name] = {
        bytes: code.length,
        gzip: gzipSync(code, { level: 9 }).length,
        code: Buffer.from(code).toString(),
      };
    }
    const wasm = readFileSync(join(root, "dist/tarry_bg.wasm"));
    return { pages, wasm: { bytes: wasm.length, gzip: gzipSync(wasm, { level: 9 }).length } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { pages, wasm } = measure();
  const kB = (n) => `${(n / 1000).toFixed(1)} kB`;
  console.log(`dist/tarry_bg.wasm: ${kB(wasm.bytes)} (${kB(wasm.gzip)} gzipped), inline in every page's JS`);
  const base = Object.values(pages)[0];
  for (const [name, p] of Object.entries(pages)) {
    const more = p === base ? "" : `, +${kB(p.gzip - base.gzip)} gzipped`;
    console.log(`${name}: ${kB(p.bytes)} of JS minified, ${kB(p.gzip)} gzipped${more}`);
  }
}
