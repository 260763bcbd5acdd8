// The one bad-input table (tests/bad-input.mjs) under Node (this file runs in the Node 20 and
// the Node 24 pass of `npm test`). Deno, Chromium and workerd run the same table.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DelayQueue, Scheduler, init } from "tarry-queue";
import { report, sweep } from "../bad-input.mjs";

test("bad input everywhere: each call throws a clear error naming the argument and changes nothing", async () => {
  const result = await sweep({ DelayQueue, Scheduler, init });
  console.log(`bad input (Node ${process.versions.node}): ${result.ran} calls over ${result.methods.length} methods`);
  assert.equal(result.failures.length, 0, report(result));
  assert.ok(result.ran > 400, `only ${result.ran} rows`);
});
