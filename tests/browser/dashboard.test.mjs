// tarry-queue/dashboard in headless Chromium, on a RedisDelayQueue on a private redis-server,
// served by Node's http through nodeListener: the page loads with no console error, its counts
// are stats()'s, ids that are HTML render as text, retry and delete of a dead letter work with
// the token and are refused without it and from another origin, and pause/resume reaches a
// consumer in another process. Screenshots of each page go to tests/artifacts/; with
// SCREENSHOTS=<dir> (docs/images for the docs' pictures) they go there, after a minute of
// traffic so that the charts have something to show.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fork } from "node:child_process";
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { dashboard, nodeListener } from "tarry-queue/dashboard";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "../../tools/redis-server.mjs";
import { args, artifact, executablePath } from "../../tools/chromium.mjs";

const TOKEN = "dashboard-test-token";
const HOSTILE = "<img src=x onerror=alert(1)>";
const HOSTILE_PENDING = '"><script>alert(2)</script>';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const HOUR = 3_600_000;
const shots = process.env.SCREENSHOTS;

let redis;
let queue;
let worker;
let site; // the dashboard
let archive; // a second queue, no consumer, on a read-only dashboard
let readonly;
let evil; // a page on another origin
let browser;
let profile;
const errors = [];
const dialogs = [];

function serve(listener) {
  const server = http.createServer(listener);
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/` })),
  );
}

async function until(check, ms, what) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(20);
  }
}

/** Items that die at once: dead letters with these ids. */
async function bury(ids) {
  for (const id of ids) await queue.offer({ id }, 0, { id });
  for (let i = 0; i < ids.length; i++) {
    const job = await queue.take();
    await job.nack({ reason: "payment service answered 503" });
  }
}

before(async () => {
  redis = await startRedis();
  queue = new RedisDelayQueue({ redis: redis.url, name: "orders", maxAttempts: 1 });
  await bury(["dead-1", "dead-2", HOSTILE]);
  const now = Date.now();
  await queue.offerMany([
    ...Array.from({ length: 40 }, (_, i) => ({
      value: { order: i },
      deadline: now + 60_000 + i * 9000,
      id: `order-${i}`,
    })),
    { value: "x", deadline: now + 30_000, id: HOSTILE_PENDING },
  ]);
  await queue.schedule("nightly-report", { cron: "0 2 * * *", timezone: "America/New_York" }, { kind: "report" });
  await queue.schedule("heartbeat", { every: 1000 }, { kind: "beat" });
  await queue.schedule("obsolete", { every: HOUR }, { kind: "old" }, { catchUp: "none", overlap: true });
  archive = new RedisDelayQueue({ redis: redis.url, name: "archive", maxAttempts: 1 });
  for (const id of ["first", "second", "third"]) {
    await archive.offer(id, 0, { id });
    await (await archive.take()).nack({ reason: new Error(`${id} failed`) });
  }
  readonly = await serve(nodeListener(dashboard(archive)));
  // A consumer in another process, on the same queue (tests/redis/inspect-worker.mjs).
  const cfg = { url: redis.url, name: "orders", mode: "ack" };
  const child = fork(fileURLToPath(new URL("../redis/inspect-worker.mjs", import.meta.url)), [JSON.stringify(cfg)], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  worker = { child, seen: [] };
  await new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the consumer exited with ${code}`)));
    child.on("message", (m) => (m.type === "ready" ? resolve() : worker.seen.push(m)));
  });
  site = await serve(nodeListener(dashboard(queue, { token: TOKEN })));
  // Another origin, whose page tries to change the queue with the token (it could learn it no other way).
  evil = await serve((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<!doctype html><title>elsewhere</title><script>
      window.attempt = (target) => fetch(target + "api/queues/orders/delete", {
        method: "POST", headers: { "content-type": "application/json", "x-tarry-token": "${TOKEN}" },
        body: JSON.stringify({ id: "dead-2" }),
      }).then((r) => "status " + r.status, (e) => "blocked: " + e.message);
      window.form = (target) => {
        const f = document.createElement("form");
        f.method = "POST"; f.action = target + "api/queues/orders/delete"; f.enctype = "text/plain";
        const i = document.createElement("input"); i.name = '{"id":"dead-2","x":"'; i.value = '"}';
        f.append(i); document.body.append(f); f.submit();
      };
    </script>`);
  });
  profile = mkdtempSync(join(tmpdir(), "tarry-dashboard-"));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args,
    viewport: { width: 1200, height: 760 },
  });
});

after(async () => {
  await browser?.close().catch(() => {});
  if (profile) rmSync(profile, { recursive: true, force: true });
  worker?.child.kill("SIGKILL");
  site?.server.close();
  readonly?.server.close();
  await archive?.close();
  evil?.server.close();
  await queue?.close();
  await redis?.stop();
  assert.deepEqual(errors, [], "no console error and no uncaught error on any page");
  assert.deepEqual(dialogs, [], "no script of the queue's data ran");
});

/** A page of the dashboard; its errors and dialogs are collected. */
async function open(hash = "", { token = true } = {}) {
  const page = await browser.newPage();
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console.error: ${m.text()}`);
  });
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    d.dismiss();
  });
  await page.goto(`${site.url}${token ? `#token=${TOKEN}` : ""}`);
  await page.waitForSelector(".card b");
  if (hash) {
    await page.click(`a[href="#${hash}"]`);
    await page.waitForSelector(hash === "search" ? "input[type=search]" : "table tbody tr, main p.muted");
  }
  return page;
}

