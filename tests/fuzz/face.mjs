// Model-based fuzzing of the JS face: random sequences of every public call of DelayQueue
// and Scheduler, on a fake clock and a fake timer host (tests/fuzz/host.mjs) whose timers
// fire on time, early, late, in bursts, or are refused, checked after every call against a
// plain model of what the queue must hold.
//
//   node tests/fuzz/face.mjs --seed 7 --steps 400        one run, its trace on failure
//   node tests/fuzz/face.mjs --seed 7 --steps 400 --only 3,17,40   a shrunk replay
//   node tests/fuzz/run.mjs                               many random seeds (npm run fuzz)
//
// What the model checks, after every call (and inside the library, from its callbacks):
//   - every value offered ends up exactly once delivered (take, poll, drain, the async
//     iterator, a take rejected with the value on its error), cancelled, cleared, dropped
//     by close(), or pending: toArray() is the model's pending items, in order;
//   - nothing comes out early (by the fake clock): not from poll/drain, not to a take, not a
//     Scheduler callback, not a take's timeout;
//   - deadline order with FIFO ties, everywhere an item leaves; takes and puts served in call
//     order;
//   - one host timer per queue at most, armed exactly while something waits, for the
//     earliest deadline that can end a wait (so a new head re-arms it and no wake-up is lost),
//     with the delay setTimeout takes (long waits chained); unref'd when keepAlive is false;
//   - errors: the right class (ClosedError after close, the signal's reason on abort, a
//     TypeError naming the argument for bad input, the host's error when it refuses a timer),
//     and a call that throws changes nothing;
//   - ids: offer, add, offerAt and offerMany name some items by ids from a small pool, so that
//     ids collide: an id names the one item in the queue that has it (cancel, reschedule and
//     delayOf by id find it), an offer with an id already there replaces that item in place
//     (same handle, new value and deadline, behind equal deadlines), an item that leaves frees
//     its id, and snapshots carry ids to the restored queue.
//
// How the model sees inside a call: every value it offers is a fresh object or primitive;
// objects carry a non-enumerable `then` getter (or are Proxies) that the library reads when it
// checks a value at offer and when it hands one to a take (and the Promise reads it again when
// it resolves). At each such read, at every abort listener and Scheduler callback, and around
// every call, the model compares toArray() with what it expects: items gone without an
// explicit removal were handed to takes, and must have been due, the earliest, in order.
// Callbacks make reentrant calls (other queues, the same queue, close()), and so do the
// `then` callbacks of takes and puts.
//
// Reproducible: a run is a seed and a number of steps; step i draws from its own generator
// (seed, i), so a failing run shrinks by leaving steps out (`only`).

// biome-ignore-all lint/suspicious/noThenProperty: hostile values with `then` are what this fuzzer offers

import { setImmediate } from "node:timers";
import { ClosedError, DelayQueue, Scheduler } from "tarry-queue";
import { table as badInputTable } from "../bad-input.mjs";
import { FakeHost, MAX_TIMER_MS } from "./host.mjs";
import { Random } from "./random.mjs";

/** All microtasks run before the next macrotask. */
const settle = () => new Promise((r) => setImmediate(r));

export class Violation extends Error {
  name = "Violation";
}

function violation(message) {
  throw new Violation(message);
}

/** Deadline order, FIFO among equal deadlines (-0 and 0 are equal, as everywhere in JS). */
function before(a, b) {
  return a.deadline < b.deadline || (a.deadline === b.deadline && a.seq < b.seq);
}
const byKey = (a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0);

/** Scheduler's "just after `t`" (js/memory/scheduler.js), to check a deadline moved out of a wake-up. */
const DELAYS = [-1e10, -5, -1, -0, 0, 0, 1e-300, 0.125, 0.5, 1, 1, 2, 3, 3, 5, 8, 13, 40, 100, 1e4, 2 ** 31 + 3, 1e10];

/** Numbers no call returns as a handle: every call taking a handle refuses them with a TypeError. */
const NOT_HANDLES = [-1, 1.5, Number.NaN, 2 ** 26 + 0.5, 2 ** 53, 2 ** 53 + 1, Infinity];
const isHandleNumber = (h) => Number.isSafeInteger(h) && h >= 0;
/** What a DelayQueue's cancel, reschedule and delayOf take: a handle or an id. */
const isItem = (h) => (typeof h === "string" ? !NOT_IDS.includes(h) : isHandleNumber(h));

/** An id as a call's label shows it. */
const idLabel = (id) =>
  id === undefined ? "" : `, { id: ${JSON.stringify(id.length > 20 ? `${id.slice(0, 8)}…(${id.length})` : id)} }`;

/** The ids offers draw from: few, so that they collide (and replace); the longest id there is. */
const IDS = ["a", "b", "c", "order:42", "ü😀", "x".repeat(512)];
/** Strings that are no id (a RangeError naming the id). */
const NOT_IDS = ["", "x".repeat(513), "lone\uD800"];

const MAX_DEPTH = 3;
const MAX_ITEMS = 60;

/** The model of one DelayQueue. */
class QueueModel {
  constructor(world, q, { capacity, keepAlive }) {
    this.world = world;
    this.q = q;
    this.n = world.queues.length;
    this.capacity = capacity;
    this.keepAlive = keepAlive;
    this.closed = false;
    /** value -> entry, for every value this queue was offered (final ones too). */
    this.entries = new Map();
    /** Entries in the queue (state "pending"). */
    this.live = new Set();
    /** Entries handed to a take, not yet received by it. */
    this.handed = new Set();
    /** Explicit adds of calls in progress, in the order they insert. */
    this.inflight = [];
    /** Adds taken back out (or maybe) when the host refused their timer, until their call ends. */
    this.unsure = new Set();
    this.seq = 0;
    this.handCount = 0;
    this.takers = [];
    this.putters = [];
    this.iterators = [];
    this.timerFn = null;
    this.epochs = new Map(); // offerAt: wall-clock deadline -> latest converted deadline
  }

  get name() {
    return `q${this.n}`;
  }

  /** Takes in line now: plain ones not settled, and each iterator waiting for its next item. */
  waiting() {
    let n = 0;
    for (const t of this.takers) if (!t.settled) n++;
    for (const it of this.iterators) if (it.pendingNext > 0 && !it.done) n++;
    return n;
  }

  /** The earliest item whose deadline the model knows (all of them, between calls). */
  head() {
    let h = null;
    for (const e of this.live) if (e.deadline !== null && (h === null || before(e, h))) h = e;
    return h;
  }

  sorted() {
    return [...this.live].filter((e) => e.deadline !== null).sort(byKey);
  }

  /** An offerAt in progress whose deadline is not known yet (learned when it returns). */
  unknown() {
    for (const e of this.live) if (e.deadline === null) return true;
    return false;
  }
}

/** The model of one Scheduler. */
class SchedulerModel {
  constructor(world, s, { keepAlive }) {
    this.world = world;
    this.s = s;
    this.n = world.schedulers.length;
    this.keepAlive = keepAlive;
    this.closed = false;
    this.live = new Set();
    this.handles = new Map();
    this.seq = 0;
    this.timerFn = null;
    /** Errors its callbacks threw or rejected with, not yet passed to onerror. */
    this.errors = new Set();
    this.refused = false;
    this.epochs = new Map();
  }

  get name() {
    return `s${this.n}`;
  }

  head() {
    let h = null;
    for (const j of this.live) if (h === null || before(j, h)) h = j;
    return h;
  }
}

class World {
  constructor(seed, steps) {
    this.seed = seed >>> 0;
    this.steps = steps;
    const rng = new Random(this.seed);
    this.rng = rng;
    const setup = rng.fork("config");
    this.config = {
      reenter: setup.pick([0, 0.15, 0.35]),
      jitter: setup.pick(["exact", "early", "late", "mixed", "wild"]),
      burst: setup.chance(0.5),
      refusals: setup.chance(0.2),
      hostile: setup.pick([0.1, 0.3, 0.5]),
      maxQueues: setup.range(1, 4),
      maxSchedulers: setup.range(0, 2),
    };
    const start = setup.pick([0, -0, 1000.5, 1e12 + 0.25, 2 ** 40]);
    this.host = new FakeHost({ start, wallBase: 1_700_000_000_000 + setup.int(1000) });
    this.host.jitter = (ms) => this.#jitter(ms);
    this.host.onArm = (timer) => this.#learnTimer(timer);
    this.queues = [];
    this.schedulers = [];
    this.controllers = [];
    this.values = 0;
    this.takes = 0;
    this.puts = 0;
    this.jobs = 0;
    this.calls = 0;
    this.depth = 0;
    this.context = []; // the models whose calls are running (innermost last)
    this.stepIndex = -1;
    this.failure = null;
    this.trace = [];
    this.handles = new Set(); // every handle given out in this run (all queues)
    this.counts = {
      delivered: 0,
      cancelled: 0,
      cleared: 0,
      closed: 0,
      refused: 0,
      timedOut: 0,
      aborted: 0,
      ran: 0,
      badInput: 0,
      replaced: 0,
      byId: 0,
      reentrant: 0,
      fires: 0,
      earlyFires: 0,
    };
    this.expectedConsoleErrors = 0;
    this.consoleErrors = [];
  }

  // ---- running -----------------------------------------------------------------------

  async run(only) {
    const host = this.host;
    const realError = console.error;
    console.error = (...args) => this.consoleErrors.push(args.map(String).join(" "));
    const onUnhandled = (reason) => this.fail(new Violation(`an unhandled rejection: ${reason?.stack ?? reason}`));
    process.on("unhandledRejection", onUnhandled);
    host.install();
    const executed = [];
    try {
      this.guard(() => this.setup());
      for (let i = 0; i < this.steps && this.failure === null; i++) {
        if (only && !only.has(i)) continue;
        this.stepIndex = i;
        executed.push(i);
        try {
          const r = new Random(this.seed).fork(`step ${i}`);
          this.rng = r.fork("inside"); // jitter and reentrancy: this step's own draws
          this.idRng = r.fork("ids"); // ids: their own draws, so that the other draws stay as they were
          await this.step(r);
        } catch (e) {
          this.fail(e);
        }
        await settle();
        await settle();
        if (this.failure === null) this.guard(() => this.checkQuiet());
      }
      if (this.failure === null) {
        this.stepIndex = this.steps;
        await this.guardAsync(() => this.finish());
      }
    } finally {
      host.uninstall();
      console.error = realError;
      // Rejections of this run that surface after it are its own: wait for them first.
      await settle();
      process.off("unhandledRejection", onUnhandled);
    }
    return {
      seed: this.seed,
      ok: this.failure === null,
      failure: this.failure,
      executed,
      calls: this.calls,
      counts: this.counts,
      config: this.config,
      trace: this.trace,
    };
  }

  fail(e) {
    if (this.failure !== null) return;
    const message = e instanceof Violation ? e.message : `unexpected ${e?.name ?? "error"}: ${e?.message ?? e}`;
    this.failure = { step: this.stepIndex, message, stack: e instanceof Violation ? undefined : e?.stack };
    this.log(`!! ${message}`);
  }

  /** Runs `fn`, recording a violation instead of throwing (for callbacks the library calls). */
  guard(fn) {
    try {
      return fn();
    } catch (e) {
      this.fail(e);
      return undefined;
    }
  }

