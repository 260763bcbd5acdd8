// tarry-queue/redis's connection against real Redis and no Redis at all: calls keep their order
// before the first connection and after the server lost its scripts; every call fails within
// seconds, with an error that says why, when Redis cannot be reached, refuses the database or
// lacks a permission (the ACL rules of docs/redis.md are enough, and one missing is named);
// close() never hangs and leaves nothing running; many queues share one client quietly.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { privateRedis } from "./fixture.mjs";
import { startRedis } from "../../tools/redis-server.mjs";
import { deadPort } from "../engines/dead-port.mjs";

const fx = privateRedis("c");
const open = fx.open;

/** How `promise` settles, and after how many ms. */
async function timed(promise) {
  const t = performance.now();
  try {
    return { value: await promise, ms: performance.now() - t };
  } catch (error) {
    return { error, ms: performance.now() - t };
  }
}

test("calls made before the first connection reach Redis in the order they were made", async () => {
  const q = open();
  const [, , cancelled] = await Promise.all([
    q.offer(1, 60_000, { id: "x" }),
    q.offer(2, 60_000, { id: "y" }),
    q.cancel("y"),
  ]);
  assert.equal(cancelled, true, "the cancel overtook the offer it cancels");
  assert.equal(await q.size(), 1);
  assert.equal(await q.delayOf("y"), undefined);
});

test("after SCRIPT FLUSH or a restart, a call whose script must be sent again is not overtaken", async () => {
  const q = open();
  await q.offer(0, 60_000, { id: "warm" });
  await fx.raw.script("FLUSH");
  assert.equal(await q.cancel("nothing"), false); // the cancel script is loaded again; offer's is not
  const [, cancelled] = await Promise.all([q.offer(1, 60_000, { id: "x" }), q.cancel("x")]);
  assert.equal(cancelled, true, "after SCRIPT FLUSH: the cancel overtook the offer");
  assert.equal(await q.delayOf("x"), undefined);

  const redis = await startRedis();
  try {
    const r = new RedisDelayQueue({ redis: redis.url, name: "restarted", onerror: () => {} });
    await r.offer(0, 60_000, { id: "warm" });
    await redis.kill();
    await redis.start();
    assert.equal(await r.cancel("nothing"), false);
    const [, again] = await Promise.all([r.offer(1, 60_000, { id: "x" }), r.cancel("x")]);
    assert.equal(again, true, "after a restart: the cancel overtook the offer");
    assert.equal(await r.size(), 0);
    await r.close();
  } finally {
    await redis.stop();
  }
});

test("no Redis, no such host, a database Redis refuses: each call rejects within seconds saying why; errors reported once", async () => {
  const port = await deadPort();
  const errs = { down: [], db99: [] };
  const down = new RedisDelayQueue({
    redis: `redis://127.0.0.1:${port}`,
    name: "down",
    onerror: (e) => errs.down.push(e),
  });
  const nowhere = new RedisDelayQueue({ redis: "redis://no-such-host.invalid:6379", name: "x", onerror: () => {} });
  const db99 = new RedisDelayQueue({ redis: `${fx.server.url}/99`, name: "db", onerror: (e) => errs.db99.push(e) });
  const [a, b, c] = await Promise.all([timed(down.offer(1, 0)), timed(nowhere.offer(1, 0)), timed(db99.offer(1, 0))]);
  // The default commandTimeout (5000 ms) bounds each; the margins are for a loaded machine.
  assert.ok(a.error, "an offer to a port nothing listens on resolved");
  assert.match(
    a.error.message,
    new RegExp(`no connection to Redis at redis://127\\.0\\.0\\.1:${port} within 5000 ms.*ECONNREFUSED`),
  );
  assert.ok(a.ms >= 4900 && a.ms < 8000, `rejected after ${a.ms} ms`);
  assert.ok(b.error && b.ms < 8000, `an unknown host: ${b.error?.message} after ${b.ms} ms`);
  assert.match(b.error.message, /no connection to Redis at redis:\/\/no-such-host\.invalid:6379 within 5000 ms/);
  assert.ok(c.error, "an offer to database 99 resolved");
  assert.match(
    c.error.message,
    /Redis refused the database of redis:\/\/127\.0\.0\.1:\d+\/99 \(ERR DB index is out of range\)/,
  );
  assert.ok(c.ms < 3000, `database 99 refused after ${c.ms} ms`);
  assert.equal(
    await fx.raw.exists(...Object.values(db99.keys).slice(0, 6)),
    0,
    "the offer to database 99 landed in database 0",
  );
  // ioredis retried the connection about five times meanwhile: onerror heard of it once.
  assert.equal(errs.down.length, 1, errs.down.map(String).join("\n"));
  assert.equal(errs.db99.length, 1, errs.db99.map(String).join("\n"));
  // A take waits through an outage, but one refused for good rejects.
  await assert.rejects(db99.take(), /Redis refused the database/);
  await Promise.all([down.close(), nowhere.close(), db99.close()]);

  assert.throws(() => new RedisDelayQueue({ redis: "http://127.0.0.1:6379", name: "x" }), {
    name: "TypeError",
    message: /^options\.redis must be a redis:\/\/ or rediss:\/\/ URL, got a URL of scheme http:/,
  });
  assert.throws(() => new RedisDelayQueue({ redis: "/tmp/redis.sock", name: "x" }), { name: "TypeError" });
});