const cards = (page) =>
  page.$$eval(".card", (els) =>
    Object.fromEntries(els.map((e) => [e.querySelector("span").textContent, e.querySelector("b").textContent])),
  );

test("the overview loads with no console error and shows the counts stats() gives", async () => {
  const page = await open();
  const stats = await queue.stats();
  await until(async () => (await cards(page)).pending === String(stats.pending), 5000, "the pending count");
  const shown = await cards(page);
  assert.deepEqual(
    [shown.pending, shown["in flight"], shown["dead letters"]],
    [stats.pending, stats.inFlight, stats.dead].map(String),
  );
  assert.equal(await page.textContent("#state"), "running");
  assert.equal(await page.isVisible("#unlock"), false, "the token from the address unlocked it");
  await page.close();
});

test("ids that are HTML render as text, in the tables and in search", async () => {
  const page = await open("dead");
  await page.waitForSelector("td.id");
  const ids = await page.$$eval("td.id", (tds) => tds.map((td) => td.textContent));
  assert.ok(ids.includes(HOSTILE), JSON.stringify(ids));
  assert.equal(await page.$$eval("main img, main script", (els) => els.length), 0, "no element made from an id");
  await page.click('a[href="#pending"]');
  await page.waitForFunction(
    (id) => [...document.querySelectorAll("td.id")].some((td) => td.textContent === id),
    HOSTILE_PENDING,
  );
  await page.click('a[href="#search"]');
  await page.fill("input[type=search]", HOSTILE);
  await page.click("#find");
  await page.waitForSelector("dl");
  assert.ok((await page.textContent("dl")).includes(HOSTILE));
  assert.equal(await page.$$eval("main img, main script", (els) => els.length), 0);
  await page.close();
});

test("retry and delete of a dead letter work with the token, and are refused without it and from another origin", async () => {
  // Without the token: the buttons are disabled, and a change the page makes is refused (401).
  const locked = await browser.newPage();
  await locked.addInitScript(() => sessionStorage.clear());
  locked.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  await locked.goto(`${site.url}#dead`);
  await locked.waitForSelector('button[data-action="retry"]');
  assert.equal(await locked.isDisabled('button[data-action="retry"]'), true);
  assert.equal(await locked.isVisible("#unlock"), true);
  const status = await locked.evaluate(
    (url) =>
      fetch(`${url}api/queues/orders/retry`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: "dead-1" }),
      }).then((r) => r.status),
    site.url,
  );
  assert.equal(status, 401);
  await locked.close();

  // From another origin, with the token: the fetch is blocked, a form post refused; nothing changes.
  const elsewhere = await browser.newPage();
  elsewhere.on("console", () => {}); // its blocked fetch logs a CORS error there, not on the dashboard
  await elsewhere.goto(evil.url);
  assert.match(await elsewhere.evaluate((url) => window.attempt(url), site.url), /^blocked|^status 40[13]/);
  await Promise.all([
    elsewhere.waitForNavigation().catch(() => {}),
    elsewhere.evaluate((url) => window.form(url), site.url),
  ]);
  assert.match(await elsewhere.textContent("body"), /another origin|JSON body|Origin/);
  await elsewhere.close();
  assert.equal((await queue.get("dead-2"))?.state, "dead", "dead-2 is still dead");

  // With the token: retry and delete.
  const page = await open("dead");
  const row = (id) => `tr:has(td.id:text-is("${id}"))`;
  await page.click(`${row("dead-1")} button[data-action="retry"]`);
  await until(
    async () =>
      (await queue.get("dead-1"))?.state === "pending" ||
      (await queue.get("dead-1")) === undefined ||
      (await queue.get("dead-1"))?.state === "inFlight",
    5000,
    "dead-1 retried",
  );
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("retried dead-1"));
  await page.click(`${row("dead-2")} button[data-action="delete"]`);
  await until(async () => (await queue.get("dead-2")) === undefined, 5000, "dead-2 deleted");
  await page.waitForFunction(() => ![...document.querySelectorAll("td.id")].some((td) => td.textContent === "dead-2"));
  await page.close();
});

