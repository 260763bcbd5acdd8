// The `tarry-queue` command against a known queue on a private redis-server: `inspect` as
// text and as JSON, `dashboard` serving the queue, and its refusals of bad arguments.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { Redis } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "../../tools/redis-server.mjs";
import { assertUnreachableRedacted, run, startDashboard, stopDashboard } from "../engines/cli.mjs";
import { deadPort } from "../engines/dead-port.mjs";

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

const inspectNamed = (name, ...args) => run("inspect", "--redis", server.url, "--name", name, ...args);
const inspect = (...args) => inspectNamed("orders", ...args);

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
  const dashboard = await startDashboard(t, ["--redis", server.url, "--name", "orders", "--token", "a-long-token"]);
  const m = /^tarry dashboard for orders: (http:\/\/127\.0\.0\.1:\d+\/)#token=a-long-token$/.exec(dashboard.line);
  assert.ok(m, dashboard.line);
  const info = await (await fetch(`${m[1]}api/queues`)).json();
  assert.deepEqual(info, { queues: ["orders"], write: true, values: false });
  const stats = await (await fetch(`${m[1]}api/queues/orders/stats`)).json();
  assert.equal(stats.stats.pending, 3);
  await stopDashboard(dashboard);
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
    await assert.rejects(run(...args), (e) => {
      assert.equal(e.code, 2, args.join(" "));
      assert.match(e.stderr, message);
      return true;
    });
  }
  const { stdout } = await run("--help");
  assert.match(stdout, /^Usage:/);
});

test("inspect --shards K: a queue over several shards, read across them; the wrong K refused, naming shards", async () => {
  const sharded = new RedisDelayQueue({ redis: server.url, name: "spread", shards: 3 });
  try {
    const t = Date.now() + HOUR;
    await sharded.offerMany(["a", "b", "c", "d"].map((id, i) => ({ id, value: id, deadline: t + 1000 * (4 - i) })));
    const spread = (...args) => run("inspect", "--redis", server.url, "--name", "spread", ...args);
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

/** A GET with any Host header (fetch does not let one forge it). */
function getWithHost(port, path, host) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
      let text = "";
      res.on("data", (d) => {
        text += d;
      });
      res.on("end", () => resolve({ status: res.statusCode, text }));
    });
    req.on("error", reject);
  });
}

test("dashboard: a forged Host (DNS rebinding) gets 403 and nothing of the queue; --allowed-host adds a name", async (t) => {
  const { base, port } = await startDashboard(t, [
    "--redis",
    server.url,
    "--name",
    "orders",
    "--values",
    "--allowed-host",
    "queues.example",
  ]);
  for (const host of [`evil.example:${port}`, `queues.example.evil.example:${port}`]) {
    const r = await getWithHost(port, "/api/queues/orders/pending", host);
    assert.equal(r.status, 403, host);
    assert.ok(!r.text.includes("4111") && !r.text.includes("order-1"), r.text);
  }
  for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `queues.example:${port}`]) {
    const r = await getWithHost(port, "/api/queues/orders/pending", host);
    assert.equal(r.status, 200, host);
    assert.ok(r.text.includes("4111"), "--values shows the values to an allowed host");
  }
  assert.equal((await fetch(`${base}api/queues`)).status, 200);
});

test("a Redis password never reaches the terminal nor a viewer: inspect's stderr, the dashboard's 500 and its log", async (t) => {
  await assertUnreachableRedacted(t, {
    engineArgs: ["--redis", `redis://:S3cret@127.0.0.1:${await deadPort()}`],
    name: "orders",
    secret: "S3cret",
    shown: /redis:\/\/:\*\*\*@127\.0\.0\.1/,
  });
});

test("inspect --name of a queue never used: says so, lists the queues there, exits 1, and creates nothing", async () => {
  await assert.rejects(inspectNamed("never-used"), (e) => {
    assert.equal(e.code, 1);
    assert.match(
      e.stderr,
      /no queue named "never-used" was ever used on redis:\/\/127\.0\.0\.1:\d+ \(prefix "tarry:"\)/,
    );
    assert.match(e.stderr, /the queues there: .*\borders\b/);
    return true;
  });
  await assert.rejects(inspectNamed("never-used", "--shards", "3"), (e) => e.code === 1);
  const probe = new Redis(server.url);
  try {
    assert.deepEqual(await probe.keys("*never-used*"), [], "the check wrote nothing");
  } finally {
    probe.disconnect();
  }
});

