// The growth workload in headless Chromium: Debian's /usr/bin/chromium driven by
// playwright-core, as the browser tests do (tools/chromium.mjs), one fresh browser
// per run, the repository served by tools/serve.mjs. Full GCs come from a Chromium trace
// ("MajorGC" events): pages have no PerformanceObserver for collections.

import { chromium } from "playwright-core";
import { serve } from "../../tools/serve.mjs";
import { spent } from "../processes.mjs";

const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";

/** Full collections in a trace, on the page's performance.now() clock, forced ones left out. */
export function fullGcsFromTrace(events, calibration) {
  const mark = events.find((e) => e.name === "tarry-calibration");
  if (!mark) throw new Error("no calibration mark in the trace");
  const offset = mark.ts / 1000 - calibration;
  return events
    .filter((e) => e.name === "MajorGC" && e.ph === "X" && e.args?.type !== "testing")
    .map((e) => ({ start: e.ts / 1000 - offset, duration: e.dur / 1000 }));
}

export async function growthInChromium(impl, n, block) {
  const t0 = performance.now();
  const server = await serve();
  const browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${server.url}/bench/runtimes/page.html`);
    await page.waitForFunction(() => document.title === "ready" || null, null, { timeout: 30_000 });
    await browser.startTracing(page, { categories: ["devtools.timeline", "blink.user_timing"] });
    const result = await page.evaluate(([i, n, b]) => window.runGrowth(i, n, b), [impl, n, block]);
    const trace = JSON.parse((await browser.stopTracing()).toString());
    if (errors.length) throw new Error(`the page threw: ${errors.join("; ")}`);
    result.gcs = fullGcsFromTrace(trace.traceEvents, result.calibration);
    result.runtime = `Chromium ${browser.version()}`;
    return result;
  } finally {
    await browser.close();
    await server.close();
    spent[`growth ${impl} (chromium)`] = (spent[`growth ${impl} (chromium)`] ?? 0) + (performance.now() - t0) / 1000;
  }
}
