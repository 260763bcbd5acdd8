// node:test's mock.timers fakes setTimeout and Date but not performance.now(): a queue
// follows it when handed `clock: () => Date.now()`. The docs' node:test examples run here too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { blocksFor } from "../../scripts/docs/blocks.mjs";
import { takesFollowFakeTime } from "./scenario.mjs";

test("node:test mock.timers: take() follows mock.timers.tick() with { clock: () => Date.now() }", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
  await takesFollowFakeTime((ms) => t.mock.timers.tick(ms), { clock: () => Date.now() });
});

// Every ```js node-test block of README.md and docs/ (scripts/docs/blocks.mjs): a node:test
// file, run as written with `node --test` from inside this folder, so that "tarry-queue" and
// the fake-timer libraries resolve; every test in it must pass.
const blocks = blocksFor("node-test");

test("the docs have node-test blocks", () => {
  assert.ok(blocks.length >= 2, `${blocks.length} node-test blocks`);
});

blocks.forEach((b, i) => {
  test(`${b.where}: its tests pass`, () => {
    const file = new URL(`./docs-example-${i}.tmp.mjs`, import.meta.url);
    writeFileSync(file, b.code);
    try {
      const env = { ...process.env };
      delete env.NODE_TEST_CONTEXT; // a test run of its own, not a child of this one
      const r = spawnSync(process.execPath, ["--test", "--test-reporter=tap", file.pathname], {
        encoding: "utf8",
        env,
        timeout: 60_000,
      });
      assert.equal(r.status, 0, `${b.where}:\n${r.stdout}${r.stderr}`);
      assert.match(r.stdout, /# pass [1-9]/, `${b.where}: no test ran`);
      assert.match(r.stdout, /# fail 0/);
    } finally {
      rmSync(file, { force: true });
    }
  });
});
