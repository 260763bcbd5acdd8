// js/redis.d.ts compiles and matches the API as used in tests/redis/types-check.ts (deno check,
// from the deno devDependency).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

test("js/redis.d.ts type-checks against typical use (deno check)", () => {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const r = spawnSync("node_modules/.bin/deno", ["check", "--quiet", "tests/redis/types-check.ts"], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  assert.equal(r.status, 0, r.stderr);
});
