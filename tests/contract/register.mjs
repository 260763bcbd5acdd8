// What the runners share: every case of the contract (cases.mjs) as a node:test test against a
// fresh engine, with a runner's expected failures held to their word. An expected failure is a
// case the engine fails today for a named reason: its test passes only while the case still
// fails with an error matching `error`, so the list can only shrink, and never hides a case.

import { test } from "node:test";
import assert from "node:assert/strict";
import { cases } from "./cases.mjs";

export { cases };

/**
 * @param {(c: { name: string }) => Promise<{ run: () => Promise<void>, dispose: () => Promise<void> }>} start
 *   a fresh engine for case `c`: `run()` runs the case against it, `dispose()` cleans up.
 * @param {{ expectedFailures?: Record<string, { why: string, error: RegExp }>, leftOut?: Record<string, string>, inMemory?: boolean }} [lists]
 *   expectedFailures: cases that must still fail, and why; leftOut: cases not run, and why
 *   (a method the engine does not have yet: the runner checks that it still lacks it);
 *   inMemory: only the cases that hold for the in-memory DelayQueue too (cases.mjs).
 */
export function register(start, { expectedFailures = {}, leftOut = {}, inMemory = false } = {}) {
  const names = new Set(cases.map((c) => c.name));
  test("the runner's lists name cases of the contract", () => {
    for (const name of [...Object.keys(expectedFailures), ...Object.keys(leftOut)]) {
      assert.ok(names.has(name), `no case is named ${JSON.stringify(name)}`);
    }
  });
  for (const c of cases) {
    if (Object.hasOwn(leftOut, c.name) || (inMemory && !c.inMemory)) continue;
    const expected = Object.hasOwn(expectedFailures, c.name) ? expectedFailures[c.name] : undefined;
    const title = expected === undefined ? c.name : `${c.name} [expected to fail: ${expected.why}]`;
    test(title, async (t) => {
      const engine = await start(c);
      try {
        if (expected === undefined) {
          await engine.run();
          return;
        }
        let failure;
        try {
          await engine.run();
        } catch (e) {
          failure = e;
        }
        assert.ok(
          failure !== undefined,
          `expected to fail (${expected.why}) but it passed: remove it from the runner's expected failures`,
        );
        t.diagnostic(`fails as expected: ${String(failure?.message ?? failure)}`);
        assert.match(
          String(failure?.stack ?? failure),
          expected.error,
          `failed, but not for the reason listed (${expected.why})`,
        );
      } finally {
        await engine.dispose();
      }
    });
  }
}
