// tarry in the real workerd runtime, through miniflare (which ships the workerd binary).
// Run with a Node miniflare supports (>= 22; scripts/test.sh uses the node24 devDependency):
//
//   node_modules/node24/bin/node --test tests/workerd/
//
// The worker is docs/workers.md's reminders example (```js worker name=reminders), with
// `tarry-queue` resolved the way a bundler resolves it (package.json `exports`, condition
// "workerd") and the package's files as modules (the wasm as a compiled WebAssembly module,
// as Workers require).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { blocksFor } from "../../scripts/docs/blocks.mjs";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { packageModules, root } from "./modules.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Wide: alarms in local workerd, on a busy 2-core machine. */
const LATE_MS = 3000;

function modules() {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const entry = pkg.exports["."].workerd; // what wrangler's bundler picks for "tarry-queue"
  assert.equal(entry, "./js/workerd.js");
  const block = blocksFor("worker").find((b) => b.name === "reminders");
  assert.ok(block, "the docs have a ```js worker name=reminders block");
  const example = block.code.replaceAll('from "tarry-queue"', `from ${JSON.stringify(entry)}`);
  const mods = [
    {
      type: "ESModule",
      path: join(root, "test-worker.js"),
      contents: readFileSync(join(root, "tests/workerd/test-worker.js"), "utf8"),
    },
    { type: "ESModule", path: join(root, "example.js"), contents: example },
  ];
  return [...mods, ...packageModules()];
}

let persist;
function start() {
  return new Miniflare({
    modulesRoot: root,
    modules: modules(),
    compatibilityDate: "2025-09-01",
    durableObjects: { REMINDERS: { className: "TestReminders", useSQLite: true } },
    durableObjectsPersist: persist,
  });
}

