// The one bad-input table (tests/bad-input.mjs) under Deno, with the package as Deno resolves
// it. Node, Chromium and workerd run the same table.
import { assert } from "./assert.ts";
import { DelayQueue, Scheduler, init } from "tarry-queue";
import { report, sweep } from "../bad-input.mjs";

Deno.test("bad input everywhere: each call throws a clear error naming the argument and changes nothing", async () => {
  const result = await sweep({ DelayQueue, Scheduler, init });
  console.log(`bad input (Deno ${Deno.version.deno}): ${result.ran} calls over ${result.methods.length} methods`);
  assert(result.failures.length === 0, report(result));
  assert(result.ran > 400, `only ${result.ran} rows`);
});
