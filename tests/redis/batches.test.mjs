// offerMany of many scripts' worth of items: the scripts go a few at a time, each with its own
// time limit from when it is sent, so that commandTimeout measures Redis not answering, not
// the package's own line of scripts; and a batch that fails part way says which items are
// stored for sure, and offering it again with its ids and ifExists: "keep" completes it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { privateRedis } from "./fixture.mjs";
import { OfferManyError } from "tarry-queue/redis";

const fx = privateRedis("b");

const many = (n) => Array.from({ length: n }, (_, i) => ({ value: { i }, delayMs: 600_000 + i }));

test("offerMany of 10^5 items (200 scripts) with commandTimeout 1500: every item stored, no 'no reply'", async () => {
  const q = fx.open({ commandTimeout: 1500 });
  await q.size();
  // Redis needs seconds for the whole batch; a limit counted from the call for every script
  // runs out for the last ones while Redis is still working on those before them.
  const ids = await q.offerMany(many(100_000));
  assert.equal(ids.length, 100_000);
  assert.equal(await q.size(), 100_000);
  assert.deepEqual(q.errors, []);
});

test("a batch that fails part way (Redis stopped): rejects within seconds naming the items stored; offered again with ids and ifExists: keep, it completes", async () => {
  const q = fx.open({ commandTimeout: 1000 });
  await q.size();
  const items = many(100_000);
  const started = performance.now();
  const offering = q.offerMany(items).then(
    () => null,
    (e) => e,
  );
  // Stop the server once some scripts have answered.
  while ((await fx.raw.hlen(q.keys.items)) < 5000) await sleep(1);
  await fx.server.kill("SIGSTOP");
  let error;
  try {
    error = await offering;
  } finally {
    await fx.server.kill("SIGCONT");
  }
  const ms = performance.now() - started;
  assert.ok(error instanceof OfferManyError, `the batch resolved although Redis stopped, or rejected with ${error}`);
  assert.match(error.message, /offerMany stored \d+ of 100000 items for sure/);
  assert.ok(ms < 15_000, `rejected after ${ms} ms`);
  assert.equal(error.ids.length, 100_000);
  assert.ok(error.stored.length > 0 && error.stored.length < 100_000, `stored ${error.stored.length}`);
  // What it says is stored is stored.
  const present = await fx.raw.hmget(q.keys.items, ...error.stored);
  assert.equal(present.filter((v) => v === null).length, 0, "an item said stored is not");
  // Offered again, by id, keeping what is there: every item once.
  const again = items.map((it, i) => ({ ...it, id: error.ids[i], ifExists: "keep" }));
  assert.deepEqual(await q.offerMany(again), error.ids);
  assert.equal(await q.size(), 100_000);
});
