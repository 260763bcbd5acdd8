// README.md's Redis example, run as written (with REDIS_URL pointing at a private
// redis-server) from a file inside this package, so "tarry-queue/redis" resolves to it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readmeExample } from "../readme.mjs";
import { startRedis } from "./redis-server.mjs";

test("README: the Redis example runs as written and prints what the README says", async () => {
  const redis = await startRedis();
  const dir = mkdtempSync(join(fileURLToPath(new URL("../..", import.meta.url)), ".readme-redis-"));
  try {
    writeFileSync(join(dir, "main.mjs"), readmeExample("js", "redis"));
    const r = spawnSync(process.execPath, ["main.mjs"], {
      cwd: dir,
      encoding: "utf8",
      timeout: 20_000,
      env: { ...process.env, REDIS_URL: redis.url },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, readmeExample("text", "redis-output"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await redis.stop();
  }
});
