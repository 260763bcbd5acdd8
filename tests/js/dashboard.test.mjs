// tarry-queue/dashboard's handler without a browser: routes, what each response carries, and
// the security rules (read-only without a token, changes only as same-origin JSON POSTs with
// the token, values hidden unless asked for, page sizes capped). Against DurableDelayQueue on
// the fake storage; tests/browser/dashboard.test.mjs drives the page in Chromium on Redis.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { dashboard, nodeListener } from "tarry-queue/dashboard";
import { DurableDelayQueue, FakeStorage } from "./durable-helpers.mjs";

const ORIGIN = "http://dash.test";
const TOKEN = "s3cret-token";

/** A queue with 3 pending items (one with a hostile id) and 2 dead letters. */
async function queue() {
  const q = await DurableDelayQueue.open(new FakeStorage(), { name: "orders", maxAttempts: 1 });
  await q.offer({ card: "4111" }, 3_600_000, { id: "<img src=x onerror=alert(1)>" });
  await q.offer({ card: "5500" }, 7_200_000, { id: "b" });
  await q.offer({ card: "6011" }, 10_800_000, { id: "c" });
  await q.offer("x", 0, { id: "dead-1" });
  await q.offer("y", 0, { id: "dead-2" });
  await q.deliver(() => {
    throw new Error("card declined");
  });
  return q;
}

