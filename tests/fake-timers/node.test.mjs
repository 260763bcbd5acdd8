// node:test's mock.timers fakes setTimeout and Date but not performance.now(): a queue
// follows it when handed `clock: () => Date.now()`. README.md's example of it runs here too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { readmeExample } from "../readme.mjs";
import { takesFollowFakeTime } from "./scenario.mjs";

test("node:test mock.timers: take() follows mock.timers.tick() with { clock: () => Date.now() }", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
  await takesFollowFakeTime((ms) => t.mock.timers.tick(ms), { clock: () => Date.now() });
});

test("README: the fake-time example runs as written and passes", () => {
  // Inside the package, so that "tarry-queue" resolves to it.
  const file = new URL("./readme-example.tmp.mjs", import.meta.url);
  writeFileSync(file, readmeExample("js", "fake-time"));
  try {
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT; // a test run of its own, not a child of this one
    const r = spawnSync(process.execPath, ["--test", "--test-reporter=tap", file.pathname], { encoding: "utf8", env });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /# pass 1/);
  } finally {
    rmSync(file, { force: true });
  }
});
