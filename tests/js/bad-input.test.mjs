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

test("messages: capacity NaN, a Date from another realm, an aborted duck-typed signal", async () => {
  assert.throws(
    () => new DelayQueue({ capacity: NaN }),
    (e) => e instanceof RangeError && /capacity/.test(e.message) && !/must be a number/.test(e.message),
  );
  const { runInNewContext } = await import("node:vm");
  const foreignDate = runInNewContext("new Date(Date.now() - 1000)");
  const q = new DelayQueue();
  q.offerAt("foreign", foreignDate);
  assert.equal(q.poll(), "foreign");
  const duck = { aborted: true, addEventListener() {}, removeEventListener() {} };
  const e = await q.take({ signal: duck }).then(
    () => assert.fail("resolved"),
    (err) => err,
  );
  assert.ok(e !== undefined && e.name === "AbortError", `rejected with ${e}`);
  await assert.rejects(q.put("x", 1, { signal: duck }), { name: "AbortError" });
  q.close();
});