const get = (handler, path, headers = {}) => handler(new Request(`${ORIGIN}${path}`, { headers }));
const post = (handler, path, body, headers = {}) =>
  handler(
    new Request(`${ORIGIN}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN, "x-tarry-token": TOKEN, ...headers },
      body: JSON.stringify(body),
    }),
  );

test("the page, its script and stylesheet, with a CSP that allows no inline script and no other origin", async () => {
  const handler = dashboard(await queue());
  const page = await get(handler, "/");
  assert.equal(page.status, 200);
  assert.match(page.headers.get("content-type"), /^text\/html/);
  const csp = page.headers.get("content-security-policy");
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.equal(page.headers.get("x-frame-options"), "DENY");
  const html = await page.text();
  assert.match(html, /<script type="module" src="app.js">/);
  assert.doesNotMatch(html, /<script>/, "no inline script");
  for (const [path, type] of [
    ["/app.js", /^text\/javascript/],
    ["/app.css", /^text\/css/],
  ]) {
    const r = await get(handler, path);
    assert.equal(r.status, 200, path);
    assert.match(r.headers.get("content-type"), type);
  }
  assert.equal((await get(handler, "/nothing")).status, 404);
});

test("the API: queues, stats with a history, pages in order, an item by id; values hidden by default", async () => {
  const q = await queue();
  const handler = dashboard(q);
  assert.deepEqual(await (await get(handler, "/api/queues")).json(), {
    queues: ["orders"],
    write: false,
    values: false,
  });
  const { stats, history, now } = await (await get(handler, "/api/queues/orders/stats")).json();
  assert.deepEqual([stats.pending, stats.inFlight, stats.dead], [3, 0, 2]);
  assert.equal(history.length, 1);
  assert.ok(Math.abs(now - Date.now()) < 5000);
  const pending = await (await get(handler, "/api/queues/orders/pending?limit=2")).json();
  assert.deepEqual(
    pending.items.map((i) => i.id),
    ["<img src=x onerror=alert(1)>", "b"],
  );
  for (const i of pending.items) assert.equal("value" in i, false, "no values unless asked for");
  const rest = await (
    await get(handler, `/api/queues/orders/pending?limit=2&after=${encodeURIComponent(pending.next)}`)
  ).json();
  assert.deepEqual(
    rest.items.map((i) => i.id),
    ["c"],
  );
  const dead = await (await get(handler, "/api/queues/orders/dead")).json();
  assert.deepEqual(
    dead.items.map((i) => [i.id, i.reason.split("\n")[0]]),
    [
      ["dead-1", "Error: card declined"],
      ["dead-2", "Error: card declined"],
    ],
  );
  const item = await (await get(handler, `/api/queues/orders/item?id=${encodeURIComponent("b")}`)).json();
  assert.deepEqual([item.item.id, item.item.state, "value" in item.item], ["b", "pending", false]);
  assert.deepEqual(await (await get(handler, "/api/queues/orders/item?id=nothing")).json(), { item: null });
  assert.equal((await get(handler, "/api/queues/nope/stats")).status, 404);
  assert.deepEqual(await (await get(handler, "/api/queues/orders/inflight")).json(), { items: [] });
  const shown = dashboard(q, { values: true });
  const withValues = await (await get(shown, "/api/queues/orders/pending?limit=1")).json();
  assert.equal(withValues.items[0].value, '{"card":"4111"}', "values: true shows each value's JSON");
});

test("page sizes are capped on the server; a bad limit or cursor is a 400", async () => {
  const q = await DurableDelayQueue.open(new FakeStorage());
  await q.offerMany(Array.from({ length: 250 }, (_, i) => ({ value: i, delayMs: 60_000 + i })));
  const handler = dashboard(q);
  const page = await (await get(handler, "/api/queues/durable/pending?limit=100000")).json();
  assert.equal(page.items.length, 200);
  assert.equal(typeof page.next, "string");
  assert.equal((await get(handler, "/api/queues/durable/pending?limit=0")).status, 400);
  assert.equal((await get(handler, "/api/queues/durable/pending?limit=abc")).status, 400);
  const bad = await get(handler, "/api/queues/durable/pending?after=nonsense");
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /options\.after/);
});

test("read-only without a token or auth hook: every change is refused", async () => {
  const q = await queue();
  const handler = dashboard(q);
  const r = await post(handler, "/api/queues/orders/retry", { id: "dead-1" });
  assert.equal(r.status, 403);
  assert.match((await r.json()).error, /read-only/);
  assert.equal((await q.stats()).dead, 2);
});

test("with a token: a change needs the token, a JSON body and this origin", async () => {
  const q = await queue();
  const handler = dashboard(q, { token: TOKEN });
  const refusals = [
    [{ "x-tarry-token": "" }, 401],
    [{ "x-tarry-token": "s3cret-tokem" }, 401],
    [{ origin: "http://evil.test" }, 403],
    [{ origin: "" }, 403],
    [{ "sec-fetch-site": "cross-site" }, 403],
    [{ "content-type": "application/x-www-form-urlencoded" }, 415],
    [{ "content-type": "text/plain" }, 415],
  ];
  for (const [headers, status] of refusals) {
    const h = { ...headers };
    if (h.origin === "") h.origin = undefined;
    const request = new Request(`${ORIGIN}/api/queues/orders/delete`, {
      method: "POST",
      headers: Object.fromEntries(
        Object.entries({ "content-type": "application/json", origin: ORIGIN, "x-tarry-token": TOKEN, ...h }).filter(
          ([, v]) => v !== undefined,
        ),
      ),
      body: JSON.stringify({ id: "dead-1" }),
    });
    assert.equal((await handler(request)).status, status, JSON.stringify(headers));
  }
  assert.equal((await q.stats()).dead, 2, "nothing changed");
  assert.equal((await get(handler, "/api/queues/orders/retry")).status, 404, "a GET changes nothing");
  assert.deepEqual(await (await post(handler, "/api/queues/orders/retry", { id: "dead-1" })).json(), { done: true });
  assert.deepEqual(await (await post(handler, "/api/queues/orders/delete", { id: "dead-2" })).json(), { done: true });
  assert.deepEqual(await (await post(handler, "/api/queues/orders/delete", { id: "dead-2" })).json(), { done: false });
  assert.deepEqual(await (await post(handler, "/api/queues/orders/pause", {})).json(), { done: true });
  assert.equal((await q.stats()).paused, true);
  assert.deepEqual(await (await post(handler, "/api/queues/orders/resume", {})).json(), { done: true });
  const s = await q.stats();
  assert.deepEqual([s.pending, s.dead, s.paused], [4, 0, false]);
  assert.equal((await post(handler, "/api/queues/orders/retry", { id: 5 })).status, 400);
  assert.equal((await post(handler, "/api/queues/orders/purge", { olderThan: -1 })).status, 400);
  const session = async (token) =>
    (await (await get(handler, "/api/session", { "x-tarry-token": token })).json()).write;
  assert.deepEqual([await session(TOKEN), await session("wrong")], [true, false]);
});

test("an auth hook decides reads and writes; origins lets a proxy's origin in", async () => {
  const q = await queue();
  const seen = [];
  const handler = dashboard(q, {
    auth: (request, { write }) => {
      seen.push(write);
      return request.headers.get("cookie") === "session=admin";
    },
    origins: ["https://ops.example"],
  });
  assert.equal((await get(handler, "/api/queues/orders/stats")).status, 401);
  assert.equal((await get(handler, "/api/queues/orders/stats", { cookie: "session=admin" })).status, 200);
  const ok = await post(
    handler,
    "/api/queues/orders/purge",
    {},
    { cookie: "session=admin", origin: "https://ops.example", "x-tarry-token": "" },
  );
  assert.deepEqual(await ok.json(), { removed: 2 });
  assert.ok(seen.includes(true) && seen.includes(false));
});

test("basePath: mounted under a path, it redirects the bare path and serves nothing outside it", async () => {
  const handler = dashboard(await queue(), { basePath: "/ops/tarry" });
  const bare = await get(handler, "/ops/tarry");
  assert.equal(bare.status, 308);
  assert.equal(bare.headers.get("location"), "/ops/tarry/");
  assert.equal((await get(handler, "/ops/tarry/")).status, 200);
  assert.equal((await get(handler, "/ops/tarry/api/queues")).status, 200);
  assert.equal((await get(handler, "/api/queues")).status, 404);
});

test("bad queues and options are refused at once, naming what is wrong", async () => {
  const q = await queue();
  assert.throws(() => dashboard(null), /queues must be/);
  assert.throws(() => dashboard({ a: {} }), /"a" is not a queue/);
  assert.throws(() => dashboard({ a: { stats() {} } }), /"a" lacks get, pending, inFlight, deadLetters/);
  assert.throws(() => dashboard(q, { token: "short" }), /options\.token/);
  assert.throws(() => dashboard(q, { tokn: TOKEN }), /options\.tokn is not an option/);
  assert.throws(() => dashboard(q, { basePath: "/x/" }), /options\.basePath/);
  assert.throws(() => dashboard([q, q]), /two queues are named "orders"/);
});

test("nodeListener serves the handler from Node's http, bodies and HEAD included", async (t) => {
  const q = await queue();
  const server = http.createServer(nodeListener(dashboard(q, { token: TOKEN })));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const base = `http://127.0.0.1:${server.address().port}`;
  const stats = await (await fetch(`${base}/api/queues/orders/stats`)).json();
  assert.equal(stats.stats.dead, 2);
  const retried = await fetch(`${base}/api/queues/orders/retry`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: base, "x-tarry-token": TOKEN },
    body: JSON.stringify({ id: "dead-1" }),
  });
  assert.deepEqual(await retried.json(), { done: true });
  const head = await fetch(`${base}/`, { method: "HEAD" });
  assert.equal(head.status, 200);
  const big = await fetch(`${base}/api/queues/orders/retry`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: base, "x-tarry-token": TOKEN },
    body: JSON.stringify({ id: "x".repeat(20_000) }),
  });
  assert.equal(big.status, 413);
});

