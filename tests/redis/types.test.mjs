// js/redis.d.ts compiles and matches the API as used in tests/redis/types-check.ts (deno check,
// from the deno devDependency).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

test("js/redis.d.ts type-checks against typical use (deno check)", () => {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  // --unstable-sloppy-imports: a local .d.ts's "./tarry.js" resolves to tarry.d.ts, as TypeScript
  // (and Deno, inside an npm package) resolves it.
  const args = ["check", "--quiet", "--unstable-sloppy-imports", "tests/redis/types-check.ts"];
  const r = spawnSync("node_modules/.bin/deno", args, {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  assert.equal(r.status, 0, r.stderr);
});