test("close() resolves within seconds with Redis paused or killed, and leaves nothing to keep the process alive", async () => {
  const redis = await startRedis();
  try {
    const q = new RedisDelayQueue({ redis: redis.url, name: "p", commandTimeout: 1000, onerror: () => {} });
    await q.offer(1, 60_000);
    const waiting = q.take();
    waiting.catch(() => {}); // it rejects while close() runs, before assert.rejects looks
    await sleep(100);
    await redis.kill("SIGSTOP");
    const offered = timed(q.offer(2, 0));
    const closed = await timed(q.close());
    assert.ok(closed.ms < 3000, `close() took ${closed.ms} ms with Redis paused`);
    await assert.rejects(waiting, { name: "ClosedError" });
    const o = await offered;
    assert.match(o.error?.message ?? "", /no reply from Redis at .* within 1000 ms.*may or may not have taken effect/);
    await redis.kill("SIGCONT");

    const k = new RedisDelayQueue({ redis: redis.url, name: "k", commandTimeout: 1000, onerror: () => {} });
    await k.offer(1, 60_000);
    k.take().catch(() => {});
    await redis.kill("SIGKILL");
    await sleep(100);
    const killed = await timed(k.close());
    assert.ok(killed.ms < 3000, `close() took ${killed.ms} ms with Redis killed`);
  } finally {
    await redis.stop();
  }

  // A process whose queue found no Redis (a take and a failed offer: retries armed) ends once it closes.
  const port = await deadPort();
  const code = `
    import { RedisDelayQueue } from "tarry-queue/redis";
    const q = new RedisDelayQueue({ redis: "redis://127.0.0.1:${port}", name: "x", commandTimeout: 500, onerror: () => {} });
    q.take().catch(() => {});
    await q.offer(1, 0).catch(() => {});
    await q.close();
    console.log("closed");
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], { cwd: import.meta.dirname });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const t = performance.now();
  const exited = await Promise.race([new Promise((r) => child.once("exit", r)), sleep(8000).then(() => "running")]);
  if (exited === "running") child.kill("SIGKILL");
  assert.equal(out.trim(), "closed");
  assert.notEqual(exited, "running", "the process was still running 8 s after close()");
  assert.ok(performance.now() - t < 5000, `the process ended ${performance.now() - t} ms after it started`);
});

test("many queues on one shared client: no MaxListenersExceededWarning, one subscriber, each queue hears its own messages", async () => {
  const client = new Redis(fx.server.url);
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on("warning", onWarning);
  try {
    const shared = Array.from({ length: 24 }, (_, i) =>
      open({ redis: client, name: `shared-${i}`, safetyInterval: 60_000 }),
    );
    const takes = shared.map((q) => q.take());
    await sleep(300);
    const subscribers = (await fx.raw.client("LIST")).split("\n").filter((l) => / cmd=(p|s)?subscribe /.test(l)).length;
    await Promise.all(shared.map((q, i) => q.offer(`for ${i}`, 20)));
    const jobs = await Promise.all(takes);
    assert.deepEqual(
      jobs.map((j) => j.value),
      shared.map((_, i) => `for ${i}`),
    );
    for (const j of jobs) await j.ack();
    await Promise.all(shared.map((q) => q.close()));
    await sleep(50);
    assert.deepEqual(warnings.map(String), []);
    assert.equal(subscribers, 1, "one subscriber connection for the client's 24 queues");
    assert.equal(client.listenerCount("ready"), 0, "the queues left listeners on a client they do not own");
    assert.equal(client.status, "ready", "closing the queues closed a client they do not own");
  } finally {
    process.off("warning", onWarning);
    client.disconnect();
  }
});

/** The ACL rule docs/redis.md gives, for a user named `user`. */
function documentedRule() {
  const doc = readFileSync(new URL("../../docs/redis.md", import.meta.url), "utf8");
  const m = /^ACL SETUSER orders-app on >\S+ (.*)$/m.exec(doc);
  assert.ok(m, "docs/redis.md gives no ACL SETUSER line for orders-app");
  return m[1].split(" ");
}

test("ACL: the rules docs/redis.md gives are enough; without the channel or a command, calls fail at once naming the rule", async () => {
  const rules = documentedRule();
  await fx.raw.acl("SETUSER", "tarry-ok", "on", ">pw", ...rules);
  await fx.raw.acl("SETUSER", "tarry-nochan", "on", ">pw", ...rules.filter((r) => !r.startsWith("&")));
  await fx.raw.acl("SETUSER", "tarry-nozrank", "on", ">pw", ...rules.filter((r) => r !== "+zrank"));
  const url = (user) => fx.server.url.replace("redis://", `redis://${user}:pw@`);
  const warned = [];
  const warn = console.warn;
  console.warn = (...a) => warned.push(a.join(" "));
  try {
    const q = open({ redis: url("tarry-ok"), maxAttempts: 1 });
    await q.offer("a", 0, { id: "a" });
    await q.offerMany([{ value: "b", delayMs: 60_000, id: "b", ifExists: "extend" }]);
    assert.equal(await q.reschedule("b", 50_000), true);
    assert.ok((await q.delayOf("b")) > 0);
    const job = await q.take();
    assert.equal(await job.extend(1000), true);
    assert.equal(await job.nack({ reason: "to the dead letters" }), true);
    assert.equal((await q.deadLetters()).items.length, 1);
    assert.equal(await q.retryDead("a"), true);
    const again = await q.take();
    assert.equal(await again.ack(), true);
    assert.equal(await q.cancel("b"), true);
    await q.offer("c", 0, { id: "c" });
    await new Promise((resolve) => {
      const w = q.process(() => {
        throw new Error("dead");
      });
      const check = setInterval(async () => {
        if ((await q.stats()).dead === 1) {
          clearInterval(check);
          resolve(w.close());
        }
      }, 20);
    });
    assert.equal(await q.deleteDead("c"), true);
    assert.equal(await q.purgeDead(), 0);
    await q.clear();
    assert.deepEqual(q.errors.map(String), []);
    assert.deepEqual(warned, [], "ioredis warned (a command of its handshake refused?)");

    for (const [user, rule, what] of [
      ["tarry-nochan", "&tarry:\\*", "use the queue's pub/sub channel"],
      ["tarry-nozrank", "\\+zrank", "run ZRANK in the queue's scripts"],
    ]) {
      const denied = open({ redis: url(user) });
      const message = new RegExp(`^tarry-queue/redis: the Redis user may not ${what}.*: give the user ${rule} `);
      const offered = await timed(denied.offer(1, 0));
      assert.match(offered.error?.message ?? "resolved", message);
      assert.ok(offered.ms < 2000, `${user}: the offer failed after ${offered.ms} ms`);
      await assert.rejects(denied.take(), { message });
      assert.equal(await fx.raw.exists(denied.keys.items, denied.keys.pending), 0, `${user}: a refused offer wrote`);
    }
  } finally {
    console.warn = warn;
  }
});