test("the page's size, as docs/dashboard.md states it", async () => {
  const { gzipSync } = await import("node:zlib");
  const { readFileSync } = await import("node:fs");
  const handler = dashboard(await queue());
  const sizes = {};
  for (const [name, path] of [
    ["HTML", "/"],
    ["script", "/app.js"],
    ["stylesheet", "/app.css"],
  ]) {
    const bytes = new Uint8Array(await (await get(handler, path)).arrayBuffer());
    sizes[name] = { raw: bytes.length, gz: gzipSync(bytes, { level: 9 }).length };
  }
  const kB = (n) => `${(n / 1000).toFixed(1)} kB`;
  const total = (k) => Object.values(sizes).reduce((n, s) => n + s[k], 0);
  const sentence =
    `The page is ${kB(total("raw"))} in three responses (HTML ${kB(sizes.HTML.raw)}, script ` +
    `${kB(sizes.script.raw)}, stylesheet ${kB(sizes.stylesheet.raw)}),\n${kB(total("gz"))} gzipped`;
  const doc = readFileSync(new URL("../../docs/dashboard.md", import.meta.url), "utf8");
  assert.ok(doc.includes(sentence), `docs/dashboard.md should say:\n${sentence}`);
  assert.ok(total("gz") < 12_000, "the page stays light");
});
