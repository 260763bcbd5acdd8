// tarry under Deno, imported by its package name (Deno resolves "tarry-queue" through
// package.json's `exports`, "deno" condition: js/deno.js). The same essentials as the Node
// tests: order, FIFO ties, take with timeout and abort, cancel, one host timer,
// keepAlive: false (Deno.unrefTimer), the Scheduler and snapshots through localStorage (the
// docs' Deno examples run in docs.test.ts). Deno's sanitizers also fail any test that leaves
// a timer behind.
//
//   deno test --allow-read --allow-run --allow-write --allow-env tests/deno/
import { assert, assertEquals, assertRejects, assertThrows } from "./assert.ts";
import { DelayQueue, Scheduler } from "tarry-queue";

const root = new URL("../../", import.meta.url);
const now = () => performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LATE_MS = 2000;

Deno.test("the package resolves to its Deno entry", () => {
  assertEquals(import.meta.resolve("tarry-queue"), new URL("js/deno.js", root).href);
});

Deno.test("items come out in deadline order, FIFO among ties, never early", async () => {
  const q = new DelayQueue<string>();
  const t0 = now();
  const plan: [string, number][] = [
    ["c", 30],
    ["a", 10],
    ["b1", 20],
    ["b2", 20],
    ["b3", 20],
    ["now", 0],
  ];
  for (const [v, d] of plan) q.offer(v, d);
  const got: [string, number][] = [];
  for (let i = 0; i < plan.length; i++) got.push([(await q.take())!, now() - t0]);
  assertEquals(
    got.map((g) => g[0]),
    ["now", "a", "b1", "b2", "b3", "c"],
  );
  for (const [v, at] of got) {
    const due = plan.find((p) => p[0] === v)![1];
    assert(at >= due, `${v} came ${due - at} ms early`);
    assert(at - due < LATE_MS, `${v} came ${at - due} ms late`);
  }
  q.close();
});

Deno.test("take with a timeout resolves undefined and loses nothing; abort rejects with the reason", async () => {
  const q = new DelayQueue<string>();
  q.offer("later", 3000); // seconds after the timeout and the abort: a loaded machine runs timers late
  const t0 = now();
  assertEquals(await q.take({ timeout: 20 }), undefined);
  assert(now() - t0 >= 20);
  assertEquals(q.size, 1);
  const ac = new AbortController();
  const taking = q.take({ signal: ac.signal });
  setTimeout(() => ac.abort(new Error("stop")), 10);
  await assertRejects(taking, /^stop$/);
  assertEquals(q.size, 1, "an aborted take leaves the item");
  assertEquals(await q.take(), "later");
  assert(now() - t0 >= 3000);
  q.close();
});

Deno.test("cancel by handle; a stale handle cancels nothing", async () => {
  const q = new DelayQueue<string>();
  const a = q.offer("a", 10)!;
  q.offer("b", 20);
  assertEquals(q.cancel(a), "a");
  assertEquals(q.cancel(a), undefined);
  assertEquals(await q.take(), "b");
  q.close();
});

Deno.test("one host timer for many items and takers", async () => {
  const real = { set: globalThis.setTimeout, clear: globalThis.clearTimeout };
  type Id = ReturnType<typeof setTimeout>;
  const live = new Set<Id>();
  let max = 0;
  // deno-lint-ignore no-explicit-any
  (globalThis as any).setTimeout = (fn: () => void, ms?: number) => {
    const id: Id = real.set(() => {
      live.delete(id);
      fn();
    }, ms);
    live.add(id);
    max = Math.max(max, live.size);
    return id;
  };
  // deno-lint-ignore no-explicit-any
  (globalThis as any).clearTimeout = (id: Id) => {
    live.delete(id);
    real.clear(id);
  };
  try {
    const q = new DelayQueue<number>();
    for (let i = 0; i < 500; i++) q.offer(i, 1 + (i % 25));
    const takes = Array.from({ length: 500 }, () => q.take());
    assertEquals(q.stats.timersArmed, 1);
    const got = await Promise.all(takes);
    assertEquals(got.length, 500);
    assertEquals(max, 1, "never two host timers at once");
    assertEquals(live.size, 0);
    q.close();
  } finally {
    globalThis.setTimeout = real.set;
    globalThis.clearTimeout = real.clear;
  }
});

