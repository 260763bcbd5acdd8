// tools/postgres-server.mjs: the private clusters every Postgres test, the benchmark and the
// example start. That a cluster answers on loopback only, keeps the server's durable defaults,
// takes settings, survives a crash restart with what it committed, and leaves nothing behind
// when stopped, when its process exits, or when its process is killed; and that a missing
// installation fails at once, saying so.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { createConnection } from "node:net";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startPostgres } from "../../tools/postgres-server.mjs";

const run = promisify(execFile);
const server = fileURLToPath(new URL("../../tools/postgres-server.mjs", import.meta.url));

/** Whether something accepts TCP connections on 127.0.0.1:port. */
const listening = (port) =>
  new Promise((resolve) => {
    const s = createConnection({ port, host: "127.0.0.1" });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });

/** Polls `test` every 100 ms for up to `ms`; resolves with its last answer. */
async function eventually(test, ms) {
  const end = Date.now() + ms;
  for (;;) {
    const answer = await test();
    if (answer || Date.now() > end) return answer;
    await sleep(100);
  }
}

test("a cluster answers on loopback only, with fsync and synchronous_commit on, and its settings", async () => {
  const pg = await startPostgres({ settings: { max_connections: 123, log_min_messages: "warning" } });
  try {
    assert.equal(pg.url, `postgres://postgres@127.0.0.1:${pg.port}/postgres`);
    assert.equal(await pg.query("SELECT 1 + 1"), "2");
    assert.equal(await pg.query("SHOW max_connections"), "123");
    assert.equal(await pg.query("SHOW log_min_messages"), "warning");
    assert.equal(await pg.query("SHOW fsync"), "on");
    assert.equal(await pg.query("SHOW synchronous_commit"), "on");
    assert.equal(await pg.query("SHOW listen_addresses"), "127.0.0.1");
    assert.match(await pg.query("SELECT version()"), /^PostgreSQL 15\./);
    assert.equal(await listening(pg.port), true);
    await assert.rejects(pg.query("SELECT * FROM no_such_table"), /psql on port \d+: .*no_such_table/);
  } finally {
    await pg.stop();
  }
  assert.equal(existsSync(pg.dir), false, "stop() removes the cluster's directory");
  assert.equal(await listening(pg.port), false, "stop() stops the server");
});

test("a crash restart (immediate) keeps what was committed and serves again on the same port", async () => {
  const pg = await startPostgres();
  try {
    await pg.query("CREATE TABLE kept (n int); INSERT INTO kept SELECT generate_series(1, 1000)");
    const before = await pg.query("SELECT pg_postmaster_start_time()");
    await pg.restart({ immediate: true });
    assert.equal(await pg.query("SELECT count(*) FROM kept"), "1000");
    assert.notEqual(await pg.query("SELECT pg_postmaster_start_time()"), before, "the server was restarted");
    await pg.restart();
    assert.equal(await pg.query("SELECT sum(n) FROM kept"), "500500");
  } finally {
    await pg.stop();
  }
});

test("two clusters at once are separate", async () => {
  const [a, b] = await Promise.all([startPostgres(), startPostgres()]);
  try {
    assert.notEqual(a.port, b.port);
    await a.query("CREATE TABLE only_in_a (n int)");
    await assert.rejects(b.query("SELECT * FROM only_in_a"), /only_in_a/);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});

test("bad options are refused before anything starts", async () => {
  await assert.rejects(startPostgres({ settings: { "bad name; DROP": 1 } }), /settings: .*not a setting name/);
  await assert.rejects(startPostgres({ port: 70000 }), /port: an integer 1\.\.65535/);
});

test("Postgres missing: a clear error at once", async () => {
  const started = Date.now();
  const { stdout } = await run(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { startPostgres } from ${JSON.stringify(server)};
       try { await startPostgres(); console.log("started"); } catch (e) { console.log(e.message); }`,
    ],
    { env: { ...process.env, TARRY_PG_BINDIR: "/nonexistent/bin" } },
  );
  assert.match(stdout, /PostgreSQL is not installed in TARRY_PG_BINDIR=\/nonexistent\/bin/);
  assert.ok(Date.now() - started < 10_000);
});

for (const [how, code] of [
  ["exits", "process.exit(0)"],
  ["is killed with SIGTERM", "process.kill(process.pid, 'SIGTERM')"],
  ["is killed with SIGKILL", "process.kill(process.pid, 'SIGKILL')"],
]) {
  test(`the cluster stops and its directory goes when the process that started it ${how}`, async () => {
    const script = `import { startPostgres } from ${JSON.stringify(server)};
      const pg = await startPostgres();
      console.log(JSON.stringify({ port: pg.port, dir: pg.dir }));
      ${code};`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script]).catch((e) => e);
    const { port, dir } = JSON.parse(stdout);
    // SIGKILL leaves it to the watchdog, which looks every 2 s.
    assert.equal(await eventually(async () => !(await listening(port)) && !existsSync(dir), 15_000), true);
  });
}