async function call(mf, path, body) {
  const res = await mf.dispatchFetch(
    `http://tarry.test${path}`,
    body === undefined ? {} : { method: "POST", body: JSON.stringify(body) },
  );
  const text = await res.text();
  assert.equal(res.status, 200, `${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** Polls the object until `n` reminders were sent (or `limit` ms pass). */
async function waitSent(mf, n, limit = 10_000) {
  const t0 = Date.now();
  for (;;) {
    const state = await call(mf, "/state");
    if (state.sent.length >= n) return state;
    if (Date.now() - t0 > limit)
      assert.fail(`only ${state.sent.length} of ${n} sent after ${limit} ms: ${JSON.stringify(state)}`);
    await sleep(50);
  }
}

/** Order by deadline, FIFO among ties, never early (Date.now() in workerd), not too late. */
function assertDelivered(sent, expectedTexts) {
  assert.deepEqual(
    sent.map((s) => s.text),
    expectedTexts,
  );
  for (const s of sent) {
    assert.ok(s.sentAt >= s.due, `${s.text} sent ${s.due - s.sentAt} ms before it was due`);
  }
  for (let i = 1; i < sent.length; i++) assert.ok(sent[i - 1].due <= sent[i].due);
}

before(() => {
  persist = mkdtempSync(join(tmpdir(), "tarry-workerd-"));
});
after(() => rmSync(persist, { recursive: true, force: true }));

test("a DelayQueue inside one request (the README's /now route)", async () => {
  const mf = start();
  try {
    assert.deepEqual(await call(mf, "/now"), ["first", "second"]);
  } finally {
    await mf.dispose();
  }
});

test("offered in one request, delivered by the alarm in deadline order, FIFO ties, never early", async () => {
  const mf = start();
  try {
    const offered = await call(mf, "/", [
      { text: "c", delayMs: 900 },
      { text: "a", delayMs: 300 },
      { text: "b1", delayMs: 600 },
      { text: "b2", delayMs: 600 },
      { text: "overdue", delayMs: -50 },
    ]);
    assert.equal(offered.pending, 5);
    const state = await waitSent(mf, 5);
    assertDelivered(state.sent, ["overdue", "a", "b1", "b2", "c"]);
    for (const s of state.sent)
      assert.ok(s.sentAt - Math.max(s.due, 0) < LATE_MS, `${s.text} ${s.sentAt - s.due} ms late`);
    assert.deepEqual(state.pending, []);
    assert.equal(state.alarm, null, "no alarm once the queue is empty");
  } finally {
    await mf.dispose();
  }
});

test("an eviction in between loses nothing: a fresh instance reads the items back, the alarm delivers them", async () => {
  const mf = start();
  try {
    const before = await call(mf, "/state");
    await call(mf, "/", [
      { text: "e2", delayMs: 500 },
      { text: "e1", delayMs: 250 },
    ]);
    const res = await mf.dispatchFetch("http://tarry.test/evict");
    await res.text();
    assert.notEqual(res.status, 200, "the evicting request fails, as the object was reset under it");
    // Nothing asks for the object now: only its alarm can wake it, as a new instance.
    await sleep(1500);
    const firstRequest = Date.now();
    const state = await waitSent(mf, before.sent.length + 2);
    assert.ok(state.boots > before.boots, `constructed ${state.boots} times, was ${before.boots}`);
    const sent = state.sent.slice(before.sent.length);
    assertDelivered(sent, ["e1", "e2"]);
    for (const s of sent) assert.ok(s.sentAt < firstRequest, `${s.text} was sent only after a request woke the object`);
  } finally {
    await mf.dispose();
  }
});

test("a restart of workerd in between loses nothing; overdue items come out in order", async () => {
  let mf = start();
  let sentBefore;
  try {
    sentBefore = (await call(mf, "/state")).sent.length;
    await call(mf, "/", [
      { text: "r3", delayMs: 400 },
      { text: "r1", delayMs: 200 },
      { text: "r2a", delayMs: 300 },
      { text: "r2b", delayMs: 300 },
    ]);
  } finally {
    await mf.dispose(); // before any is due
  }
  await sleep(700); // all overdue while nothing runs
  mf = start();
  try {
    // No request wakes the object: the alarm, kept in workerd's storage, does.
    await mf.ready;
    await sleep(2000);
    const firstRequest = Date.now();
    const state = await waitSent(mf, sentBefore + 4);
    const sent = state.sent.slice(sentBefore);
    assertDelivered(sent, ["r1", "r2a", "r2b", "r3"]);
    for (const s of sent) assert.ok(s.sentAt < firstRequest, `${s.text} was sent only after a request woke the object`);
  } finally {
    await mf.dispose();
  }
});

/** The sent reminders since `before` (a /state), and the texts of the delivery attempts whose text starts with `tag`. */
function since(before, state, tag) {
  return {
    sent: state.sent.slice(before.sent.length),
    attempts: state.attempts.filter((a) => a.text.startsWith(tag)).map((a) => a.text),
  };
}

test("offerAt: due before 1970 (workerd refuses alarms <= 0) is overdue and delivered at once; after 2189 is refused", async () => {
  const mf = start();
  try {
    const before = await call(mf, "/state");
    const now = Date.now();
    const offered = await call(mf, "/offer-at", [
      { text: "epoch", at: 0 },
      { text: "too late", at: Date.UTC(2300, 0, 1) },
      { text: "soon", at: now + 200 },
    ]);
    assert.equal(typeof offered.results[0].id, "string", JSON.stringify(offered.results[0]));
    assert.match(offered.results[1].error, /^RangeError: deadline/);
    assert.equal(typeof offered.results[2].id, "string", JSON.stringify(offered.results[2]));
    assert.equal(offered.pending, 2);
    const state = await waitSent(mf, before.sent.length + 2);
    assertDelivered(since(before, state, "").sent, ["epoch", "soon"]);
    assert.deepEqual(state.pending, []);
    assert.deepEqual(state.stored, [], "nothing left in storage");
    assert.equal(state.alarm, null);
  } finally {
    await mf.dispose();
  }
});

test("a value workerd's storage refuses (too big) is refused by offer, and nothing changes", async () => {
  const mf = start();
  try {
    const before = await call(mf, "/state");
    const now = Date.now();
    const offered = await call(mf, "/offer-at", [
      { text: "huge", at: now + 100, pad: 3 * 1024 * 1024 },
      { text: "small", at: now + 150 },
    ]);
    assert.ok(offered.results[0].error, `the huge value was stored: ${JSON.stringify(offered.results[0])}`);
    assert.equal(typeof offered.results[1].id, "string");
    assert.equal(offered.pending, 1);
    const state = await waitSent(mf, before.sent.length + 1);
    assertDelivered(since(before, state, "").sent, ["small"]);
    assert.deepEqual(state.stored, []);
  } finally {
    await mf.dispose();
  }
});

test("a delivery that fails comes back a second later (attempt 2), without holding back the ones behind it", async () => {
  const mf = start();
  try {
    const before = await call(mf, "/state");
    await call(mf, "/fail-once", ["f2"]);
    await call(mf, "/", [
      { text: "f1", delayMs: 100 },
      { text: "f2", delayMs: 200 },
      { text: "f3", delayMs: 300 },
    ]);
    const state = await waitSent(mf, before.sent.length + 3, 20_000);
    const { sent, attempts } = since(before, state, "f");
    assert.deepEqual(attempts, ["f1", "f2", "f3", "f2"]);
    assert.deepEqual(
      sent.map((s) => [s.text, s.attempt]),
      [
        ["f1", 1],
        ["f3", 1],
        ["f2", 2],
      ],
    );
    for (const s of sent) assert.ok(s.sentAt >= s.due, `${s.text} sent ${s.due - s.sentAt} ms before it was due`);
    const failed = state.attempts.find((a) => a.text === "f2");
    assert.ok(sent[2].sentAt - failed.at >= 1000, `retried ${sent[2].sentAt - failed.at} ms after the failure`);
    assert.equal(state.alarm, null);
  } finally {
    await mf.dispose();
  }
});

test("a failed delivery's retry is in storage: after an eviction, the new instance delivers it, attempt 2", async () => {
  const mf = start();
  try {
    const before = await call(mf, "/state");
    await call(mf, "/fail-once", ["v1"]);
    await call(mf, "/", [{ text: "v1", delayMs: 100 }]);
    // Until the failure is stored: pending again, one attempt made.
    const t0 = Date.now();
    let state = await call(mf, "/state");
    while (!state.pending.some((p) => p.value.text === "v1" && p.attempt === 1)) {
      assert.ok(Date.now() - t0 < 10_000, `the failure was not stored: ${JSON.stringify(state)}`);
      await sleep(20);
      state = await call(mf, "/state");
    }
    const failedAt = state.attempts.find((a) => a.text === "v1").at;
    await (await mf.dispatchFetch("http://tarry.test/evict")).text();
    state = await waitSent(mf, before.sent.length + 1);
    assert.ok(state.boots > before.boots, "a new instance");
    const [sent] = state.sent.slice(before.sent.length);
    assert.deepEqual([sent.text, sent.attempt], ["v1", 2]);
    assert.ok(sent.sentAt - failedAt >= 1000, `retried ${sent.sentAt - failedAt} ms after the failure`);
    assert.deepEqual(state.stored, []);
  } finally {
    await mf.dispose();
  }
});

test("deliveries side by side (two in one request, and the alarm's) hand each reminder out once", async () => {
  const mf = start();
  try {
    const before = await call(mf, "/state");
    await call(mf, "/deliver-twice", [
      { text: "o1", delayMs: -30 },
      { text: "o2", delayMs: -20 },
      { text: "o3", delayMs: -10 },
    ]);
    const state = await waitSent(mf, before.sent.length + 3);
    await sleep(300); // time for a duplicate to show
    const after = await call(mf, "/state");
    const { sent, attempts } = since(before, after, "o");
    assertDelivered(sent, ["o1", "o2", "o3"]);
    assert.deepEqual(attempts, ["o1", "o2", "o3"]);
    assert.deepEqual(state.pending, []);
  } finally {
    await mf.dispose();
  }
});

test("a DelayQueue snapshot survives in Durable Object storage across an eviction", async () => {
  const mf = start();
  try {
    const saved = await call(mf, "/snapshot/save", [
      ["late", 300],
      ["tie-1", 150],
      ["overdue", -20],
      ["tie-2", 150],
      ["soon", 50],
    ]);
    assert.deepEqual(saved.expected, ["overdue", "soon", "tie-1", "tie-2", "late"]);
    await (await mf.dispatchFetch("http://tarry.test/evict")).text();
    const { got, deadlines } = await call(mf, "/snapshot/restore");
    assert.deepEqual(
      got.map((g) => g.value),
      saved.expected,
    );
    for (const [i, g] of got.entries())
      assert.ok(g.at >= deadlines[i], `${g.value} taken ${deadlines[i] - g.at} ms early`);
  } finally {
    await mf.dispose();
  }
});

test("a schedule keeps firing across an eviction and a workerd restart: each occurrence once, in order, never early", async () => {
  const P = 300;
  let mf = start();
  let before;
  let info;
  const beats = (state) => state.sent.slice(before.sent.length).filter((s) => s.schedule === "beat");
  try {
    before = await call(mf, "/state");
    // catchUp "all": the occurrences that come due while workerd is down run too.
    info = await call(mf, "/schedule", {
      id: "beat",
      rule: { every: P },
      value: { text: "beat" },
      options: { catchUp: "all" },
    });
    assert.equal(info.nextRun, info.start);
    await waitSent(mf, before.sent.length + 3);
    const res = await mf.dispatchFetch("http://tarry.test/evict");
    await res.text();
    // Nothing asks for the object: only its alarm wakes a new instance, for the next ones.
    await sleep(3 * P);
    const state = await waitSent(mf, before.sent.length + 6);
    assert.ok(state.boots > before.boots, "evicted and constructed again");
  } finally {
    await mf.dispose(); // workerd stops
  }
  await sleep(3 * P); // occurrences come due while nothing runs
  mf = start();
  try {
    await mf.ready;
    const resumed = Date.now();
    let state;
    for (;;) {
      state = await call(mf, "/state");
      if (beats(state).some((b) => b.sentAt >= resumed + 2 * P)) break;
      assert.ok(Date.now() - resumed < 10_000, `no occurrence after the restart: ${JSON.stringify(beats(state))}`);
      await sleep(50);
    }
    assert.equal((await call(mf, "/schedule", { id: "beat", remove: true })).removed, true);
    const got = beats(state);
    const ks = got.map((b) => (b.due - info.start) / P);
    assert.deepEqual(
      ks,
      ks.map((_k, i) => i),
      "each occurrence once, in order, none missing",
    );
    assert.ok(ks.length >= 9, `${ks.length} occurrences`);
    for (const b of got) assert.ok(b.sentAt >= b.due, `occurrence ${b.due} sent ${b.due - b.sentAt} ms early`);
  } finally {
    await mf.dispose();
  }
});
