// The `tarry-queue` command against a known queue on a private redis-server: `inspect` as
// text and as JSON, `dashboard` serving the queue, and its refusals of bad arguments.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "./redis-server.mjs";

const cli = fileURLToPath(new URL("../../js/cli.js", import.meta.url));
const run = promisify(execFile);
const HOUR = 3_600_000;

let server;
let queue;
let known;

before(async () => {
  server = await startRedis();
  queue = new RedisDelayQueue({ redis: server.url, name: "orders", maxAttempts: 1 });
  const t = Date.now() + HOUR;
  await queue.offerMany([
    { value: { card: "4111" }, deadline: t + 2000, id: "order-2" },
    { value: { card: "5500" }, deadline: t + 1000, id: "order-1" },
    { value: { card: "6011" }, deadline: t + 3000, id: "order-3" },
    { value: "boom", delayMs: 0, id: "order-dead" },
  ]);
  const job = await queue.take();
  await job.nack({ reason: new Error("card declined") });
  known = { t };
});

after(async () => {
  await queue?.close();
  await server?.stop();
});

const inspect = (...args) =>
  run(process.execPath, [cli, "inspect", "--redis", server.url, "--name", "orders", ...args]);

test("inspect --json: counts, the next deadlines in order, the dead letters, no values", async () => {
  const { stdout } = await inspect("--json", "--limit", "2");
  const r = JSON.parse(stdout);
  assert.equal(r.name, "orders");
  assert.equal(r.paused, false);
  assert.deepEqual(r.counts, { pending: 3, inFlight: 0, dead: 1 });
  assert.deepEqual(
    r.next.map((i) => [i.id, i.state, i.attempt, i.deadline]),
    [
      ["order-1", "pending", 0, known.t + 1000],
      ["order-2", "pending", 0, known.t + 2000],
    ],
  );
  assert.deepEqual(r.inFlight, []);
  assert.equal(r.deadLetters.length, 1);
  assert.equal(r.deadLetters[0].id, "order-dead");
  assert.match(r.deadLetters[0].reason, /card declined/);
  assert.ok(!stdout.includes("4111"), "no values in the output");
  assert.deepEqual([r.all.delivered, r.all.dead], [1, 1]);
  assert.ok(r.headDelay > HOUR - 60_000 && r.headDelay <= HOUR + 1000);
});

test("inspect: the same as text for a terminal", async () => {
  const { stdout } = await inspect();
  const lines = stdout.split("\n");
  assert.match(lines[0], /^queue orders on redis:\/\/127\.0\.0\.1:\d+: running$/);
  assert.match(lines[1], /^ {2}pending 3, in flight 0, dead 1; head due in 1\.0 h$/);
  assert.match(lines[2], /^ {2}every process: delivered 1, acked 0, nacked 0, redelivered 0, dead 1; lateness p50 /);
  assert.equal(lines[4], "next deadlines (3 of 3):");
  assert.deepEqual(
    lines.slice(5, 8).map((l) => /"(order-\d)" {2}attempt 0$/.exec(l)?.[1]),
    ["order-1", "order-2", "order-3"],
  );
  assert.equal(lines[9], "in flight (0 of 0):");
  assert.equal(lines[11], "dead letters (1 of 1):");
  assert.match(lines[12], /^ {2}"order-dead" {2}died \d+(\.\d+)? (ms|s) ago, attempt 1: Error: card declined$/);
});

test("dashboard: serves the queue on 127.0.0.1 and prints its address (with the token when given)", async (t) => {
  const child = spawn(
    process.execPath,
    [cli, "dashboard", "--redis", server.url, "--name", "orders", "--port", "0", "--token", "a-long-token"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  t.after(() => child.kill("SIGKILL"));
  const line = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("\n")) resolve(out.trim());
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code}`)));
  });
  const m = /^tarry dashboard for orders: (http:\/\/127\.0\.0\.1:\d+\/)#token=a-long-token$/.exec(line);
  assert.ok(m, line);
  const info = await (await fetch(`${m[1]}api/queues`)).json();
  assert.deepEqual(info, { queues: ["orders"], write: true, values: false });
  const stats = await (await fetch(`${m[1]}api/queues/orders/stats`)).json();
  assert.equal(stats.stats.pending, 3);
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
});

test("bad arguments: a message naming them and exit code 2", async () => {
  for (const [args, message] of [
    [["inspect"], /--name is required/],
    [["inspect", "--name", "a", "--nmae", "b"], /Unknown option '--nmae'/],
    [["inspect", "--name", "a", "--port", "1"], /--port is not an option of inspect/],
    [["frobnicate", "--name", "a"], /unknown command: frobnicate/],
    [["inspect", "--name", "a", "--limit", "0"], /--limit must be a whole number from 1 to 1000/],
    [["dashboard", "--name", "a", "--token", "short"], /--token must be at least 8 characters/],
  ]) {
    await assert.rejects(run(process.execPath, [cli, ...args]), (e) => {
      assert.equal(e.code, 2, args.join(" "));
      assert.match(e.stderr, message);
      return true;
    });
  }
  const { stdout } = await run(process.execPath, [cli, "--help"]);
  assert.match(stdout, /^Usage:/);
});

test("inspect --shards K: a queue over several shards, read across them; the wrong K refused, naming shards", async () => {
  const sharded = new RedisDelayQueue({ redis: server.url, name: "spread", shards: 3 });
  try {
    const t = Date.now() + HOUR;
    await sharded.offerMany(["a", "b", "c", "d"].map((id, i) => ({ id, value: id, deadline: t + 1000 * (4 - i) })));
    const spread = (...args) =>
      run(process.execPath, [cli, "inspect", "--redis", server.url, "--name", "spread", ...args]);
    const r = JSON.parse((await spread("--shards", "3", "--json")).stdout);
    assert.deepEqual(r.counts, { pending: 4, inFlight: 0, dead: 0 });
    assert.deepEqual(
      r.next.map((i) => i.id),
      ["d", "c", "b", "a"],
    );
    await assert.rejects(spread("--json"), (e) => /shards/.test(e.stderr));
    await assert.rejects(spread("--shards", "0"), (e) => /--shards must be a whole number from 1 to 64/.test(e.stderr));
  } finally {
    await sharded.close();
  }
});