test("values hidden: a record that does not read as JSON is served without its text (raw)", async (t) => {
  const odd = new RedisDelayQueue({ redis: server.url, name: "odd", maxAttempts: 1 });
  t.after(() => odd.close());
  await odd.offer("fine", 0, { id: "fine" });
  const raw = new Redis(server.url);
  t.after(() => raw.disconnect());
  await raw.hset(odd.keys.items, "weird", "not a record: card 4111-9999");
  await raw.zadd(odd.keys.pending, 0, `${"0".repeat(16)}weird`);
  // A record that reads, whose value is not JSON: the consumer buries it as it takes it.
  await odd.offer("v", 0, { id: "badvalue" });
  const record = await raw.hget(odd.keys.items, "badvalue");
  await raw.hset(odd.keys.items, "badvalue", record.replace(/"v"$/, "card-4111-8888"));
  await (await odd.take()).ack(); // the take script buries the unreadable record as it passes
  assert.equal(await odd.take({ timeout: 1000 }), undefined, "the bad value is buried, not handed out");
  const dead = await odd.deadLetters();
  const byId = Object.fromEntries(dead.items.map((d) => [d.id, d]));
  assert.equal(byId.weird.raw, "not a record: card 4111-9999", "the engine keeps the text");
  assert.equal(byId.badvalue.raw, "card-4111-8888");
  assert.ok(!byId.badvalue.reason.includes("4111"), `the reason quotes no value: ${byId.badvalue.reason}`);
  const { base } = await startDashboard(t, ["--redis", server.url, "--name", "odd"]);
  for (const path of ["dead", "dead?order=newest", "item?id=weird", "item?id=badvalue"]) {
    const body = await (await fetch(`${base}api/queues/odd/${path}`)).text();
    assert.match(body, /weird|badvalue/);
    assert.ok(!body.includes("4111") && !body.includes('"raw"'), `${path}: ${body}`);
  }
});

test("inspect shows the schedules: rule, next and last run with its outcome, runs, skipped, catchUp, overlap (and --json)", async (t) => {
  const sched = new RedisDelayQueue({ redis: server.url, name: "reports", maxAttempts: 1 });
  t.after(() => sched.close());
  await sched.schedule("nightly", { cron: "0 2 * * *", timezone: "America/New_York" }, { kind: "report" });
  await sched.schedule("beat", { every: 100 }, { kind: "beat", card: "4111" }, { overlap: true, catchUp: "none" });
  const job = await sched.take();
  assert.equal(job.schedule, "beat");
  await job.nack({ reason: new Error("beat failed") });
  const r = JSON.parse((await inspectNamed("reports", "--json")).stdout);
  assert.equal(r.scheduleCount, 2);
  const [beat, nightly] = r.schedules;
  assert.deepEqual(
    [beat.id, beat.rule, beat.every, beat.runs, beat.catchUp, beat.overlap, beat.lastRun, beat.lastOutcome],
    ["beat", "every 100 ms", 100, 1, "none", true, job.deadline, "failed"],
  );
  assert.match(beat.lastReason, /beat failed/);
  assert.ok(beat.nextRun > beat.lastRun);
  assert.deepEqual(
    [nightly.id, nightly.cron, nightly.timezone, nightly.runs, nightly.lastRun ?? null, nightly.lastOutcome ?? null],
    ["nightly", "0 2 * * *", "America/New_York", 0, null, null],
  );
  assert.ok(!JSON.stringify(r).includes("4111"), "no values");
  const lines = (await inspectNamed("reports")).stdout.split("\n");
  const at = lines.indexOf("schedules (2 of 2):");
  assert.ok(at > 0, lines.join("\n"));
  assert.match(
    lines[at + 1],
    /^ {2}"beat" {2}every 100 ms; next (in|.* ago).*; last .* ago: failed \(Error: beat failed\); runs 1, skipped \d+; catchUp none, overlap yes$/,
  );
  assert.match(
    lines[at + 2],
    /^ {2}"nightly" {2}cron 0 2 \* \* \* \(America\/New_York\); next in .*; never run; runs 0, skipped 0; catchUp one, overlap no$/,
  );
});