  async guardAsync(fn) {
    try {
      return await fn();
    } catch (e) {
      this.fail(e);
      return undefined;
    }
  }

  log(line) {
    this.trace.push(`${String(this.stepIndex).padStart(4)}: ${"  ".repeat(this.depth)}${line}`);
    if (this.trace.length > 4000) this.trace.splice(0, 1000);
  }

  /** Counts and logs a public call, and runs it with `model` as the context (for the timer it may arm). */
  call(model, label, fn) {
    this.calls++;
    this.log(label);
    this.context.push(model);
    try {
      return fn();
    } finally {
      this.context.pop();
    }
  }

  #jitter(ms) {
    const r = this.rng;
    const mode = this.config.jitter === "mixed" ? r.pick(["exact", "early", "late", "wild"]) : this.config.jitter;
    switch (mode) {
      case "early":
        return r.chance(0.5) ? -Math.min(ms, r.pick([0.25, 1, 1.5])) : 0;
      case "late":
        return r.pick([0, 0.5, 1, 7, 30]);
      case "wild": // on a 1/64 ms grid, so that the fake clock stays exact
        return Math.round((r.chance(0.3) ? -ms * r.float() : r.float() * 20) * 64) / 64;
      default:
        return 0;
    }
  }

  /**
   * Whether, at `t` on the clock, the wall clock (standing at `offset` from it) is still
   * before `at`: early by the wall clock. A microsecond of slack for float rounding at 10^12 ms.
   */
  #wallEarly(t, at, offset) {
    return offset + t < at - 1e-3;
  }

  /** A new host timer: whose it is, from the call that armed it. */
  #learnTimer(timer) {
    const m = this.context.length !== 0 ? this.context.at(-1) : this.#firingModel();
    if (m === undefined || m.timerFn !== null) return;
    if ([...this.queues, ...this.schedulers].some((x) => x.timerFn === timer.fn)) return;
    m.timerFn = timer.fn;
  }

  #firingModel() {
    const f = this.host.firing;
    if (f === null) return undefined;
    return [...this.queues, ...this.schedulers].find((m) => m.timerFn === f.fn);
  }

  // ---- the world at the start, and the end --------------------------------------------

  setup() {
    const r = this.rng.fork("setup");
    const n = r.range(1, this.config.maxQueues);
    for (let i = 0; i < n; i++) this.newQueue(r);
    for (let i = 0; i < this.config.maxSchedulers; i++) this.newScheduler(r);
  }

  /** Closes everything: every take and put must settle, every value must have its fate. */
  async finish() {
    this.log("finish: close everything");
    for (const qm of this.queues) if (!qm.closed) this.opClose(qm);
    for (const sm of this.schedulers) if (!sm.closed) this.schedClose(sm);
    await settle();
    await settle();
    this.checkQuiet();
    for (const qm of this.queues) {
      for (const t of qm.takers) if (!t.settled) violation(`${qm.name} take #${t.n} never settled after close()`);
      for (const p of qm.putters) if (!p.settled) violation(`${qm.name} put #${p.n} never settled after close()`);
      for (const e of qm.entries.values()) {
        if (["pending", "handed", "inflight", "retracted", "limbo"].includes(e.state))
          violation(`${qm.name} v${e.n} is still ${e.state} after close()`);
      }
    }
    if (this.host.live.size !== 0) violation(`${this.host.live.size} host timers armed after everything closed`);
  }

  // ---- values --------------------------------------------------------------------------

  /**
   * A fresh value for `qm` and its entry (not registered yet), or, `refused`, a value no queue
   * takes. Objects carry a `then` getter the model watches (`probed`): hidden (not enumerable,
   * so a snapshot refuses the value, as JSON would leave it out), or a Proxy's (which JSON
   * never reads, so the value can be saved).
   */
  makeValue(r, qm) {
    const n = ++this.values;
    const e = {
      n,
      qm,
      value: undefined,
      kind: "",
      probed: false,
      jsonable: true,
      mode: "plain",
      state: "new",
      deadline: null,
      bound: null,
      seq: -1,
      handle: null,
      id: undefined,
      checked: false,
      handRead: false,
      resolveRead: false,
      handIndex: undefined,
      putter: null,
      revoke: null,
    };
    const hostile = r.chance(this.config.hostile);
    const kind = hostile
      ? r.pick(["proxy", "revocable", "function", "getters", "symbol", "bigint", "array"])
      : r.pick(["probe", "proxy", "proxy", "string", "number"]);
    e.kind = kind;
    const read = () => this.thenRead(e);
    switch (kind) {
      case "probe": {
        const o = { id: n };
        Object.defineProperty(o, "then", { get: read, enumerable: false, configurable: true });
        e.value = o;
        e.probed = true;
        e.jsonable = false; // a key JSON leaves out: a snapshot refuses it (js/engine/json.js)
        break;
      }
      case "function": {
        const f = () => n;
        Object.defineProperty(f, "then", { get: read, enumerable: false, configurable: true });
        e.value = f;
        e.probed = true;
        e.jsonable = false;
        break;
      }
      case "proxy":
      case "revocable": {
        const handler = { get: (t, k, recv) => (k === "then" ? read() : Reflect.get(t, k, recv)) };
        if (kind === "proxy") {
          e.value = new Proxy({ id: n }, handler);
        } else {
          const { proxy, revoke } = Proxy.revocable({ id: n }, handler);
          e.value = proxy;
          e.revoke = revoke;
        }
        e.probed = true;
        break;
      }
      case "getters": {
        const o = {
          id: n,
          get reads() {
            return n;
          },
        };
        Object.defineProperty(o, "then", { get: read, enumerable: false, configurable: true });
        e.value = o;
        e.probed = true;
        e.jsonable = false; // as "probe"
        break;
      }
      case "symbol":
        e.value = Symbol(`v${n}`);
        e.jsonable = false;
        break;
      case "bigint":
        e.value = BigInt(n);
        e.jsonable = false;
        break;
      case "array":
        e.value = [n, `v${n}`];
        break;
      case "string":
        e.value = `v${n}`;
        break;
      default:
        e.value = n + 0.5;
    }
    return e;
  }

  /** A value no queue takes, and what the error must name. */
  refusedValue(r) {
    switch (r.int(6)) {
      case 0:
        return [Object.assign(() => {}, { then() {} }), "a function with then"];
      case 1:
        return [undefined, "undefined"];
      case 2:
        return [{ then() {} }, "a thenable"];
      case 3:
        return [Promise.resolve(1), "a Promise"];
      case 4: {
        const { proxy, revoke } = Proxy.revocable({}, {});
        revoke();
        return [proxy, "a revoked Proxy"];
      }
      default:
        return [
          {
            get then() {
              throw new Error("hostile then getter");
            },
          },
          "a throwing then getter",
        ];
    }
  }

  /** What a `then` read returns in the value's current mode. */
  #modeResult(e) {
    if (e.mode === "thenable") {
      return () => this.fail(new Violation(`${e.qm.name} v${e.n}: a Promise adopted it (called its then): it is lost`));
    }
    if (e.mode === "throws") throw new Error(`v${e.n}: hostile then getter`);
    return undefined;
  }

  /** The library read a watched value's `then`: at offer (a check), or handing it to a take. */
  thenRead(e) {
    const qm = e.qm;
    if ((e.state === "inflight" || e.state === "put") && !e.checked) {
      // The check at offer: nothing inserted yet. A close() here is the one reentrant call the
      // model allows at this point (the offer must then refuse the value).
      e.checked = true;
      if (this.depth < MAX_DEPTH && this.rng.chance(this.config.reenter / 6) && !qm.closed) {
        this.guard(() => {
          this.depth++;
          this.counts.reentrant++;
          this.log(`(in v${e.n}'s then getter, read at offer)`);
          try {
            this.opClose(qm);
          } finally {
            this.depth--;
          }
        });
      }
      return this.#modeResult(e);
    }
    if (!e.handRead && (e.state === "pending" || e.state === "inflight" || e.state === "put" || e.state === "handed")) {
      e.handRead = true;
      this.guard(() => {
        this.reconcile(qm, `v${e.n} handed out`);
        if (e.state === "put") {
          // Let in and handed out within one call, or not in the queue at all yet: the
          // binding has counted one more hand-out than the model only in the first case.
          if (qm.q.stats.delivered === qm.handCount)
            violation(`${qm.name} v${e.n}: put() read its then again before adding it (it is to be read once)`);
          this.#handUnseenPut(qm, e, true);
        }
        if (e.state !== "handed")
          violation(`${qm.name} v${e.n}: its then was read as if it were handed out, but it is ${e.state}`);
        if (!qm.uncertain && e.handIndex != null && e.handIndex !== qm.handCount - 1) {
          violation(`${qm.name} v${e.n} was handed out after an item that comes after it`);
        }
        this.maybeReenter(`in v${e.n}'s then getter, as it is handed out`);
      });
      return this.#modeResult(e);
    }
    if (e.handRead && !e.resolveRead) {
      e.resolveRead = true;
      this.guard(() => this.maybeReenter(`in v${e.n}'s then getter, as the take resolves`));
    }
    return this.#modeResult(e);
  }

  /** An entry in limbo turned out to be handed out (its place among hand-outs unknown). */
  #limboHanded(qm, e) {
    e.state = "handed";
    e.handIndex = null;
    qm.handCount++;
    qm.handed.add(e);
  }

  /**
   * Puts called before `p` and not seen yet went in before it (let in and handed out within
   * one call, or still to be learned): their turn in the order comes first.
   */
  #earlierPutsWentIn(qm, p) {
    for (const o of qm.putters) {
      if (o.n >= p.n) break;
      if (o.entry.state === "put" && !o.settled && o.went === undefined) {
        o.went = ++qm.seq;
        o.unseen = true;
      }
    }
  }

  /**
   * A put's value let in and handed to a take within one call, never seen in the queue.
   * `exact`: seen now, as it is handed out (its then read); otherwise learned later, from
   * the take or the put that settled, when its place among hand-outs is unknown.
   */
  #handUnseenPut(qm, e, exact = false) {
    const p = e.putter;
    if (exact) this.#earlierPutsWentIn(qm, p);
    e.deadline = p.deadline;
    e.seq = ++qm.seq;
    p.went ??= e.seq;
    if (e.deadline > this.host.now)
      violation(`${qm.name} v${e.n} (a put) handed out ${e.deadline - this.host.now} ms early`);
    e.state = "handed";
    e.handIndex = exact ? qm.handCount : null;
    qm.handCount++;
    qm.handed.add(e);
  }

  // ---- reconciling the model with what the queue shows ---------------------------------

  /**
   * Compares toArray() with the model. Explicit adds in progress that show up are pending now,
   * those gone were handed out already; values of waiting puts that show up were let in; items
   * gone without an explicit removal were handed to takes: each must have been due, and
   * nothing earlier may have stayed behind. Then the order must be the model's, exactly.
   */
  reconcile(qm, why = "") {
    if (qm.closed) {
      if (!qm.q.closed) violation(`${qm.name} should be closed`);
      return;
    }
    if (qm.q.closed) violation(`${qm.name} is closed, but nothing closed it`);
    const actual = qm.q.toArray();
    const now = this.host.now;
    const present = new Set();
    const puts = [];
    for (const v of actual) {
      const e = qm.entries.get(v);
      if (e === undefined) violation(`${qm.name} holds a value it was never given (${why})`);
      if (present.has(e)) violation(`${qm.name} holds v${e.n} twice`);
      present.add(e);
      if (e.state === "put") puts.push(e);
      else if (e.state !== "pending" && e.state !== "inflight")
        violation(`${qm.name} holds v${e.n}, which the model has ${e.state} (${why})`);
    }
    const fresh = new Set();
    const gone = [];
    for (const e of qm.inflight) {
      if (e.state !== "inflight") continue;
      e.seq = ++qm.seq;
      fresh.add(e);
      const refused = this.host.refused > e.refusals; // since this call began
      if (present.has(e)) {
        e.state = "pending";
        qm.live.add(e);
      } else if (refused && (e.deadline !== null ? e.deadline > now : e.bound > now)) {
        // Not due, so not handed out: taken back out, as the host refused the timer it needed.
        e.state = "retracted";
        qm.unsure.add(e);
      } else if (refused && e.deadline === null) {
        e.state = "limbo"; // handed out or taken back: the call's outcome tells
        qm.unsure.add(e);
      } else {
        gone.push(e);
      }
    }
    qm.inflight = qm.inflight.filter((e) => e.state === "inflight");
    puts.sort((a, b) => a.putter.n - b.putter.n);
    const admitted = new Set();
    for (const e of puts) {
      this.#earlierPutsWentIn(qm, e.putter);
      if (e.putter.unseen) violation(`${qm.name} put #${e.putter.n} went in after a put called after it`);
      e.deadline = e.putter.deadline;
      e.seq = ++qm.seq;
      e.putter.went = e.seq;
      e.state = "pending";
      e.putter.admittedSeen = true;
      qm.live.add(e);
      admitted.add(e);
    }
    for (const e of qm.live) if (!present.has(e)) gone.push(e);
    qm.uncertain = gone.some((e) => e.deadline === null);
    if (gone.length !== 0) {
      // An offerAt handed out before its deadline was learned sorts by its lower bound.
      const k = (e) => (e.deadline !== null ? e.deadline : e.bound);
      gone.sort((a, b) => k(a) - k(b) || a.seq - b.seq);
      for (const e of gone) {
        if (e.deadline !== null ? e.deadline > now : this.#wallEarly(now, e.wall.at, e.wall.offset))
          violation(`${qm.name} v${e.n} left the queue ${(e.deadline ?? e.bound) - now} ms early (${why})`);
      }
      const last = gone.filter((e) => e.deadline !== null).at(-1);
      if (last !== undefined) {
        for (const e of qm.live) {
          if (present.has(e) && !admitted.has(e) && e.deadline !== null && before(e, last)) {
            violation(
              `${qm.name} v${last.n} (deadline ${last.deadline}) was handed out while v${e.n} (deadline ${e.deadline}, earlier or an earlier tie) stayed (${why})`,
            );
          }
        }
      }
      for (const e of gone) {
        qm.live.delete(e);
        e.state = "handed";
        // An offerAt handed out before its deadline was learned: its place is not known.
        e.handIndex = e.deadline === null ? null : qm.handCount;
        qm.handCount++;
        qm.handed.add(e);
        this.log(`(v${e.n} handed to a take)`);
      }
    }
    const expected = qm.sorted().filter((e) => e.deadline !== null);
    const got = actual.map((v) => qm.entries.get(v)).filter((e) => e.deadline !== null);
    for (let i = 0; i < Math.max(expected.length, got.length); i++) {
      if (expected[i] !== got[i]) {
        const show = (xs) => xs.map((e) => `v${e.n}@${e.deadline}#${e.seq}`).join(" ");
        violation(
          `${qm.name}.toArray() order differs from the model (${why}):\n  got      ${show(got)}\n  expected ${show(expected)}`,
        );
      }
    }
    if (qm.q.size !== actual.length) violation(`${qm.name}.size ${qm.q.size} but toArray() has ${actual.length}`);
  }

  reconcileAll(why) {
    for (const qm of this.queues) this.reconcile(qm, why);
  }

  // ---- the quiet checks, between steps -------------------------------------------------

  checkQuiet() {
    const host = this.host;
    if (host.problems.length !== 0) violation(`the host saw: ${host.problems.join("; ")}`);
    let armed = 0;
    for (const qm of this.queues) {
      this.reconcile(qm, "between steps");
      const q = qm.q;
      for (const e of qm.unsure) {
        if (e.state === "retracted" || e.state === "limbo")
          violation(`${qm.name} v${e.n} is ${e.state} after its call`);
      }
      qm.unsure.clear();
      for (const e of qm.handed) {
        violation(`${qm.name} v${e.n} left the queue for a take, but no take received it: it is lost`);
      }
      const st = q.stats;
      if (qm.closed) {
        if (st.size !== 0 || st.takers !== 0 || st.timersArmed !== 0)
          violation(`${qm.name} stats after close(): ${JSON.stringify(st)}`);
        if (q.size !== 0 || q.remainingCapacity !== 0 || !q.closed)
          violation(`${qm.name} after close(): size ${q.size}`);
        continue;
      }
      this.#checkTakeOrder(qm);
      this.#checkPutOrder(qm);
      const waiting = qm.waiting();
      if (st.size !== qm.live.size) violation(`${qm.name}.stats.size ${st.size}, model ${qm.live.size}`);
      if (st.takers !== waiting) violation(`${qm.name}.stats.takers ${st.takers}, model ${waiting}`);
      if (st.delivered !== qm.handCount) violation(`${qm.name}.stats.delivered ${st.delivered}, model ${qm.handCount}`);
      if (st.earlyWakes > st.wakes) violation(`${qm.name}: more early wakes than wakes`);
      const room = qm.capacity === Infinity ? Infinity : qm.capacity - qm.live.size;
      if (q.remainingCapacity !== room) violation(`${qm.name}.remainingCapacity ${q.remainingCapacity}, model ${room}`);
      const waitingPuts = qm.putters.filter((p) => !p.settled && p.entry.state === "put").length;
      if (waitingPuts !== 0 && qm.live.size < qm.capacity)
        violation(`${qm.name}: ${waitingPuts} puts wait while there is room (${qm.live.size} of ${qm.capacity})`);
      // The one timer: armed exactly while something waits, for the earliest deadline that ends a wait.
      let wake = Infinity;
      if (waiting !== 0) {
        const h = qm.head();
        if (h !== null) wake = h.deadline;
        for (const t of qm.takers)
          if (!t.settled && t.timeoutAt !== undefined && t.timeoutAt < wake) wake = t.timeoutAt;
      }
      armed += this.#checkTimer(qm, st.timersArmed, wake);
    }
    for (const sm of this.schedulers) {
      const s = sm.s;
      const st = s.stats;
      if (sm.closed) {
        if (st.size !== 0 || st.timersArmed !== 0 || s.size !== 0 || !s.closed)
          violation(`${sm.name} after close(): ${JSON.stringify(st)}`);
        continue;
      }
      if (s.size !== sm.live.size) violation(`${sm.name}.size ${s.size}, model ${sm.live.size}`);
      for (const j of sm.live) {
        const d = s.delayOf(j.handle);
        if (d !== j.deadline - host.now)
          violation(`${sm.name}.delayOf(job ${j.n}) ${d}, model ${j.deadline - host.now}`);
      }
      if (sm.errors.size !== 0) violation(`${sm.name}: ${sm.errors.size} callback errors never reached onerror`);
      const h = sm.head();
      armed += this.#checkTimer(sm, st.timersArmed, h === null ? Infinity : h.deadline, sm.refused);
    }
    if (host.live.size !== armed)
      violation(`${host.live.size} host timers armed, the queues and schedulers report ${armed}`);
    if (this.consoleErrors.length > this.expectedConsoleErrors)
      violation(`console.error: ${this.consoleErrors.slice(this.expectedConsoleErrors).join(" | ")}`);
  }

  /**
   * Takes are served in call order: one still waiting means none called after it received
   * an item, and the items went out (hand order) in the order of the calls that got them.
   * (Not the order their Promises settle in: a value's then getter can make a reentrant
   * take() that resolves inside the resolution of an earlier one.)
   */
  /** Puts go in in call order: none after one that still waits, in the order of their calls. */
  #checkPutOrder(qm) {
    let waiting = null;
    let last = -1;
    for (const p of qm.putters) {
      const e = p.entry;
      if (e.state === "put" && !p.settled) {
        waiting ??= p;
        continue;
      }
      if (p.went === undefined) continue; // refused: never went in
      if (waiting !== null)
        violation(`${qm.name} put #${p.n} went in while put #${waiting.n}, called before it, waits`);

      if (p.went < last) violation(`${qm.name} put #${p.n} went in before a put called before it`);
      last = p.went;
    }
  }

  #checkTakeOrder(qm) {
    let waiting = null;
    let last = -1;
    let lastTake = null;
    for (const t of qm.takers) {
      if (!t.settled && waiting === null) waiting = t;
      if (t.handIndex === undefined) continue;
      if (waiting !== null)
        violation(`${qm.name} take #${t.n} received an item while take #${waiting.n}, called before it, waits`);
      if (t.handIndex === null) continue;
      if (t.handIndex < last)
        violation(
          `${qm.name} take #${t.n} received an item handed out before take #${lastTake.n}'s, which it was called after`,
        );
      last = t.handIndex;
      lastTake = t;
    }
  }

  /** The model's timer against the host's: 0 or 1 armed, for `wake`, with the delay setTimeout takes. */
  #checkTimer(m, reported, wake, lenient = false) {
    const live = m.timerFn === null ? [] : [...this.host.live.values()].filter((t) => t.fn === m.timerFn);
    if (reported !== 0 && reported !== 1) violation(`${m.name}.stats.timersArmed is ${reported}`);
    if (m.timerFn !== null && live.length !== reported)
      violation(`${m.name}.stats.timersArmed ${reported}, the host has ${live.length}`);
    if (lenient) {
      if (wake === Infinity && reported !== 0) violation(`${m.name}: a timer armed with nothing pending`);
      return reported;
    }
    if (wake === Infinity) {
      if (reported !== 0) violation(`${m.name}: a timer armed while nothing waits`);
      return reported;
    }
    if (reported !== 1) violation(`${m.name}: something waits for ${wake} but no timer is armed (a lost wake-up)`);
    const t = live[0];
    if (t !== undefined) {
      const ms = Math.min(Math.max(Math.ceil(wake - t.armedAt), 0), MAX_TIMER_MS);
      if (t.ms !== ms)
        violation(
          `${m.name}: the timer is armed for ${t.ms} ms from ${t.armedAt}, the earliest wait ends at ${wake} (${ms} ms)`,
        );
      if (t.unrefd === m.keepAlive && typeof t.id === "object")
        violation(`${m.name}: keepAlive ${m.keepAlive} but the timer is ${t.unrefd ? "" : "not "}unref'd`);
    }
    return reported;
  }

  // ---- steps ---------------------------------------------------------------------------

  async step(r) {
    const kind = r.weighted([
      [30, "queue"],
      [this.schedulers.some((s) => !s.closed) ? 10 : 0, "scheduler"],
      [18, "time"],
      [3, "fire early"],
      [2, "wall"],
      [4, "abort"],
      [3, "mutate"],
      [2, "bad input"],
      [this.config.refusals ? 2 : 0, "refuse"],
      [1, "new"],
      [2, "quiesce"],
    ]);
    switch (kind) {
      case "queue":
        return this.queueOp(r, false);
      case "scheduler":
        return this.schedOp(r, false);
      case "time":
        return this.advance(r);
      case "fire early":
        return this.fireEarly(r);
      case "wall": {
        const j = r.pick([-0.9, -5, 5, 1000, -1000, 0.5]);
        this.host.wallShift += j;
        this.log(`the wall clock steps ${j} ms`);
        return;
      }
      case "abort":
        return this.opAbort(r);
      case "mutate":
        return this.opMutate(r);
      case "bad input":
        return this.opBadInput(r);
      case "refuse":
        this.host.refusals += r.range(1, 3);
        this.log(`the host will refuse the next ${this.host.refusals} timers`);
        return;
      case "new":
        return r.chance(0.7) || this.config.maxSchedulers === 0 ? this.newQueue(r) : this.newScheduler(r);
      default:
        return this.quiesce(r);
    }
  }

  /** A reentrant call from a callback the library made, sometimes. */
  maybeReenter(where) {
    if (this.depth >= MAX_DEPTH || !this.rng.chance(this.config.reenter)) return;
    this.depth++;
    this.counts.reentrant++;
    this.log(`(${where})`);
    try {
      const r = this.rng;
      if (r.chance(0.75) || !this.schedulers.some((s) => !s.closed)) this.queueOp(r, true);
      else this.schedOp(r, true);
    } finally {
      this.depth--;
    }
  }

  newQueue(r) {
    if (this.queues.length >= 8) return;
    const capacity = r.chance(0.35) ? r.range(1, 6) : Infinity;
    const keepAlive = r.chance(0.7);
    const opts = { clock: this.host.clock, keepAlive };
    if (capacity !== Infinity) opts.capacity = capacity;
    const q = this.call(
      undefined,
      `new DelayQueue(${JSON.stringify({ capacity, keepAlive })})`,
      () => new DelayQueue(opts),
    );
    const qm = new QueueModel(this, q, { capacity, keepAlive });
    this.queues.push(qm);
    return qm;
  }

  newScheduler(r) {
    if (this.schedulers.length >= 4) return;
    const keepAlive = r.chance(0.7);
    const sm = new SchedulerModel(this, null, { keepAlive });
    const onerror = (e) => {
      this.guard(() => this.onSchedError(sm, e));
      if (sm.throwingOnerror) {
        this.expectedConsoleErrors++;
        throw new Error(`${sm.name}'s onerror throws too`);
      }
    };
    sm.s = this.call(
      sm,
      `new Scheduler({ keepAlive: ${keepAlive} })`,
      () => new Scheduler({ clock: this.host.clock, keepAlive, onerror }),
    );
    sm.throwingOnerror = r.chance(0.2);
    this.schedulers.push(sm);
    return sm;
  }

  // ---- time ----------------------------------------------------------------------------

  async advance(r) {
    const host = this.host;
    let dt = r.pick([0, 0.125, 0.5, 1, 1, 2, 3, 5, 10, 40, "timer", "deadline", "far"]);
    if (dt === "timer") {
      const next = [...host.live.values()].reduce((m, t) => Math.min(m, t.due), Infinity);
      dt = next === Infinity ? 1 : Math.max(0, next - host.now);
    } else if (dt === "deadline") {
      let next = Infinity;
      for (const qm of this.queues)
        for (const e of qm.live) if (e.deadline > host.now) next = Math.min(next, e.deadline);
      for (const sm of this.schedulers)
        for (const j of sm.live) if (j.deadline > host.now) next = Math.min(next, j.deadline);
      dt = next === Infinity ? 1 : next - host.now;
    } else if (dt === "far") {
      dt = r.pick([2 ** 31, 1e10, 3600_000]);
    }
    host.now += dt;
    this.log(`time +${dt} -> ${host.now}`);
    await this.fireDue(r);
  }

  /** Fires the timers due by now, one at a time or in a burst (no microtasks in between). */
  async fireDue(r, limit = 20) {
    const burst = this.config.burst && r.chance(0.6);
    for (let i = 0; i < limit; i++) {
      const t = this.host.due()[0];
      if (t === undefined) return;
      this.fire(t, false);
      if (this.failure !== null) return;
      if (!burst) await settle();
    }
  }

  fire(t, early) {
    this.counts.fires++;
    if (early) this.counts.earlyFires++;
    const owner = [...this.queues, ...this.schedulers].find((m) => m.timerFn === t.fn);
    this.log(`host fires ${owner?.name ?? "a"} timer (${t.ms} ms from ${t.armedAt}${early ? ", early" : ""})`);
    this.host.fire(t);
    this.guard(() => this.reconcileAll("after a timer fired"));
  }

  /** A host timer fires now, whenever it was due (a host that fires early). */
  async fireEarly(r) {
    const live = [...this.host.live.values()];
    if (live.length === 0) return;
    this.fire(r.pick(live), true);
  }

  /** Moves time forward to each armed timer in turn until none is left within reach. */
  async quiesce(r) {
    for (let i = 0; i < 30 && this.failure === null; i++) {
      const next = [...this.host.live.values()].sort((a, b) => a.due - b.due)[0];
      if (next === undefined || next.due > this.host.now + 5_000) return;
      if (next.due > this.host.now) this.host.now = next.due;
      this.log(`quiesce: time -> ${this.host.now}`);
      await this.fireDue(r, 5);
    }
  }

  // ---- DelayQueue calls ----------------------------------------------------------------

  /** An id for an offer (from a small pool, so that they collide), or undefined (none). */
  pickId(p = 0.35) {
    return this.idRng.chance(p) ? this.idRng.pick(IDS) : undefined;
  }

  /** The entry in the queue that has `id`, or null. */
  owner(qm, id) {
    for (const e of qm.live) if (e.id === id) return e;
    return null;
  }

  /** An offer is about to replace `old` (its id's item): it leaves, as the new entry goes in. */
  #replacing(old) {
    old.qm.live.delete(old);
    old.state = "replaced";
    this.log(`(v${old.n} is to be replaced: it has id ${old.id.slice(0, 20)})`);
  }

  /**
   * A replacement of `old` returned `h`: old's handle, or, when old's own offer has not
   * returned yet (this one ran inside it), the handle that offer is to return.
   */
  #replacedHandle(old, h, label) {
    if (old.handle === null) {
      if (!Number.isSafeInteger(h) || h < 2 ** 26 || this.handles.has(h))
        violation(`${label} replaced v${old.n}, still being offered: ${h} is no fresh handle`);
      this.handles.add(h);
      old.handle = h;
    } else if (h !== old.handle) {
      violation(`${label} replaced v${old.n} (id ${old.id.slice(0, 20)}): returned ${h}, not its handle ${old.handle}`);
    }
  }

  /** The offer that was to replace `old` threw: it stays, or was dropped by a close() inside the call. */
  #notReplaced(old) {
    if (old.qm.closed) {
      old.state = "closed";
      this.counts.closed++;
    } else {
      old.state = "pending";
      old.qm.live.add(old);
    }
  }

  pickQueue(r, open = true) {
    const qs = open ? this.queues.filter((q) => !q.closed) : this.queues;
    return qs.length === 0 ? undefined : r.pick(qs);
  }

  queueOp(r, nested) {
    let qm = this.pickQueue(r, !r.chance(0.03));
    if (qm === undefined) {
      if (nested) return;
      qm = this.newQueue(r);
      if (qm === undefined) return;
    }
    this.guard(() => this.reconcile(qm, "before a call"));
    const full = qm.live.size >= MAX_ITEMS;
    // Calls whose answer the model predicts from the order need every deadline known.
    const sure = qm.unknown() ? 0 : 1;
    const op = r.weighted([
      [full ? 0 : 14, "offer"],
      [full ? 0 : 3, "add"],
      [full ? 0 : 4, "offerAt"],
      [full ? 0 : 3, "offerMany"],
      [full ? 0 : 4, "put"],
      [12, "take"],
      [5 * sure, "poll"],
      [2 * sure, "peek"],
      [1 * sure, "element"],
      [6, "cancel"],
      [5, "reschedule"],
      [2, "delayOf"],
      [3 * sure, "drain"],
      [1, "clear"],
      [2, "toArray"],
      [2 * sure, "snapshot"],
      [2, "flush"],
      [nested ? 1 : 0.4, "close"],
      [2, "stats"],
      [3, "iterate"],
    ]);
    switch (op) {
      case "offer":
      case "add":
        return this.opOffer(qm, r, op);
      case "offerAt":
        return this.opOfferAt(qm, r);
      case "offerMany":
        return this.opOfferMany(qm, r);
      case "put":
        return this.opPut(qm, r);
      case "take":
        return this.opTake(qm, r);
      case "poll":
        return this.opPoll(qm);
      case "peek":
      case "element":
        return this.opPeek(qm, op);
      case "cancel":
        return this.opCancel(qm, r);
      case "reschedule":
        return this.opReschedule(qm, r);
      case "delayOf":
        return this.opDelayOf(qm, r);
      case "drain":
        return this.opDrain(qm, r);
      case "clear":
        return this.opClear(qm);
      case "toArray":
        return this.call(qm, `${qm.name}.toArray()`, () => this.reconcile(qm, "toArray"));
      case "snapshot":
        return this.opSnapshot(qm, r);
      case "flush":
        this.call(qm, `${qm.name}.flush()`, () => qm.q.flush());
        return this.reconcile(qm, "after flush()");
      case "close":
        return this.opClose(qm, r.chance(0.3));
      case "stats":
        return this.call(qm, `${qm.name}.stats`, () => qm.q.stats);
      default:
        return this.opIterate(qm, r);
    }
  }

  /** Calls `fn` expecting a ClosedError (the queue is closed). */
  expectClosed(m, label, fn) {
    const threw = this.thrown(m, label, fn);
    if (!(threw instanceof ClosedError))
      violation(
        `${label} on a closed ${m.s ? "scheduler" : "queue"}: expected a ClosedError, got ${threw ?? "no error"}`,
      );
  }

  /** Calls `fn` as `call` does; what it threw, or undefined. */
  thrown(m, label, fn) {
    try {
      this.call(m, label, fn);
    } catch (e) {
      return e;
    }
    return undefined;
  }

  /** Calls `fn` expecting a TypeError or RangeError naming `name` (a RegExp), and checks nothing changed. */
  expectBad(qm, label, type, name, fn) {
    const threw = this.thrown(qm, label, fn);
    if (threw?.name !== type || !name.test(threw.message)) {
      violation(
        `${label}: expected a ${type} naming ${name}, got ${threw ? `${threw.name}: ${threw.message}` : "no error"}`,
      );
    }
    this.counts.badInput++;
    if (qm.s === undefined) this.reconcile(qm, `after ${label}`); // (a scheduler's model checks itself)
  }

  delay(r) {
    return r.pick(DELAYS);
  }

  /** A value an offer refused: it never went in. */
  #refuse(e) {
    if (e.state === "inflight" || e.state === "retracted" || e.state === "limbo") e.state = "refused";
    this.counts.refused++;
  }

  opOffer(qm, r, method) {
    if (r.chance(0.08)) {
      const [v, what] = this.refusedValue(r);
      return this.expectBad(qm, `${qm.name}.${method}(${what}, 1)`, "TypeError", /\bvalue\b/, () => qm.q[method](v, 1));
    }
    const e = this.makeValue(r, qm);
    const delay = this.delay(r);
    const id = this.pickId();
    const opts = id === undefined ? undefined : { id };
    const label = `${qm.name}.${method}(v${e.n}:${e.kind}, ${Object.is(delay, -0) ? "-0" : delay}${idLabel(id)})`;
    if (qm.closed) return this.expectClosed(qm, label, () => qm.q[method](e.value, delay, opts));
    const old = id === undefined ? null : this.owner(qm, id);
    const full = old === null && qm.live.size >= qm.capacity;
    e.id = id;
    this.#register(qm, e, this.host.now + delay);
    if (old !== null) this.#replacing(old);
    let h;
    try {
      h = this.call(qm, label, () => qm.q[method](e.value, delay, opts));
    } catch (err) {
      if (old !== null) this.#notReplaced(old);
      return this.#offerThrew(qm, e, err, label, method === "add" && full);
    }
    return this.#offered(qm, e, h, label, full, old);
  }

  #register(qm, e, deadline) {
    e.state = "inflight";
    e.refusals = this.host.refused;
    e.deadline = deadline;
    qm.entries.set(e.value, e);
    qm.inflight.push(e);
  }

  /** After an offer returned `h`; `old`: the entry it replaced (by id), or null. */
  #offered(qm, e, h, label, full, old = null) {
    if (qm.closed) {
      // close() ran inside the call (from a then getter): before the insertion it must refuse.
      if (e.state === "inflight") violation(`${label}: the queue was closed during the call, yet it returned ${h}`);
      return h;
    }
    if (old !== null) {
      // A replacement: in place, under the handle of the item it replaced; it needs no room.
      this.#replacedHandle(old, h, label);
      e.handle = h;
      this.counts.replaced++;
      this.reconcile(qm, `after ${label}`);
      if (e.state === "limbo") this.#limboHanded(qm, e); // a replacement is never taken back out
      if (e.state === "inflight" || e.state === "retracted")
        violation(`${label}: v${e.n} neither in the queue nor handed out`);
      return h;
    }
    if (h === null) {
      if (!full) violation(`${label} returned null with room left (${qm.live.size} of ${qm.capacity})`);
      this.#refuse(e);
      qm.inflight = qm.inflight.filter((x) => x !== e);
      this.reconcile(qm, `after ${label}`);
      return h;
    }
    if (e.handle !== null) {
      // Replaced by id during its own call (from a then getter): the replacement learned its handle.
      if (h !== e.handle) violation(`${label} returned ${h}; v${e.n}'s replacement had ${e.handle}`);
      this.reconcile(qm, `after ${label}`);
      return h;
    }
    if (full) violation(`${label} returned a handle on a full queue`);
    if (!Number.isSafeInteger(h) || h < 2 ** 26) violation(`${label} returned ${h}, not a handle`);
    if (this.handles.has(h)) violation(`${label} returned handle ${h}, given out before`);
    this.handles.add(h);
    e.handle = h;
    this.reconcile(qm, `after ${label}`);
    // It returned a handle, so the host took the timer: an item in limbo was handed out.
    if (e.state === "limbo") this.#limboHanded(qm, e);
    if (e.state === "inflight" || e.state === "retracted")
      violation(`${label}: v${e.n} neither in the queue nor handed out`);
    return h;
  }

  #offerThrew(qm, e, err, label, fullAdd) {
    qm.inflight = qm.inflight.filter((x) => x !== e);
    if (qm.closed && err instanceof ClosedError) {
      if (e.state === "inflight") e.state = "refused";
      this.counts.refused++;
      return;
    }
    if (fullAdd && err instanceof RangeError && /full/.test(err.message)) {
      this.#refuse(e);
      this.reconcile(qm, `after ${label}`);
      return;
    }
    if (err === this.host.refusal) {
      this.#refuse(e);
      this.reconcile(qm, `after ${label} (the host refused the timer)`);
      return;
    }
    throw err;
  }

  opOfferAt(qm, r) {
    const e = this.makeValue(r, qm);
    const delta = this.delay(r);
    const epoch = Date.now() + (Math.abs(delta) > 1e9 ? Math.sign(delta) * 1e9 : delta);
    const asDate = r.chance(0.3);
    const deadline = asDate ? new Date(epoch) : epoch;
    const at = asDate ? deadline.getTime() : epoch;
    const id = this.pickId();
    const opts = id === undefined ? undefined : { id };
    const label = `${qm.name}.offerAt(v${e.n}:${e.kind}, ${asDate ? "Date " : ""}${at}${idLabel(id)})`;
    if (qm.closed) return this.expectClosed(qm, label, () => qm.q.offerAt(e.value, deadline, opts));
    const old = id === undefined ? null : this.owner(qm, id);
    e.id = id;
    this.#register(qm, e, null);
    if (old !== null) this.#replacing(old);
    // Never before Date.now() reaches `at`, as the clocks stand at the call.
    e.bound = at - this.host.wallOffset;
    e.wall = { at, offset: this.host.wallOffset };
    const full = old === null && qm.live.size >= qm.capacity;
    let h;
    try {
      h = this.call(qm, label, () => qm.q.offerAt(e.value, deadline, opts));
    } catch (err) {
      if (old !== null) this.#notReplaced(old);
      return this.#offerThrew(qm, e, err, label, false);
    }
    if (h !== null && !qm.closed) {
      const d = qm.q.delayOf(h);
      if (d !== undefined) {
        const converted = d + this.host.now;
        if (this.#wallEarly(converted, at, this.host.wallOffset))
          violation(`${label}: converted to ${converted}, before ${e.bound} (early by the wall clock)`);
        const last = qm.epochs.get(at);
        if (last !== undefined && converted < last)
          violation(
            `${label}: converted to ${converted}, before an equal wall-clock deadline offered earlier (${last})`,
          );
        qm.epochs.set(at, converted);
        e.deadline = converted;
      }
    }
    return this.#offered(qm, e, h, label, full, old);
  }

  opOfferMany(qm, r) {
    const k = r.range(0, 4);
    const es = Array.from({ length: k }, () => this.makeValue(r, qm));
    const form = r.pick(["number", "array", "float64"]);
    const delays = es.map(() => this.delay(r));
    const ds = form === "number" ? (delays[0] ?? 1) : form === "array" ? delays : Float64Array.from(delays);
    const hostile = r.chance(0.2);
    const values = es.map((e) => e.value);
    const reads = new Array(k).fill(0);
    if (hostile) {
      for (let i = 0; i < k; i++) {
        Object.defineProperty(values, i, {
          get: () => {
            reads[i]++;
            return es[i].value;
          },
        });
      }
    }
    // Ids for some batches: ids[i] names es[i]; one already in the queue, or earlier in the
    // batch, is replaced (in batch order).
    const ids = this.idRng.chance(0.3) ? es.map(() => this.pickId(0.6)) : undefined;
    const opts = ids === undefined ? undefined : { ids };
    const label = `${qm.name}.offerMany([${es.map((e) => `v${e.n}`).join(", ")}], ${form === "number" ? ds : `[${delays.join(", ")}]`}${hostile ? ", getters" : ""}${ids === undefined ? "" : `, { ids: ${JSON.stringify(ids.map((id) => id?.slice(0, 8) ?? null))} }`})`;
    if (qm.closed) return this.expectClosed(qm, label, () => qm.q.offerMany(values, ds, opts));
    const now = this.host.now;
    /** For each element: the entry it replaces (in the queue, or earlier in the batch), or null. */
    const replaces = new Array(k).fill(null);
    const named = new Map(); // id -> the batch's latest entry with it
    let fresh = 0;
    for (let i = 0; i < k; i++) {
      const id = ids?.[i];
      es[i].id = id;
      replaces[i] = id === undefined ? null : (named.get(id) ?? this.owner(qm, id));
      if (replaces[i] === null) fresh++;
      if (id !== undefined) named.set(id, es[i]);
    }
    const room = qm.capacity - qm.live.size;
    for (let i = 0; i < k; i++) this.#register(qm, es[i], now + (form === "number" ? ds : delays[i]));
    const refused = fresh > room;
    if (!refused) {
      for (let i = 0; i < k; i++) {
        const old = replaces[i];
        if (old === null) continue;
        if (es.includes(old)) {
          old.state = "replaced"; // never seen: replaced within the batch
          qm.inflight = qm.inflight.filter((x) => x !== old);
        } else {
          this.#replacing(old);
        }
      }
    }
    let hs;
    try {
      hs = this.call(qm, label, () => qm.q.offerMany(values, ds, opts));
    } catch (err) {
      qm.inflight = qm.inflight.filter((x) => !es.includes(x));
      if (!refused) for (const old of replaces) if (old !== null && !es.includes(old)) this.#notReplaced(old);
      if (qm.closed && err instanceof ClosedError) {
        for (const e of es) if (e.state === "inflight" || e.state === "replaced") e.state = "refused";
        return;
      }
      if (err instanceof RangeError && refused) {
        for (const e of es) this.#refuse(e);
        this.reconcile(qm, `after ${label}`);
        return;
      }
      throw err;
    }
    if (hostile && reads.some((n) => n !== 1))
      violation(`${label} read the elements of values ${reads.join(", ")} times`);
    if (qm.closed) return;
    if (refused) violation(`${label} added a batch of ${fresh} new items with room for ${room}`);
    if (!Array.isArray(hs) || hs.length !== k) violation(`${label} returned ${hs}`);
    for (let i = 0; i < k; i++) {
      const old = replaces[i];
      if (old !== null) {
        this.#replacedHandle(old, hs[i], `${label}, element ${i}`);
        this.counts.replaced++;
      } else if (es[i].handle !== null) {
        if (hs[i] !== es[i].handle)
          violation(`${label}: element ${i} got ${hs[i]}; its replacement had ${es[i].handle}`);
      } else {
        if (!Number.isSafeInteger(hs[i]) || this.handles.has(hs[i]))
          violation(`${label}: handle ${hs[i]} is no fresh handle`);
        this.handles.add(hs[i]);
      }
      es[i].handle = hs[i];
    }
    this.reconcile(qm, `after ${label}`);
  }

  opPut(qm, r) {
    const e = this.makeValue(r, qm);
    const delay = this.delay(r);
    const c = r.chance(0.4) ? this.pickController(r) : undefined;
    const n = ++this.puts;
    const label = `${qm.name}.put(v${e.n}:${e.kind}, ${delay}${c ? `, { signal: c${c.n}${c.aborted ? " (aborted)" : ""} }` : ""}) #${n}`;
    const p = { n, entry: e, deadline: this.host.now + delay, c, settled: false, calling: true, admittedSeen: false };
    e.putter = p;
    e.state = "put";
    e.deadline = p.deadline;
    qm.entries.set(e.value, e);
    qm.putters.push(p);
    let promise;
    try {
      promise = this.call(qm, label, () => qm.q.put(e.value, delay, c ? { signal: c.signal } : undefined));
    } finally {
      p.calling = false;
    }
    promise.then(
      (h) => this.guard(() => this.onPutSettled(qm, p, true, h)),
      (err) => this.guard(() => this.onPutSettled(qm, p, false, err)),
    );
    this.reconcile(qm, `after ${label}`);
  }

  onPutSettled(qm, p, ok, x) {
    p.settled = true;
    const e = p.entry;
    this.log(`put #${p.n} on ${qm.name} ${ok ? `resolved ${x}` : `rejected ${x?.name}: ${x?.message}`}`);
    if (!qm.closed) this.reconcile(qm, `put #${p.n} settled`);

    if (ok) {
      if (!Number.isSafeInteger(x) || this.handles.has(x)) violation(`put #${p.n} resolved with ${x}, no fresh handle`);
      this.handles.add(x);
      e.handle = x;
      if (e.state === "put") {
        // Let in and handed to a take within one call, before any read of the queue: the take has it.
        this.#handUnseenPut(qm, e);
      }
    } else {
      if (e.state !== "put") violation(`${qm.name} put #${p.n} rejected, but v${e.n} went in (${e.state})`);
      e.state = "refused";
      p.went = undefined; // it was taken for let in (by a later put), but it was not waiting
      if (x instanceof ClosedError) {
        if (!qm.closed) violation(`${qm.name} put #${p.n} rejected with a ClosedError on an open queue`);
      } else if (x === this.host.refusal) {
        if (!this.config.refusals) violation(`${qm.name} put #${p.n} rejected with a refusal the host never made`);
      } else if (p.c?.aborted) {
        if (x !== p.c.signal.reason) violation(`${qm.name} put #${p.n} rejected with ${x}, not its signal's reason`);
        this.counts.aborted++;
      } else {
        violation(`${qm.name} put #${p.n} rejected with ${x?.stack ?? x}`);
      }
    }
    this.maybeReenter(`in put #${p.n}'s then callback`);
  }

  pickController(r) {
    if (this.controllers.length === 0 || r.chance(0.4)) {
      const c = { n: this.controllers.length, ctrl: new AbortController(), aborted: false };
      c.signal = c.ctrl.signal;
      if (r.chance(0.2)) {
        // A signal aborted before it is used.
        c.aborted = true;
        c.ctrl.abort(new Error(`c${c.n} aborted at birth`));
      }
      // This listener is added first, so it runs before the queue's own ones.
      c.signal.addEventListener("abort", () => this.guard(() => this.onAbortListener(c)));
      this.controllers.push(c);
      return c;
    }
    return r.pick(this.controllers);
  }

  onAbortListener(c) {
    this.reconcileAll(`c${c.n}'s abort listener`);
    this.maybeReenter(`in c${c.n}'s abort listener`);
  }

  opAbort(r) {
    const live = this.controllers.filter((c) => !c.aborted);
    if (live.length === 0) return;
    const c = r.pick(live);
    const reason = r.pick([new Error(`c${c.n} aborted`), undefined, `c${c.n}: a string reason`]);
    c.aborted = true;
    this.call(undefined, `c${c.n}.abort(${reason === undefined ? "" : typeof reason})`, () => c.ctrl.abort(reason));
    this.reconcileAll(`after c${c.n}.abort()`);
  }

  opTake(qm, r) {
    const c = r.chance(0.35) ? this.pickController(r) : undefined;
    const timeout = r.chance(0.35) ? r.pick([0, -0, 1, 2.5, 10, 50, 1e9]) : undefined;
    const n = ++this.takes;
    const t = { n, c, timeoutAt: undefined, settled: false, plain: true };
    const opts = {};
    if (c) opts.signal = c.signal;
    if (timeout !== undefined) opts.timeout = timeout;
    const label = `${qm.name}.take(${c ? `signal c${c.n}${c.aborted ? " (aborted)" : ""} ` : ""}${timeout !== undefined ? `timeout ${timeout}` : ""}) #${n}`;
    if (!qm.closed && !c?.aborted && timeout !== undefined) t.timeoutAt = this.host.now + timeout;
    qm.takers.push(t);
    const promise = this.call(qm, label, () => qm.q.take(Object.keys(opts).length || r.chance(0.5) ? opts : undefined));
    promise.then(
      (v) => this.guard(() => this.onTakeSettled(qm, t, true, v)),
      (err) => this.guard(() => this.onTakeSettled(qm, t, false, err)),
    );
    this.reconcile(qm, `after ${label}`);
  }

  /** A value a take or the iterator received: which entry, and check it left the queue for it. */
  claim(qm, v, who, plain) {
    const e = qm.entries.get(v);
    if (e === undefined) violation(`${who} received a value ${qm.name} was never given`);
    if (e.state === "put") this.#handUnseenPut(qm, e);
    if (e.state === "limbo") this.#limboHanded(qm, e);
    if (e.state !== "handed") violation(`${who} received v${e.n}, which the model has ${e.state}`);
    if (e.deadline !== null ? e.deadline > this.host.now : this.#wallEarly(this.host.now, e.wall.at, e.wall.offset))
      violation(`${who} received v${e.n} ${(e.deadline ?? e.bound) - this.host.now} ms early`);
    if (plain !== null) plain.handIndex = e.handIndex ?? null;
    qm.handed.delete(e);
    e.state = "delivered";
    this.counts.delivered++;
    return e;
  }

  onTakeSettled(qm, t, ok, x) {
    t.settled = true;
    const who = `${qm.name} take #${t.n}`;
    if (!qm.closed) this.reconcile(qm, `${who} settled`);
    if (ok && x === undefined) {
      this.log(`${who} timed out`);
      if (t.timeoutAt === undefined) violation(`${who} resolved with undefined without a timeout`);
      if (t.timeoutAt > this.host.now) violation(`${who} timed out ${t.timeoutAt - this.host.now} ms early`);
      this.counts.timedOut++;
    } else if (ok || (x instanceof TypeError && x.value !== undefined && qm.entries.has(x.value))) {
      const v = ok ? x : x.value;
      const e = this.claim(qm, v, who, t);
      this.log(`${who} ${ok ? "received" : "rejected, carrying"} v${e.n}`);
      if (!ok && e.mode === "plain") violation(`${who} rejected with v${e.n}, a plain value: ${x.message}`);
      if (ok && e.mode !== "plain") violation(`${who} received v${e.n}, which is ${e.mode}`);
    } else {
      this.log(`${who} rejected ${x?.name}: ${x?.message}`);
      if (x instanceof ClosedError) {
        if (!qm.closed) violation(`${who} rejected with a ClosedError on an open queue`);
      } else if (x === this.host.refusal) {
        // The host refusing the timer rejects every waiting take, also one whose abort is
        // being dispatched (an earlier abort listener's call can make the host refuse).
        if (!this.config.refusals) violation(`${who} rejected with a refusal the host never made`);
      } else if (t.c?.aborted) {
        if (x !== t.c.signal.reason) violation(`${who} rejected with ${x}, not its signal's reason`);
        this.counts.aborted++;
      } else {
        violation(`${who} rejected with ${x?.stack ?? x}`);
      }
    }
    this.maybeReenter(`in take #${t.n}'s then callback`);
  }

  opIterate(qm, r) {
    const its = qm.iterators.filter((it) => !it.done);
    if (its.length === 0 || r.chance(0.3)) {
      const it = { n: qm.iterators.length, iter: qm.q[Symbol.asyncIterator](), pendingNext: 0, done: false };
      qm.iterators.push(it);
      this.log(`${qm.name}[Symbol.asyncIterator]() #${it.n}`);
      return;
    }
    const it = r.pick(its);
    if (it.pendingNext === 0 && r.chance(0.15)) {
      this.call(qm, `${qm.name} iterator #${it.n}.return()`, () => it.iter.return()).then(
        () => {},
        (err) => this.fail(new Violation(`iterator return() rejected: ${err}`)),
      );
      it.done = true;
      return;
    }
    it.pendingNext++;
    const p = this.call(qm, `${qm.name} iterator #${it.n}.next()`, () => it.iter.next());
    p.then(
      (res) => this.guard(() => this.onIterSettled(qm, it, true, res)),
      (err) => this.guard(() => this.onIterSettled(qm, it, false, err)),
    );
    this.reconcile(qm, `after iterator #${it.n}.next()`);
  }

  onIterSettled(qm, it, ok, x) {
    it.pendingNext--;
    const who = `${qm.name} iterator #${it.n}`;
    if (!qm.closed) this.reconcile(qm, `${who} settled`);
    if (ok && x.done) {
      // After close(), or a next() queued behind one that threw (the generator has ended).
      if (!qm.closed && !it.threw) violation(`${who} ended while the queue is open`);
      it.done = true;
      return;
    }
    if (ok) {
      const e = this.claim(qm, x.value, who, null);
      if (e.mode !== "plain") violation(`${who} yielded v${e.n}, which is ${e.mode}`);
      this.log(`${who} received v${e.n}`);
    } else if (x instanceof TypeError && x.value !== undefined && qm.entries.has(x.value)) {
      const e = this.claim(qm, x.value, who, null);
      this.log(`${who} threw, carrying v${e.n}`);
      it.done = true;
      it.threw = true;
    } else if (x === this.host.refusal) {
      it.done = true;
      it.threw = true;
    } else {
      violation(`${who} rejected with ${x?.stack ?? x}`);
    }
    this.maybeReenter(`in ${who}'s then callback`);
  }

  opPoll(qm) {
    const label = `${qm.name}.poll()`;
    if (qm.closed) return this.expectClosed(qm, label, () => qm.q.poll());
    const h = qm.head();
    const due = h !== null && h.deadline <= this.host.now ? h : null;
    if (due !== null) {
      qm.live.delete(due);
      due.state = "out";
    }
    const v = this.call(qm, label, () => qm.q.poll());
    const got = v === undefined ? null : qm.entries.get(v);
    if (got !== due)
      violation(
        `${label} returned ${got ? `v${got.n}` : "undefined"}, the model expected ${due ? `v${due.n}` : "undefined"}`,
      );
    if (due !== null) {
      due.state = "delivered";
      this.counts.delivered++;
      this.log(`(polled v${due.n})`);
    }
    this.reconcile(qm, `after ${label}`);
  }

  opPeek(qm, method) {
    const label = `${qm.name}.${method}()`;
    if (qm.closed) return this.expectClosed(qm, label, () => qm.q[method]());
    const h = qm.head();
    if (method === "element" && h === null) {
      const threw = this.thrown(qm, label, () => qm.q.element());
      if (!(threw instanceof RangeError)) violation(`${label} on an empty queue: ${threw ?? "no error"}`);
      return;
    }
    const v = this.call(qm, label, () => qm.q[method]());
    if ((v === undefined ? null : qm.entries.get(v)) !== h) violation(`${label} did not return the head`);
  }

  /** A handle: one of this queue's (live or stale), another queue's, or a number that is none. */
  pickHandle(qm, r) {
    // An id, sometimes: one from the pool (its item may be in the queue, or gone), or no id.
    if (this.idRng.chance(0.25)) return this.idRng.chance(0.9) ? this.idRng.pick(IDS) : this.idRng.pick(NOT_IDS);
    const own = [...qm.entries.values()].filter((e) => e.handle !== null);
    const roll = r.int(10);
    if (roll < 6 && own.length) return r.pick(own).handle;
    if (roll < 8 && this.handles.size) return r.pick([...this.handles]);
    // Whole numbers that name nothing, or numbers that are no handle (a TypeError). (Not
    // 2^26: that is slot 0's first handle in every 4096th queue a process makes.)
    return r.pick([0, -0, 12345678, 2 ** 26 - 1, 2 ** 53 - 1, ...NOT_HANDLES]);
  }

  /** A call with a number that is no handle, or a string that is no id: the error naming it, open or closed. */
  expectNotHandle(m, label, fn, h) {
    if (typeof h === "string") this.expectBad(m, label, "RangeError", /\bid\b/, fn);
    else this.expectBad(m, label, "TypeError", /\bhandle\b/, fn);
  }

  /** The entry a handle or an id names in the queue, or null. */
  entryOf(qm, h) {
    if (typeof h === "string") {
      this.counts.byId++;
      return this.owner(qm, h);
    }
    for (const e of qm.live) if (e.handle === h) return e;
    return null;
  }

  opCancel(qm, r) {
    const h = this.pickHandle(qm, r);
    const label = `${qm.name}.cancel(${h})`;
    if (!isItem(h)) return this.expectNotHandle(qm, label, () => qm.q.cancel(h), h);
    if (qm.closed) return this.expectClosed(qm, label, () => qm.q.cancel(h));
    const e = this.entryOf(qm, h);
    if (e !== null) {
      qm.live.delete(e);
      e.state = "out";
    }
    const v = this.call(qm, label, () => qm.q.cancel(h));
    const got = v === undefined ? null : qm.entries.get(v);
    if (got !== e)
      violation(`${label} returned ${got ? `v${got.n}` : "undefined"}, expected ${e ? `v${e.n}` : "undefined"}`);
    if (e !== null) {
      e.state = "cancelled";
      this.counts.cancelled++;
    }
    this.reconcile(qm, `after ${label}`);
  }

  opReschedule(qm, r) {
    const h = this.pickHandle(qm, r);
    const delay = this.delay(r);
    const label = `${qm.name}.reschedule(${h}, ${delay})`;
    if (!isItem(h)) return this.expectNotHandle(qm, label, () => qm.q.reschedule(h, delay), h);
    if (qm.closed) return this.expectClosed(qm, label, () => qm.q.reschedule(h, delay));
    const e = this.entryOf(qm, h);
    if (e !== null) {
      e.deadline = this.host.now + delay;
      e.seq = ++qm.seq; // behind items already waiting for the same deadline
    }
    const moved = this.call(qm, label, () => qm.q.reschedule(h, delay));
    if (moved !== (e !== null)) violation(`${label} returned ${moved}, expected ${e !== null}`);
    this.reconcile(qm, `after ${label}`);
  }

  opDelayOf(qm, r) {
    const h = this.pickHandle(qm, r);
    const label = `${qm.name}.delayOf(${h})`;
    if (!isItem(h)) return this.expectNotHandle(qm, label, () => qm.q.delayOf(h), h);
    if (qm.closed) return this.expectClosed(qm, label, () => qm.q.delayOf(h));
    const e = this.entryOf(qm, h);
    const d = this.call(qm, label, () => qm.q.delayOf(h));
    const want = e === null ? undefined : e.deadline - this.host.now;
    if (!Object.is(d, want) && d !== want) violation(`${label} returned ${d}, expected ${want}`);
  }

  opDrain(qm, r) {
    const max = r.pick([undefined, 0, -0, 1, 2, 3, Infinity]);
    const label = `${qm.name}.drain(${max === undefined ? "" : max})`;
    if (qm.closed) return this.expectClosed(qm, label, () => qm.q.drain(max));
    const due = qm.sorted().filter((e) => e.deadline <= this.host.now);
    const want = due.slice(0, max === undefined ? Infinity : max);
    for (const e of want) {
      qm.live.delete(e);
      e.state = "out";
    }
    const out = this.call(qm, label, () => qm.q.drain(max));
    const got = out.map((v) => qm.entries.get(v));
    if (got.length !== want.length || got.some((e, i) => e !== want[i]))
      violation(`${label} returned [${got.map((e) => `v${e?.n}`)}], expected [${want.map((e) => `v${e.n}`)}]`);
    for (const e of want) {
      e.state = "delivered";
      this.counts.delivered++;
    }
    this.reconcile(qm, `after ${label}`);
  }

  opClear(qm) {
    const label = `${qm.name}.clear()`;
    if (qm.closed) return this.expectClosed(qm, label, () => qm.q.clear());
    for (const e of qm.live) {
      e.state = "cleared";
      this.counts.cleared++;
    }
    qm.live.clear();
    this.call(qm, label, () => qm.q.clear());
    this.reconcile(qm, `after ${label}`);
  }

  opClose(qm, dispose = false) {
    const label = `${qm.name}.${dispose ? "[Symbol.dispose]" : "close"}()`;
    if (!qm.closed) {
      for (const e of qm.live) {
        e.state = "closed";
        this.counts.closed++;
      }
      qm.live.clear();
      for (const e of qm.inflight) if (e.state === "inflight") e.state = "refused";
      qm.inflight = [];
      qm.closed = true;
    }
    this.call(qm, label, () => (dispose ? qm.q[Symbol.dispose]() : qm.q.close()));
    if (!qm.q.closed) violation(`${label}: the queue is not closed`);
  }

  opSnapshot(qm, r) {
    const label = `${qm.name}.snapshot()`;
    if (qm.closed) return this.expectClosed(qm, label, () => qm.q.snapshot());
    const items = qm.sorted();
    const bad = items.findIndex((e) => !e.jsonable || e.mode === "revoked");
    let snap;
    try {
      snap = this.call(qm, label, () => qm.q.snapshot());
    } catch (err) {
      if (bad < 0) throw err;
      if (!(err instanceof TypeError) || !err.message.includes(`items[${bad}]`))
        violation(`${label} threw ${err.name}: ${err.message}; expected a TypeError naming items[${bad}]`);
      this.reconcile(qm, `after ${label}`);
      return;
    }
    if (bad >= 0) violation(`${label} wrote v${items[bad].n} (${items[bad].kind}), which JSON cannot carry`);
    if (snap.version !== 1 || snap.size !== items.length || snap.items.length !== items.length)
      violation(`${label}: a malformed snapshot`);
    const offset = this.host.wallOffset;
    for (let i = 0; i < items.length; i++) {
      const { value, deadline, id } = snap.items[i];
      const e = items[i];
      if (value !== e.value) violation(`${label}: items[${i}] is not v${e.n}`);
      if (id !== e.id || "id" in snap.items[i] !== (e.id !== undefined))
        violation(`${label}: items[${i}] (v${e.n}) has id ${id}, expected ${e.id}`);
      if (!Number.isInteger(deadline) || deadline < e.deadline + offset || deadline > e.deadline + offset + 2)
        violation(
          `${label}: items[${i}].deadline ${deadline} for v${e.n} due at ${e.deadline} (wall ${e.deadline + offset})`,
        );
    }
    this.reconcile(qm, `after ${label}`);
    if (r.chance(0.6)) this.opRestore(qm, r, snap);
  }

  /** A new queue from a snapshot, read back from JSON as it would be after a restart. */
  opRestore(from, r, snap) {
    if (this.queues.length >= 8) return;
    const data = JSON.parse(JSON.stringify(snap));
    const n = data.items.length;
    const capacity = r.chance(0.3) ? r.range(Math.max(1, n - 1), n + 3) : Infinity;
    const keepAlive = r.chance(0.7);
    const opts = { clock: this.host.clock, keepAlive };
    if (capacity !== Infinity) opts.capacity = capacity;
    const label = `DelayQueue.restore(${from.name}'s snapshot of ${n}, ${JSON.stringify({ capacity, keepAlive })})`;
    let q;
    try {
      q = this.call(undefined, label, () => DelayQueue.restore(data, opts));
    } catch (err) {
      if (n > capacity && err instanceof RangeError && /capacity/.test(err.message)) return;
      throw err;
    }
    if (n > capacity) violation(`${label} built a queue of ${q.size} with capacity ${capacity}`);
    const qm = new QueueModel(this, q, { capacity, keepAlive });
    this.queues.push(qm);
    const t = this.host.now;
    // Converted once with one reading of both clocks (js/memory/clock.js): epoch minus the offset read.
    const low = Math.floor(this.host.wallOffset + t) - t;
    const restored = q.toArray();
    for (let i = 0; i < n; i++) {
      const e = this.makeValue(r, qm);
      e.value = restored[i];
      e.kind = "restored";
      e.probed = false;
      e.jsonable = true;
      e.revoke = null;
      e.state = "pending";
      e.deadline = data.items[i].deadline - low;
      e.id = data.items[i].id;
      e.seq = ++qm.seq;
      qm.entries.set(e.value, e);
      qm.live.add(e);
      const expected = data.items[i].value;
      if (JSON.stringify(restored[i]) !== JSON.stringify(expected))
        violation(`${label}: item ${i} is not what was saved`);
    }
    this.reconcile(qm, `after ${label}`);
  }

  // ---- hostile changes to values already in a queue ------------------------------------

  opMutate(r) {
    const candidates = [];
    for (const qm of this.queues) for (const e of qm.live) if (e.probed && e.mode === "plain") candidates.push(e);
    if (candidates.length === 0) return;
    const e = r.pick(candidates);
    if (e.revoke !== null && r.chance(0.5)) {
      e.revoke();
      e.mode = "revoked";
      e.jsonable = false;
    } else {
      e.mode = r.pick(["thenable", "throws"]);
    }
    this.log(`v${e.n} (in ${e.qm.name}) becomes ${e.mode}`);
  }

  opBadInput(r) {
    const qm = this.pickQueue(r);
    const sm = this.schedulers.find((s) => !s.closed);
    if (qm === undefined || sm === undefined) return;
    const rows = this.badRows ?? (this.badRows = badInputTable({ DelayQueue, Scheduler, init: () => {} }));
    const row = r.pick(
      rows.filter(
        (x) =>
          (x.method.startsWith("DelayQueue#") || x.method.startsWith("Scheduler#")) &&
          x.expect.error !== undefined &&
          !x.label.includes("batch"),
      ),
    );
    const anyHandle = [...qm.live].find((e) => e.handle !== null)?.handle ?? 2 ** 26;
    const anyJob = [...sm.live][0]?.handle ?? 2 ** 26;
    const ctx = { q: qm.q, s: sm.s, h: anyHandle, sh: anyJob };
    const sizeBefore = sm.s.size;
    this.expectBad(qm, `bad input: ${row.method} with ${row.label}`, row.expect.error, row.expect.names, () =>
      row.call(ctx),
    );
    if (sm.s.size !== sizeBefore) violation(`bad input ${row.method} with ${row.label} changed ${sm.name}`);
  }

  // ---- Scheduler calls -----------------------------------------------------------------

  schedOp(r, nested) {
    const open = this.schedulers.filter((s) => !s.closed);
    const sm = r.chance(0.03) ? r.pick(this.schedulers) : open.length ? r.pick(open) : undefined;
    if (sm === undefined) return;
    const op = r.weighted([
      [sm.live.size < MAX_ITEMS ? 10 : 0, "schedule"],
      [3, "scheduleAt"],
      [4, "cancel"],
      [4, "reschedule"],
      [2, "delayOf"],
      [nested ? 1 : 0.3, "close"],
      [1, "stats"],
    ]);
    switch (op) {
      case "schedule":
      case "scheduleAt":
        return this.schedAdd(sm, r, op);
      case "cancel":
      case "reschedule":
      case "delayOf":
        return this.schedHandleOp(sm, r, op);
      case "close":
        return this.schedClose(sm, r.chance(0.3));
      default:
        return this.call(sm, `${sm.name}.stats`, () => sm.s.stats);
    }
  }

  /** This scheduler's wake-up (its host timer), if one runs now; it began at host.now. */
  #wakeOf(sm) {
    const f = this.host.firing;
    return f !== null && sm.timerFn !== null && f.fn === sm.timerFn ? f : null;
  }

  schedAdd(sm, r, method) {
    const n = ++this.jobs;
    const behaviour = r.weighted([
      [10, "ok"],
      [2, "throw"],
      [2, "reject"],
      [1, "hostile thenable"],
    ]);
    const job = { n, sm, deadline: null, seq: -1, handle: null, state: "new", behaviour, wake: null, args: [n, { n }] };
    const fn = (...args) => this.runJob(sm, job, args);
    let label;
    let call;
    const wallAt = Date.now() + this.delay(r) * (r.chance(0.5) ? 1 : 0);
    let bound;
    let delay;
    if (method === "schedule") {
      delay = this.delay(r);
      label = `${sm.name}.schedule(job ${n}:${behaviour}, ${delay})`;
      call = () => sm.s.schedule(fn, delay, ...job.args);
    } else {
      bound = wallAt - this.host.wallOffset;
      label = `${sm.name}.scheduleAt(job ${n}:${behaviour}, ${wallAt})`;
      call = () => sm.s.scheduleAt(fn, wallAt, ...job.args);
    }
    if (sm.closed) return this.expectClosed(sm, label, call);
    const wake = this.#wakeOf(sm);
    let h;
    try {
      h = this.call(sm, label, call);
    } catch (err) {
      if (err === this.host.refusal) {
        sm.refused = true;
        if (sm.s.size !== sm.live.size) violation(`${label} threw the host's error but kept the callback`);
        return;
      }
      throw err;
    }
    if (!Number.isSafeInteger(h) || this.handles.has(h)) violation(`${label} returned ${h}, no fresh handle`);
    this.handles.add(h);
    job.handle = h;
    job.deadline = sm.s.delayOf(h) + this.host.now;
    job.seq = ++sm.seq;
    job.state = "pending";
    job.wake = wake;
    if (method === "schedule") {
      const plain = this.host.now + delay;
      if (wake === null ? job.deadline !== plain : job.deadline < plain || job.deadline <= this.host.now)
        violation(
          `${label}: deadline ${job.deadline}, expected ${plain}${wake ? ` and after this wake-up (${this.host.now})` : ""}`,
        );
    } else {
      if (this.#wallEarly(job.deadline, wallAt, this.host.wallOffset))
        violation(`${label}: deadline ${job.deadline} is before ${bound} (early by the wall clock)`);
      if (wake !== null) {
        // During a wake-up an overdue deadline moves to just after it began (as documented),
        // so FIFO among equal wall-clock deadlines holds among the others only.
        if (job.deadline <= this.host.now) violation(`${label}: due within the running wake-up`);
      } else {
        const last = sm.epochs.get(wallAt);
        if (last !== undefined && job.deadline < last)
          violation(`${label}: before an equal wall-clock deadline scheduled earlier`);
        sm.epochs.set(wallAt, job.deadline);
      }
    }
    sm.live.add(job);
    sm.handles.set(h, job);
    sm.refused = false;
  }

  runJob(sm, job, args) {
    const ran = this.guard(() => {
      const now = this.host.now;
      const who = `${sm.name} job ${job.n}`;
      this.log(`${who} runs`);
      const wake = this.#wakeOf(sm);
      if (wake === null) violation(`${who} ran outside its scheduler's timer callback`);
      if (sm.closed) violation(`${who} ran after close()`);
      if (job.state !== "pending") violation(`${who} ran, but it is ${job.state}`);
      if (job.deadline > now) violation(`${who} ran ${job.deadline - now} ms early`);
      const h = sm.head();
      if (h !== job) violation(`${who} ran before job ${h?.n}, which comes first`);
      if (job.wake !== null && job.wake === wake) violation(`${who} ran in the wake-up it was scheduled in`);
      if (args.length !== job.args.length || args.some((a, i) => a !== job.args[i]))
        violation(`${who} got other arguments`);
      sm.live.delete(job);
      job.state = "ran";
      this.counts.ran++;
      this.maybeReenter(`in ${who}`);
      return true;
    });
    if (ran !== true || job.behaviour === "ok") return undefined;
    const error = new Error(`${sm.name} job ${job.n} failed (as it was told to)`);
    sm.errors.add(error);
    if (job.behaviour === "throw") throw error;
    if (job.behaviour === "reject") return Promise.reject(error);
    return {
      then() {
        throw error;
      },
    };
  }

  onSchedError(sm, e) {
    if (sm.errors.delete(e)) {
      this.log(`${sm.name} onerror: ${e.message}`);
    } else if (e === this.host.refusal) {
      sm.refused = true;
      this.log(`${sm.name} onerror: the host refused a timer`);
    } else {
      violation(`${sm.name} onerror got an error no callback threw: ${e?.stack ?? e}`);
    }
  }

  schedHandleOp(sm, r, op) {
    const own = [...sm.handles.keys()];
    const h = own.length && r.chance(0.7) ? r.pick(own) : r.pick([0, ...NOT_HANDLES, ...this.handles]);
    const delay = this.delay(r);
    const label = `${sm.name}.${op}(${h}${op === "reschedule" ? `, ${delay}` : ""})`;
    const call = () => (op === "reschedule" ? sm.s.reschedule(h, delay) : sm.s[op](h));
    if (!isHandleNumber(h)) return this.expectNotHandle(sm, label, call);
    if (sm.closed) return this.expectClosed(sm, label, call);
    let job = null;
    for (const j of sm.live) if (j.handle === h) job = j;
    const wake = this.#wakeOf(sm);
    if (op === "cancel" && job !== null) {
      sm.live.delete(job);
      job.state = "cancelled";
    }
    const got = this.call(sm, label, call);
    if (op === "cancel") {
      if (got !== (job !== null)) violation(`${label} returned ${got}, expected ${job !== null}`);
    } else if (op === "delayOf") {
      const want = job === null ? undefined : job.deadline - this.host.now;
      if (got !== want) violation(`${label} returned ${got}, expected ${want}`);
    } else {
      if (got !== (job !== null)) violation(`${label} returned ${got}, expected ${job !== null}`);
      if (job !== null) {
        const plain = this.host.now + delay;
        job.deadline = sm.s.delayOf(h) + this.host.now;
        job.seq = ++sm.seq;
        if (wake === null ? job.deadline !== plain : job.deadline < plain || job.deadline <= this.host.now)
          violation(`${label}: deadline ${job.deadline}, expected ${plain}`);
        job.wake = wake;
      }
    }
  }

  schedClose(sm, dispose = false) {
    if (!sm.closed) {
      for (const j of sm.live) j.state = "closed";
      sm.live.clear();
      sm.closed = true;
    }
    this.call(sm, `${sm.name}.${dispose ? "[Symbol.dispose]" : "close"}()`, () =>
      dispose ? sm.s[Symbol.dispose]() : sm.s.close(),
    );
    if (!sm.s.closed) violation(`${sm.name}.close(): not closed`);
  }
}

/** One fuzz run: `seed`, `steps`; `only`: the step indices to run (a shrunk replay). */
export function runFace({ seed, steps = 300, only = null }) {
  return new World(seed, steps).run(only === null ? null : new Set(only));
}

/**
 * A failing run made smaller: the fewest steps (from its seed) that still fail, found by
 * cutting the steps after the failure, then leaving out chunks while it still fails.
 */
export async function shrink(result, { budgetMs = 20_000 } = {}) {
  const t0 = performance.now();
  const seed = result.seed;
  let steps = result.executed.slice(0, result.executed.indexOf(result.failure.step) + 1);
  if (steps.length === 0) steps = result.executed;
  let best = result;
  const fails = async (only) => {
    const res = await runFace({ seed, steps: Math.max(...only, 0) + 1, only });
    return res.ok ? null : res;
  };
  for (let chunk = Math.ceil(steps.length / 2); chunk >= 1 && performance.now() - t0 < budgetMs; ) {
    let removed = false;
    for (let i = 0; i < steps.length && performance.now() - t0 < budgetMs; i += chunk) {
      const candidate = steps.slice(0, i).concat(steps.slice(i + chunk));
      if (candidate.length === 0) continue;
      const res = await fails(candidate);
      if (res !== null) {
        steps = res.executed.slice(0, res.executed.indexOf(res.failure.step) + 1);
        best = res;
        removed = true;
        i -= chunk;
      }
    }
    if (!removed) chunk = Math.floor(chunk / 2);
  }
  return { steps, result: best };
}

/** What a failing run prints: the failure, the replay command, and the trace. */
export function describeFailure(result, shrunk) {
  const steps = shrunk?.steps ?? result.executed;
  const last = Math.max(...steps) + 1;
  const trace = (shrunk?.result ?? result).trace;
  return [
    `FAILED seed ${result.seed} at step ${result.failure.step}: ${result.failure.message}`,
    result.failure.stack ?? "",
    `config: ${JSON.stringify(result.config)}`,
    shrunk
      ? `shrunk to ${steps.length} steps; replay: node tests/fuzz/face.mjs --seed ${result.seed} --steps ${last} --only ${steps.join(",")}`
      : `replay: node tests/fuzz/face.mjs --seed ${result.seed} --steps ${result.failure.step + 1}`,
    "trace (last calls):",
    ...trace.slice(-120),
  ].join("\n");
}

// Command line: one run.
if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name, dflt) => {
    const i = process.argv.indexOf(`--${name}`);
    return i < 0 ? dflt : process.argv[i + 1];
  };
  const seed = Number(arg("seed", "1"));
  const steps = Number(arg("steps", "300"));
  const only = arg("only", null)?.split(",").map(Number) ?? null;
  const result = await runFace({ seed, steps, only });
  if (result.ok) {
    console.log(
      `seed ${seed}: ${result.executed.length} steps, ${result.calls} calls, ok ${JSON.stringify(result.counts)}`,
    );
    if (process.argv.includes("--trace")) console.log(result.trace.join("\n"));
  } else {
    const shrunk = only === null ? await shrink(result) : null;
    console.log(describeFailure(result, shrunk));
    process.exitCode = 1;
  }
}
