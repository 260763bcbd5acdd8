// No password of a Redis URL in anything tarry-queue/redis says: a call's rejection (its
// message, stack and causes) and what onerror hears, whether the server cannot be reached or
// refuses what the URL asks for. The password here is one the test would spot anywhere in
// util.inspect's rendering of an error, which includes its stack and its causes.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { inspect } from "node:util";
import { Redis } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "../../tools/redis-server.mjs";
import { deadPort } from "../engines/dead-port.mjs";

const SECRET = "S3cretPassw0rd";

/** Fails when the password shows anywhere in `e`: its message, its stack, its causes. */
function assertRedacted(e, what) {
  assert.ok(e instanceof Error, `${what}: not an error: ${inspect(e)}`);
  const text = `${inspect(e, { depth: 10 })}\n${e.stack}\n${String(e.cause?.stack ?? "")}`;
  assert.ok(!text.includes(SECRET), `${what} shows the password:\n${text}`);
}

let server;
before(async () => {
  server = await startRedis();
  const raw = new Redis(server.url);
  await raw.config("SET", "requirepass", SECRET);
  raw.disconnect();
});
after(async () => {
  await server?.stop();
});

test("a password URL that cannot connect: the rejection and onerror say where, with the password masked", async () => {
  const url = `redis://:${SECRET}@127.0.0.1:${await deadPort()}`;
  const errors = [];
  const q = new RedisDelayQueue({ redis: url, name: "r1", commandTimeout: 1000, onerror: (e) => errors.push(e) });
  try {
    const error = await q.offer(1, 10).then(
      () => assert.fail("the offer resolved without a server"),
      (e) => e,
    );
    assert.match(error.message, /no connection to Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ within 1000 ms/);
    assertRedacted(error, "the rejection");
    await assert.rejects(q.size(), (e) => (assertRedacted(e, "a later rejection"), true));
    assert.ok(errors.length > 0, "onerror heard nothing");
    for (const e of errors) assertRedacted(e, "an onerror report");
  } finally {
    await q.close();
  }
});

test("a password URL whose database Redis refuses: the rejection and onerror name the URL with the password masked", async () => {
  const url = `redis://:${SECRET}@127.0.0.1:${server.port}/99`;
  const errors = [];
  const q = new RedisDelayQueue({ redis: url, name: "r2", commandTimeout: 2000, onerror: (e) => errors.push(e) });
  try {
    const error = await q.offer(1, 10).then(
      () => assert.fail("the offer resolved on a database Redis refuses"),
      (e) => e,
    );
    assert.match(error.message, /database of redis:\/\/:\*\*\*@127\.0\.0\.1:\d+\/99/);
    assertRedacted(error, "the rejection");
    assert.ok(errors.length > 0, "onerror heard nothing");
    for (const e of errors) assertRedacted(e, "an onerror report");
  } finally {
    await q.close();
  }
});

test("the same URL on a database Redis has: the queue works", async () => {
  const q = new RedisDelayQueue({ redis: `redis://:${SECRET}@127.0.0.1:${server.port}/0`, name: "r3" });
  try {
    const id = await q.offer(1, 60_000);
    assert.equal((await q.get(id))?.state, "pending");
  } finally {
    await q.close();
  }
});
