// tarry-queue/dashboard's handler without a browser: routes, what each response carries, and
// the security rules (read-only without a token, changes only as same-origin JSON POSTs with
// the token, values hidden unless asked for, page sizes capped). Against DurableDelayQueue on
// the fake storage; tests/browser/dashboard.test.mjs drives the page in Chromium on Redis.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { dashboard, nodeListener } from "tarry-queue/dashboard";
import { DurableDelayQueue, FakeStorage, manualClock, T0 } from "./durable-helpers.mjs";

const ORIGIN = "http://localhost:8080";
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
    [{ origin: "", "x-tarry-token": "" }, 403],
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
  const refused = await get(handler, "/api/queues/orders/stats");
  assert.equal(refused.status, 403);
  assert.match((await refused.json()).error, /the auth hook refused/);
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

/** A raw HTTP request with any Host header (fetch does not let a test forge one). */
function rawRequest(port, path, headers, { method = "GET", body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method, headers }, (res) => {
      let text = "";
      res.on("data", (d) => {
        text += d;
      });
      res.on("end", () => resolve({ status: res.statusCode, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

test("a Host the dashboard is not reached by is refused (403) before anything else: DNS rebinding", async (t) => {
  const q = await queue();
  const server = http.createServer(nodeListener(dashboard(q, { values: true })));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const port = server.address().port;
  for (const host of [
    `evil.example:${port}`,
    "evil.example",
    `127.0.0.1.evil.example:${port}`,
    `localhost.evil.example:${port}`,
  ]) {
    for (const path of ["/", "/api/queues", "/api/queues/orders/pending", "/nothing", "/app.js"]) {
      const r = await rawRequest(port, path, { host });
      assert.equal(r.status, 403, `${host} ${path}`);
      assert.match(r.text, /does not answer the host/);
      assert.ok(!r.text.includes("4111"), "no value");
    }
  }
  const post = await rawRequest(
    port,
    "/api/queues/orders/purge",
    { host: `evil.example:${port}`, "content-type": "application/json" },
    { method: "POST", body: "{}" },
  );
  assert.equal(post.status, 403);
  for (const host of [
    `localhost:${port}`,
    `127.0.0.1:${port}`,
    `[::1]:${port}`,
    `127.0.0.2:${port}`,
    `app.localhost:${port}`,
    "LOCALHOST",
  ]) {
    const r = await rawRequest(port, "/api/queues/orders/pending", { host });
    assert.equal(r.status, 200, host);
    assert.ok(r.text.includes("4111"), host);
  }
  assert.equal((await rawRequest(port, "/", { host: "a b" })).status, 400, "a Host that makes no URL");
});

test("allowedHosts: names (any port or one port), a domain and its subdomains, or true; bad entries refused", async () => {
  const q = await queue();
  const status = async (handler, url) => (await handler(new Request(url))).status;
  const h = dashboard(q, { allowedHosts: ["ops.example.com", "pinned.example.com:8443", ".corp.example"] });
  assert.equal(await status(h, "https://ops.example.com/api/queues"), 200);
  assert.equal(await status(h, "http://ops.example.com:9000/api/queues"), 200);
  assert.equal(await status(h, "https://pinned.example.com:8443/api/queues"), 200);
  assert.equal(await status(h, "https://pinned.example.com:8444/api/queues"), 403);
  assert.equal(await status(h, "https://corp.example/api/queues"), 200);
  assert.equal(await status(h, "https://a.b.corp.example/api/queues"), 200);
  assert.equal(await status(h, "https://evilcorp.example/api/queues"), 403);
  assert.equal(await status(h, "https://ops.example.com.evil.example/api/queues"), 403);
  assert.equal(await status(h, "http://localhost:1234/api/queues"), 200, "loopback names stay allowed");
  assert.equal(await status(dashboard(q), "https://ops.example.com/"), 403, "by default only loopback");
  assert.equal(await status(dashboard(q, { allowedHosts: true }), "https://anything.example/"), 200);
  assert.throws(
    () => dashboard(q, { allowedHosts: "ops.example.com" }),
    /options\.allowedHosts must be true or an array/,
  );
  assert.throws(
    () => dashboard(q, { allowedHosts: ["ops.example.com/path"] }),
    /options\.allowedHosts: "ops\.example\.com\/path" is not a host name/,
  );
  assert.throws(() => dashboard(q, { allowedHosts: [""] }), /options\.allowedHosts/);
});

test("an internal error's text never reaches the viewer: a 500 says internal error and an id; onerror gets it, redacted", async () => {
  const q = await queue();
  const failing = {
    name: "orders",
    stats: () => Promise.reject(new Error("no connection to redis://:S3cret@127.0.0.1:1 within 5000 ms")),
    get: () => Promise.reject("redis://user:S3cret@10.0.0.1 said no"),
    pending: q.pending.bind(q),
    inFlight: q.inFlight.bind(q),
    deadLetters: q.deadLetters.bind(q),
  };
  const logged = [];
  const handler = dashboard(failing, { onerror: (error, id) => logged.push({ error, id }) });
  for (const path of ["/api/queues/orders/stats", "/api/queues/orders/item?id=x"]) {
    const r = await get(handler, path);
    assert.equal(r.status, 500);
    const body = await r.text();
    assert.ok(!body.includes("S3cret") && !body.includes("redis://") && !body.includes("connection"), body);
    const { error, id } = JSON.parse(body);
    assert.match(error, /^internal error \(id [0-9a-f]{8}/);
    assert.equal(logged.at(-1).id, id);
  }
  assert.match(logged[0].error.message, /no connection to redis:\/\/:\*\*\*@127\.0\.0\.1:1/);
  assert.ok(!String(logged[0].error.stack).includes("S3cret"));
  assert.equal(logged[1].error, "redis://user:***@10.0.0.1 said no");
  assert.throws(() => dashboard(q, { onerror: "log" }), /options\.onerror must be a function/);
});

test("values hidden: nothing of a value is served, `raw` (a record that does not read as JSON) included", async () => {
  const unreadable = {
    id: "weird",
    state: "dead",
    value: undefined,
    raw: "{card: 4111-secret",
    deadline: 1,
    attempt: 1,
    reason: "malformed record",
    diedAt: 2,
  };
  const stub = {
    name: "orders",
    stats: async () => ({ pending: 0, inFlight: 0, dead: 1 }),
    get: async () => unreadable,
    pending: async () => ({ items: [{ ...unreadable, state: "pending" }], next: undefined }),
    inFlight: async () => ({ items: [{ ...unreadable, state: "inFlight" }], next: undefined }),
    deadLetters: async () => ({ items: [unreadable], next: undefined }),
  };
  const hidden = dashboard(stub);
  for (const path of ["pending", "inflight", "dead", "dead?order=newest", "item?id=weird"]) {
    const body = await (await get(hidden, `/api/queues/orders/${path}`)).text();
    assert.ok(!body.includes("4111") && !body.includes('"raw"'), `${path}: ${body}`);
  }
  const shown = await (await get(dashboard(stub, { values: true }), "/api/queues/orders/dead")).json();
  assert.equal(shown.items[0].raw, "{card: 4111-secret", "with values: true, raw is shown");
});

test("an auth hook: what it decided is the answer (403 saying so), and /api/queues tells each viewer whether it may change", async () => {
  const q = await queue();
  const handler = dashboard(q, {
    auth: (request, { write }) => {
      const who = request.headers.get("cookie");
      return who === "session=admin" || (who === "session=viewer" && !write);
    },
  });
  const viewer = { cookie: "session=viewer" };
  const admin = { cookie: "session=admin" };
  assert.equal((await (await get(handler, "/api/queues", viewer)).json()).write, false);
  assert.equal((await (await get(handler, "/api/queues", admin)).json()).write, true);
  assert.equal((await (await get(handler, "/api/session", viewer)).json()).write, false);
  const refused = await post(handler, "/api/queues/orders/purge", {}, { ...viewer, "x-tarry-token": "" });
  assert.equal(refused.status, 403);
  assert.deepEqual(await refused.json(), { error: "the auth hook refused this change" });
  assert.equal((await q.stats()).dead, 2);
  const done = await post(handler, "/api/queues/orders/purge", {}, { ...admin, "x-tarry-token": "" });
  assert.deepEqual(await done.json(), { removed: 2 });
  // With a token too: a change needs both; the token's refusal is the token's message.
  const both = dashboard(q, { token: TOKEN, auth: (request) => request.headers.get("cookie") === "session=admin" });
  const noToken = await post(both, "/api/queues/orders/pause", {}, { ...admin, "x-tarry-token": "wrong-token" });
  assert.deepEqual([noToken.status, (await noToken.json()).error], [401, "the token is missing or wrong"]);
  const hookSaysNo = await post(both, "/api/queues/orders/pause", {}, { cookie: "session=viewer" });
  assert.equal(hookSaysNo.status, 403);
  assert.equal((await q.stats()).paused, false);
});

test("a script's change: the token as a bearer header, no Origin; still refused from another origin or on a cookie alone", async () => {
  const q = await queue();
  const handler = dashboard(q, { token: TOKEN });
  const script = (headers) =>
    handler(
      new Request(`${ORIGIN}/api/queues/orders/retry`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ id: "dead-1" }),
      }),
    );
  assert.equal((await script({ authorization: "Bearer wrong-token" })).status, 401);
  assert.equal((await script({})).status, 403, "no token, no Origin");
  assert.match((await (await script({})).json()).error, /Authorization: Bearer/);
  assert.equal((await script({ authorization: `Bearer ${TOKEN}`, origin: "http://evil.test" })).status, 403);
  assert.equal(
    (await script({ authorization: `Bearer ${TOKEN}`, "sec-fetch-site": "cross-site", origin: ORIGIN })).status,
    403,
  );
  assert.equal((await q.stats()).dead, 2, "nothing changed");
  const ok = await script({ authorization: `Bearer ${TOKEN}` });
  assert.deepEqual(await ok.json(), { done: true });
  assert.deepEqual(await (await script({ "x-tarry-token": TOKEN })).json(), { done: false }, "the token header too");
  // An auth hook alone (a cookie, which a browser sends by itself): no change without Origin.
  const cookie = dashboard(q, { auth: () => true });
  const r = await cookie(
    new Request(`${ORIGIN}/api/queues/orders/pause`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    }),
  );
  assert.equal(r.status, 403);
  assert.equal((await q.stats()).paused, false);
});

test("dead letters newest first (order=newest), paged; in order of death by default", async () => {
  const q = await DurableDelayQueue.open(new FakeStorage(), { name: "orders", maxAttempts: 1 });
  for (let i = 0; i < 5; i++) {
    await q.offer(i, 0, { id: `d${i}` });
    await q.deliver(() => {
      throw new Error(`failure ${i}`);
    });
  }
  const handler = dashboard(q);
  const ids = async (path) => await (await get(handler, path)).json();
  assert.deepEqual(
    (await ids("/api/queues/orders/dead")).items.map((i) => i.id),
    ["d0", "d1", "d2", "d3", "d4"],
  );
  const first = await ids("/api/queues/orders/dead?order=newest&limit=3");
  assert.deepEqual(
    first.items.map((i) => i.id),
    ["d4", "d3", "d2"],
  );
  const rest = await ids(`/api/queues/orders/dead?order=newest&limit=3&after=${first.next}`);
  assert.deepEqual([rest.items.map((i) => i.id), rest.next], [["d1", "d0"], undefined]);
  assert.equal((await get(handler, "/api/queues/orders/dead?order=sideways")).status, 400);
  assert.equal((await get(handler, "/api/queues/orders/dead?order=newest&after=p1")).status, 400);
});

test("schedules: each one's rule, next and last run with its outcome, runs, skipped, catchUp, overlap; removed with the token", async (t) => {
  const clock = manualClock(t);
  const q = await DurableDelayQueue.open(new FakeStorage(), { name: "orders", maxAttempts: 1 });
  await q.schedule("nightly", { cron: "0 2 * * *", timezone: "Europe/Berlin" }, { kind: "report", secret: "4111" });
  await q.schedule("beat", { every: 60_000 }, { kind: "beat" }, { catchUp: "none", overlap: true, start: T0 + 1000 });
  clock.advance(1000);
  await q.deliver(() => {
    throw new Error("beat failed");
  });
  const handler = dashboard(q, { token: TOKEN });
  const got = await (await get(handler, "/api/queues/orders/schedules")).json();
  assert.equal(got.total, 2);
  assert.deepEqual(got.actions, ["pauseSchedule", "resumeSchedule", "trigger", "unschedule"]);
  const [beat, nightly] = got.schedules;
  assert.deepEqual(
    [beat.id, beat.rule, beat.every, beat.runs, beat.skipped, beat.catchUp, beat.overlap, beat.lastOutcome],
    ["beat", "every 60000 ms", 60_000, 1, 0, "none", true, "failed"],
  );
  assert.match(beat.lastReason, /beat failed/);
  assert.deepEqual([beat.lastRun, beat.nextRun], [T0 + 1000, T0 + 61_000]);
  assert.deepEqual(
    [nightly.id, nightly.rule, nightly.cron, nightly.timezone, nightly.runs, nightly.lastRun, nightly.lastOutcome],
    ["nightly", "cron 0 2 * * * (Europe/Berlin)", "0 2 * * *", "Europe/Berlin", 0, undefined, undefined],
  );
  assert.equal(new Date(nightly.nextRun).getUTCMinutes(), 0);
  assert.ok(!JSON.stringify(got).includes("4111"), "values hidden");
  const withValues = await (await get(dashboard(q, { values: true }), "/api/queues/orders/schedules")).json();
  assert.equal(withValues.schedules[1].value, '{"kind":"report","secret":"4111"}');
  assert.equal((await post(dashboard(q), "/api/queues/orders/unschedule", { id: "beat" })).status, 403, "read-only");
  assert.deepEqual(await (await post(handler, "/api/queues/orders/unschedule", { id: "beat" })).json(), { done: true });
  assert.deepEqual(await (await post(handler, "/api/queues/orders/unschedule", { id: "beat" })).json(), {
    done: false,
  });
  assert.deepEqual(
    (await q.schedules()).map((s) => s.id),
    ["nightly"],
  );
});

test("schedules: pause, resume and run now with the token, through the same POST rules as every change", async (t) => {
  manualClock(t);
  const q = await DurableDelayQueue.open(new FakeStorage(), { name: "orders" });
  await q.schedule("nightly", { cron: "0 2 * * *", timezone: "Europe/Berlin" }, { kind: "report" });
  const handler = dashboard(q, { token: TOKEN });
  const nightly = async () => (await (await get(handler, "/api/queues/orders/schedules")).json()).schedules[0];
  for (const what of ["pauseSchedule", "resumeSchedule", "trigger"]) {
    assert.equal((await post(dashboard(q), `/api/queues/orders/${what}`, { id: "nightly" })).status, 403, "read-only");
    assert.equal(
      (await post(handler, `/api/queues/orders/${what}`, { id: "nightly" }, { origin: "https://evil.example" })).status,
      403,
      `${what}: another origin`,
    );
    assert.equal((await post(handler, `/api/queues/orders/${what}`, {})).status, 400, `${what}: no id`);
  }
  assert.equal((await nightly()).paused, false, "the refused changes changed nothing");
  const done = async (what) =>
    (await (await post(handler, `/api/queues/orders/${what}`, { id: "nightly" })).json()).done;
  assert.equal(await done("pauseSchedule"), true);
  assert.equal(await done("pauseSchedule"), false);
  assert.equal((await nightly()).paused, true);
  assert.equal(await q.size(), 0, "paused: no occurrence pending");
  assert.equal(await done("resumeSchedule"), true);
  assert.equal((await nightly()).paused, false);
  assert.equal(await done("trigger"), true);
  const shown = await nightly();
  assert.deepEqual([shown.runs, shown.lastOutcome], [1, "due"], "the run now: counted, due until delivered");
  assert.equal(await q.size(), 2, "the run now beside the pending occurrence");
});