/** Runs Deno with `args` in `cwd`; its exit code and output. */
async function deno(args: string[], cwd: string) {
  const out = await new Deno.Command(Deno.execPath(), { args, cwd, stdout: "piped", stderr: "piped" }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/** Runs a module in a fresh Deno process; its exit code, stdout and time taken. */
async function runDeno(code: string) {
  const dir = await Deno.makeTempDir({ dir: new URL("tests/deno/", root).pathname });
  try {
    const file = `${dir}/main.ts`;
    await Deno.writeTextFile(file, code);
    const t0 = now();
    const out = await deno(["run", "--allow-read", file], new URL(".", root).pathname);
    return { ...out, ms: now() - t0 };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("keepAlive: false does not hold the process open (Deno.unrefTimer); the default does", async () => {
  const unref = await runDeno(`import { DelayQueue, Scheduler } from "tarry-queue";
    const q = new DelayQueue({ keepAlive: false });
    q.offer("x", 10_000);
    q.take().then(() => console.log("took"));
    new Scheduler({ keepAlive: false }).schedule(() => console.log("ran"), 10_000);`);
  assertEquals(unref.code, 0, unref.stderr);
  assertEquals(unref.stdout, "");
  assert(unref.ms < 8000, `exited after ${unref.ms} ms`);
  const held = await runDeno(`import { DelayQueue } from "tarry-queue";
    const q = new DelayQueue();
    q.offer("x", 100);
    q.take().then((v) => console.log("took", v));`);
  assertEquals(held.code, 0, held.stderr);
  assertEquals(held.stdout, "took x\n");
});

Deno.test("a take waiting on an empty queue keeps Deno running, for await too; keepAlive: false lets it exit", async () => {
  // The producer's timer is unref'd: only the waiting take can keep the process running.
  const producer = (q: string, v: string) => `Deno.unrefTimer(setTimeout(() => ${q}.offer(${v}, 0), 300));`;
  const held = await runDeno(`import { DelayQueue } from "tarry-queue";
    const q = new DelayQueue();
    ${producer("q", '"late"')}
    q.take().then((v) => console.log("took", v, q.stats.timersArmed));`);
  assertEquals(held.code, 0, held.stderr);
  assertEquals(held.stdout, "took late 0\n");
  const looped = await runDeno(`import { DelayQueue } from "tarry-queue";
    const q = new DelayQueue<number>();
    q.offer(1, 0);
    ${producer("q", "2")}
    (async () => {
      const seen = [];
      for await (const x of q) {
        seen.push(x);
        if (x === 2) q.close();
      }
      console.log(seen.join(","));
    })();`);
  assertEquals(looped.code, 0, looped.stderr);
  assertEquals(looped.stdout, "1,2\n");
  const unref = await runDeno(`import { DelayQueue } from "tarry-queue";
    const q = new DelayQueue({ keepAlive: false });
    ${producer("q", '"late"')}
    q.take().then((v) => console.log("took", v));`);
  assertEquals(unref.code, 0, unref.stderr);
  assertEquals(unref.stdout, "");
});

Deno.test("Scheduler: deadline order, FIFO ties, errors to onerror, one timer", async () => {
  const errors: string[] = [];
  const s = new Scheduler({ onerror: (e) => errors.push((e as Error).message) });
  const ran: string[] = [];
  s.schedule(() => ran.push("b"), 20);
  s.schedule((x: string) => ran.push(x), 10, "a");
  s.schedule(() => {
    throw new Error("boom");
  }, 15);
  s.schedule(() => ran.push("b2"), 20);
  const h = s.schedule(() => ran.push("never"), 5);
  assert(s.cancel(h));
  assertEquals(s.stats.timersArmed, 1);
  while (s.size) await sleep(5);
  assertEquals(ran, ["a", "b", "b2"]);
  assertEquals(errors, ["boom"]);
  s.close();
});

Deno.test("snapshot round trip through localStorage", async () => {
  const q = new DelayQueue<{ id: number }>();
  q.offer({ id: 2 }, 40);
  q.offer({ id: 0 }, -5);
  q.offer({ id: 1 }, 40);
  localStorage.setItem("tarry-test", JSON.stringify(q.snapshot()));
  q.close();
  const r = DelayQueue.restore<{ id: number }>(JSON.parse(localStorage.getItem("tarry-test")!));
  localStorage.removeItem("tarry-test");
  assertEquals(r.poll(), { id: 0 }, "the overdue item is due at once");
  assertEquals((await r.take())!.id, 2);
  assertEquals((await r.take())!.id, 1);
  r.close();
  assertThrows(
    () => DelayQueue.restore({ version: 9, size: 0, items: [] }),
    TypeError,
    /unsupported snapshot version 9/,
  );
});