test("pause and resume from the page reach a consumer in another process", async () => {
  const page = await open();
  await page.click("#toggle");
  await until(() => worker.seen.some((m) => m.type === "paused"), 5000, "the consumer heard paused");
  await page.waitForFunction(() => document.getElementById("state").textContent === "paused");
  await queue.offer("while paused", 0, { id: "held" });
  await sleep(400);
  assert.ok(!worker.seen.some((m) => m.id === "held"), "nothing handed out while paused");
  assert.equal((await queue.get("held")).state, "pending");
  await page.click("#toggle");
  await until(() => worker.seen.some((m) => m.type === "resumed"), 5000, "the consumer heard resumed");
  await until(() => worker.seen.some((m) => m.id === "held"), 5000, "the held item delivered after resume");
  await page.waitForFunction(() => document.getElementById("state").textContent === "running");
  await page.close();
});

test("schedules: each one's rule, next and last run with its outcome; Remove, Pause, Resume and Run now with the token", async () => {
  const page = await open("schedules");
  await page.waitForSelector("td.id");
  const rows = () =>
    page.$$eval("main tbody tr", (trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
  const byId = Object.fromEntries((await rows()).map((r) => [r[0], r]));
  assert.deepEqual(Object.keys(byId), ["heartbeat", "nightly-report", "obsolete"]);
  assert.equal(byId["nightly-report"][1], "cron 0 2 * * * (America/New_York)");
  assert.match(byId["nightly-report"][2], /^\d{4}-\d\d-\d\d 0[67]:00:00 \(in /, "02:00 New York is 06:00 or 07:00 UTC");
  assert.deepEqual(byId.obsolete.slice(1, 2).concat(byId.obsolete.slice(3, 8)), [
    "every 3600000 ms",
    "–",
    "0",
    "0",
    "none",
    "yes",
  ]);
  // The consumer in the other process runs the heartbeat: its last run, done.
  await page.waitForFunction(
    () => /ago\) done$/.test(document.querySelector("main tbody tr td:nth-child(4)").textContent),
    null,
    { timeout: 30_000 },
  );
  assert.equal(await page.isDisabled('tr:has(td.id:text-is("obsolete")) button[data-action="unschedule"]'), false);
  await page.click('tr:has(td.id:text-is("obsolete")) button[data-action="unschedule"]');
  await page.waitForFunction(
    () => ![...document.querySelectorAll("td.id")].some((td) => td.textContent === "obsolete"),
  );
  assert.deepEqual(
    (await queue.schedules()).map((x) => x.id),
    ["heartbeat", "nightly-report"],
  );
  // Pause, resume and run now, next to Remove.
  const nightly = 'tr:has(td.id:text-is("nightly-report"))';
  assert.equal(await page.isVisible(`${nightly} button[data-action="resumeSchedule"]`), false, "not paused");
  await page.click(`${nightly} button[data-action="pauseSchedule"]`);
  await page.waitForSelector(`${nightly} button[data-action="resumeSchedule"]`);
  assert.equal(await page.textContent(`${nightly} td:nth-child(3)`), "paused");
  assert.equal((await queue.schedules()).find((x) => x.id === "nightly-report")?.paused, true);
  await page.click(`${nightly} button[data-action="resumeSchedule"]`);
  await page.waitForSelector(`${nightly} button[data-action="pauseSchedule"]`);
  assert.match(await page.textContent(`${nightly} td:nth-child(3)`), /^\d{4}-\d\d-\d\d 0[67]:00:00 \(in /);
  await page.click(`${nightly} button[data-action="trigger"]`);
  // The consumer in the other process runs it: one run, done.
  await page.waitForFunction(
    () => {
      const id = [...document.querySelectorAll("td.id")].find((td) => td.textContent === "nightly-report");
      return /ago\) done$/.test(id?.parentElement?.children[3]?.textContent ?? "");
    },
    null,
    { timeout: 30_000 },
  );
  assert.equal(await page.textContent(`${nightly} td:nth-child(5)`), "1");
  assert.ok(
    worker.seen.some((m) => typeof m.id === "string" && m.id.startsWith("nightly-report@")),
    "the run now was delivered",
  );
  await page.close();
});

test("a read-only dashboard says so; dead letters newest first, the order turned round, the stack on demand", async () => {
  const page = await browser.newPage();
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  await page.goto(`${readonly.url}#dead`);
  await page.waitForSelector("td.id");
  assert.equal(await page.textContent("#readonly"), "read-only: start with a token to change");
  assert.equal(await page.isVisible("#readonly"), true);
  assert.equal(await page.isVisible("#unlock"), false);
  const ids = () => page.$$eval("td.id", (tds) => tds.map((td) => td.textContent));
  assert.deepEqual(await ids(), ["third", "second", "first"]);
  assert.equal(await page.isVisible("details pre"), false, "the stack is folded");
  const reason = await page.textContent("main tbody tr td:nth-child(4) pre");
  assert.equal(reason, "Error: third failed");
  await page.click("main tbody tr details summary");
  assert.match(await page.textContent("main tbody tr details pre"), /^Error: third failed\n\s+at /);
  await page.click("#order");
  await page.waitForFunction(() => document.querySelector("td.id")?.textContent === "first");
  assert.deepEqual(await ids(), ["first", "second", "third"]);
  await page.close();
});

test("a #token= address pasted into an open tab unlocks it (hashchange)", async () => {
  const page = await browser.newPage();
  await page.addInitScript(() => sessionStorage.clear());
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  await page.goto(`${site.url}#dead`);
  await page.waitForSelector('button[data-action="delete"]');
  assert.equal(await page.isVisible("#unlock"), true);
  assert.equal(await page.isDisabled('button[data-action="delete"]'), true);
  await page.evaluate((token) => {
    location.hash = `#token=${token}`;
  }, TOKEN);
  await page.waitForFunction(() => document.getElementById("unlock").hidden);
  assert.equal(page.url().includes(TOKEN), false, "the token is out of the address");
  await page.click('a[href="#dead"]');
  await page.waitForSelector('button[data-action="delete"]:not([disabled])');
  await page.close();
});

test("screenshots of each page", async () => {
  if (shots) {
    // A minute of traffic, so that the charts have a history: items due every 100 ms, some late.
    const end = Date.now() + 60_000;
    const page = await open();
    for (let i = 0; Date.now() < end; i++) {
      await queue.offer({ i }, Math.random() * 200, { id: `traffic-${i}` });
      await sleep(40 + Math.random() * 80);
    }
    await page.close();
    // Three items held in flight by a consumer whose handler does not return.
    const cfg = { url: redis.url, name: "orders", mode: "hold", concurrency: 3 };
    const holder = fork(fileURLToPath(new URL("../redis/inspect-worker.mjs", import.meta.url)), [JSON.stringify(cfg)], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    after(() => holder.kill("SIGKILL"));
    worker.child.kill("SIGKILL");
    await sleep(1000);
    for (let i = 0; i < 3; i++) await queue.offer({ i }, 0, { id: `held-${i}` });
    await until(async () => (await queue.stats()).inFlight === 3, 10_000, "three items in flight");
  }
  for (const view of ["overview", "pending", "inflight", "dead", "schedules", "search"]) {
    const page = await open(view === "overview" ? "" : view);
    if (view === "search") {
      await page.fill("input[type=search]", "order-3");
      await page.click("#find");
      await page.waitForSelector("dl, main p.muted");
    }
    await sleep(300);
    const file = shots ? join(shots, `dashboard-${view}.png`) : artifact(`dashboard-${view}.png`);
    await page.screenshot({ path: file });
    await page.close();
  }
});