test("a job's ack() after close() rejects with ClosedError", async () => {
  const q = open();
  await q.offer("x", 0);
  const job = await q.take();
  await q.close();
  await assert.rejects(job.ack(), { name: "ClosedError" });
  await assert.rejects(job.nack(), { name: "ClosedError" });
  await assert.rejects(job.extend(), { name: "ClosedError" });
});

/**
 * An ioredis client that acts as a Redis Cluster client would while the queue's slot migrates:
 * while `refusing`, every script is refused before it runs with `refusal` (as ioredis' Cluster
 * hands a TRYAGAIN back once its own retries are spent). `isCluster` as given.
 */
function migratingClient(isCluster) {
  const client = new Redis(fx.server.url, { enableAutoPipelining: true });
  const fake = { refusing: false, refused: 0, refusal: "TRYAGAIN Multiple keys request during rehashing of slot" };
  fake.client = new Proxy(client, {
    get(target, prop) {
      if (prop === "isCluster") return isCluster;
      const v = Reflect.get(target, prop, target);
      if ((prop === "evalsha" || prop === "eval") && typeof v === "function")
        return (...args) => {
          if (!fake.refusing) return v.apply(target, args);
          fake.refused++;
          return Promise.reject(new Error(fake.refusal));
        };
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return fake;
}

test("a cluster slot migration: refused calls go again in order, later calls wait behind them, the bound holds", async () => {
  const fake = migratingClient(true);
  const q = new RedisDelayQueue({ redis: fake.client, name: fx.name(), commandTimeout: 800, onerror: () => {} });
  try {
    assert.equal(await q.size(), 0); // probed and loaded
    for (const refusal of [
      "TRYAGAIN Multiple keys request during rehashing of slot",
      "Too many Cluster redirections. Last error: ReplyError: ASK 1234 127.0.0.1:7001",
      "MOVED 1234 127.0.0.1:7002",
    ]) {
      fake.refusal = refusal;
      fake.refusing = true;
      const first = q.offer({ v: 1 }, 60_000, { id: "x" });
      await sleep(60); // refused at least once; waiting to go again
      fake.refusing = false;
      const second = q.offer({ v: 2 }, 60_000, { id: "x" }); // made after the refusal: must not overtake it
      assert.deepEqual(await Promise.all([first, second]), ["x", "x"]);
      assert.equal(
        (await q.get("x")).value.v,
        2,
        `after ${refusal.split(" ")[0]}: the later offer overtook the refused one`,
      );
    }
    assert.ok(fake.refused >= 3);
    // A migration that outlasts commandTimeout: the call rejects within it, saying so.
    fake.refusing = true;
    fake.refusal = "TRYAGAIN Multiple keys request during rehashing of slot";
    const r = await timed(q.offer({ v: 3 }, 1000, { id: "y" }));
    fake.refusing = false;
    assert.ok(r.error, "an offer refused for all of commandTimeout resolved");
    assert.match(
      r.error.message,
      /slot of the queue's keys .* was migrating .* 800 ms \(options\.commandTimeout\), Redis answering TRYAGAIN; the call did not take effect/,
    );
    assert.ok(r.ms >= 790 && r.ms < 2000, `it rejected after ${r.ms} ms`);
    assert.equal(await q.get("y"), undefined);
    assert.equal(await q.size(), 1); // the line moves on
  } finally {
    await q.close();
    fake.client.disconnect();
  }
});

test("a MOVED through a client that is no Cluster rejects at once saying to pass a Cluster", async () => {
  const fake = migratingClient(false);
  const q = new RedisDelayQueue({ redis: fake.client, name: fx.name(), onerror: () => {} });
  try {
    await q.size();
    fake.refusing = true;
    fake.refusal = "MOVED 1234 127.0.0.1:7002";
    const r = await timed(q.offer({ v: 1 }, 1000));
    assert.match(String(r.error?.message), /node of a Redis Cluster .* pass an ioredis Cluster/);
    assert.ok(r.ms < 500, `it took ${r.ms} ms`);
  } finally {
    fake.refusing = false;
    await q.close();
    fake.client.disconnect();
  }
});
