// Fuzzing the snapshot decoder (DelayQueue.restore, js/memory/snapshot.js) with arbitrary and
// mutated input: random JSON-like trees; valid snapshots with one to three mutations (fields
// dropped or retyped, holes, values JSON cannot carry, cycles, deep nesting, class instances,
// Proxies, revoked Proxies, getters that throw, getters and Proxy traps that answer
// differently on each read, a huge or lying length); and valid snapshots' JSON text with
// bytes changed, parsed back.
//
// The oracle, for every input:
//   - restore() returns a queue, or throws a TypeError or RangeError whose message starts
//     "DelayQueue.restore():" (or, for a hostile input, exactly the error its own getter or
//     trap threw); nothing else (no stack overflow, no engine error naming nothing);
//   - a queue it returns holds every item it read, exactly once each, in deadline order
//     with FIFO ties (never half the snapshot, never more than the capacity), and a snapshot
//     of it gives each deadline back, never earlier;
//   - a plain-data input is not changed.
//
//   node tests/fuzz/snapshot.mjs [--seed N] [--seconds S]

import { DelayQueue } from "tarry-queue";
import { freshSeed, Random } from "./random.mjs";

const WALL = 1_750_000_000_000; // Date.now() during a run: the clocks stand still
const clock = () => 0;

const NUMBERS = [
  0,
  -0,
  1,
  -1,
  1.5,
  Number.NaN,
  Infinity,
  -Infinity,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  1e308,
  -1e308,
  5e-324,
  WALL,
  WALL + 0.5,
  WALL - 86_400_000,
  WALL + 1e12,
  2 ** 31 - 1,
  2 ** 32,
  1e15,
  2 ** 26,
  2 ** 26 + 1,
];
const STRINGS = ["", "1", "version", "items", "NaN", "__proto__", "x".repeat(300), "\u0000", "é", "👀"];
const KEYS = ["version", "size", "items", "value", "deadline", "__proto__", "toJSON", "then", "constructor", "a", "0"];

class Point {
  constructor() {
    this.x = 1;
  }
}

/** A generator of inputs for one seed; `own` collects the errors hostile inputs throw. */
class Inputs {
  constructor(r) {
    this.r = r;
    this.own = new Set();
    this.hostile = false;
    /** Values handed out by index reads of a watched items array (hostile inputs). */
    this.readItems = null;
    /** Ids: their own draws, so that the other draws stay as they were. */
    this.ids = r.fork("ids");
  }

  number() {
    const r = this.r;
    return r.chance(0.7) ? r.pick(NUMBERS) : WALL + (r.float() - 0.5) * 1e7;
  }

  /** A plain JSON-like value, nested up to `depth`. */
  json(depth = 0) {
    const r = this.r;
    switch (r.int(depth > 3 ? 4 : 7)) {
      case 0:
        return r.pick([null, true, false]);
      case 1:
        return r.chance(0.8) ? Math.round(r.float() * 1000) : r.pick([0.5, -7, 1e21, 123456789]);
      case 2:
        return r.pick(STRINGS);
      case 3:
        return `s${r.int(1000)}`;
      case 4:
        return Array.from({ length: r.int(4) }, () => this.json(depth + 1));
      default: {
        const o = {};
        for (let i = r.int(4); i > 0; i--) o[r.pick(KEYS)] = this.json(depth + 1);
        return o;
      }
    }
  }

  /** Anything at all, hostile values included. */
  any(depth = 0) {
    const r = this.r;
    switch (r.int(12)) {
      case 0:
        return undefined;
      case 1:
        return this.number();
      case 2:
        return this.special();
      case 3:
        return this.snapshotLike(depth);
      default:
        return this.json(depth);
    }
  }

  /** Values JSON cannot carry, or that are hostile to read. */
  special() {
    const r = this.r;
    this.hostile = true;
    switch (r.int(16)) {
      case 0:
        return () => 1;
      case 1:
        return Symbol("s");
      case 2:
        return 10n;
      case 3:
        return new Date(0);
      case 4:
        return new Map([[1, 2]]);
      case 5:
        return new Point();
      case 6: {
        const o = { a: {} };
        o.a.back = o;
        return o;
      }
      case 7: {
        let deep = { leaf: 1 };
        for (let i = r.pick([70, 1000, 100_000]); i > 0; i--) deep = { d: deep };
        return deep;
      }
      case 8: {
        let deep = [1];
        for (let i = r.pick([70, 100_000]); i > 0; i--) deep = [deep];
        return deep;
      }
      case 9: {
        const { proxy, revoke } = Proxy.revocable({}, {});
        revoke();
        return proxy;
      }
      case 10: {
        const error = new Error("a getter of the input threw");
        this.own.add(error);
        return {
          get boom() {
            throw error;
          },
        };
      }
      case 11: {
        const error = new Error("a Proxy trap of the input threw");
        this.own.add(error);
        return new Proxy(
          {},
          {
            ownKeys() {
              throw error;
            },
            getPrototypeOf() {
              throw error;
            },
          },
        );
      }
      case 12: {
        // A getter that answers differently each time.
        let n = 0;
        return {
          get v() {
            return n++ % 2 === 0 ? 1 : () => 1;
          },
        };
      }
      case 13:
        return Object.create(null);
      case 14:
        // biome-ignore lint/suspicious/noSparseArray: a hole is what this value is about
        return [1, , 3];
      default:
        return { toJSON: () => "json" };
    }
  }

  snapshotLike(depth) {
    const r = this.r;
    const n = r.int(4);
    return {
      version: r.chance(0.8) ? 1 : this.any(depth + 1),
      size: r.chance(0.7) ? n : this.any(depth + 1),
      items: Array.from({ length: n }, () => ({
        value: depth < 3 && r.chance(0.3) ? this.any(depth + 1) : this.json(depth + 1),
        deadline: this.number(),
      })),
    };
  }

  /** A valid snapshot: JSON-able values, deadlines around now, in order or not. */
  valid() {
    const r = this.r;
    const n = r.pick([0, 1, 2, 3, 5, 8, 20]);
    const items = Array.from({ length: n }, () => ({
      value: r.chance(0.2) ? `v${r.int(100)}` : this.json(1), // null too: a value like any other
      deadline: r.chance(0.3) ? WALL + r.pick([-5, 0, 0, 1, 2]) : this.number(),
    }));
    // Ids on some items of some snapshots, all different (the longest an id may be, too).
    if (this.ids.chance(0.4)) {
      items.forEach((it, i) => {
        if (this.ids.chance(0.6))
          it.id = this.ids.pick([`order:${i}`, `${"x".repeat(505)}-${String(i).padStart(6, "0")}`, `ü${i}😀`]);
      });
    }
    return { version: 1, size: n, items };
  }

  /**
   * One to three changes to a valid snapshot. A change can leave something hostile where
   * the next one reads (a revoked Proxy, a throwing getter): the changes stop there. The
   * lying getters and items come last, so that no change reads through them.
   */
  mutate(s) {
    const r = this.r;
    let lie = false;
    let lyingItems = false;
    let huge = false;
    try {
      for (let m = r.range(1, 3); m > 0; m--) {
        const items = Array.isArray(s.items) ? s.items : [];
        const n = items.length;
        const i = n ? r.int(n) : 0;
        const at = items[i];
        const item = n !== 0 && at !== null && typeof at === "object" && !Array.isArray(at) ? at : null;
        switch (r.int(16)) {
          case 0:
            s.version = this.any(1);
            break;
          case 1:
            delete s[r.pick(["version", "size", "items"])];
            break;
          case 2:
            s.size = r.chance(0.5) ? n + r.pick([-1, 1, 2 ** 30]) : this.any(1);
            break;
          case 3:
            s.items = this.any(1);
            break;
          case 4:
            if (n) items[i] = this.any(1);
            break;
          case 5:
            if (item) delete item[r.pick(["value", "deadline"])];
            break;
          case 6:
            if (item) item.deadline = r.chance(0.5) ? this.number() : this.any(1);
            break;
          case 7:
            if (item) item.value = this.special();
            break;
          case 8:
            if (n) delete items[i];
            break;
          case 9:
            items.reverse();
            break;
          case 10:
            lyingItems = true;
            break;
          case 11:
            lie = true;
            break;
          case 12:
            huge = true;
            break;
          case 13:
            if (item) items[i] = new Proxy(item, {});
            break;
          case 14:
            s.extra = this.any(1);
            break;
          default:
            if (item) item.value = this.json(0) ?? 0;
        }
      }
      // An id that is none, or one that another item has.
      const items = Array.isArray(s.items) ? s.items : [];
      const at = items.length ? items[this.ids.int(items.length)] : null;
      if (at !== null && typeof at === "object" && !Array.isArray(at) && this.ids.chance(0.15)) {
        const other = items.find((x) => x !== at && typeof x?.id === "string");
        at.id =
          other !== undefined && this.ids.chance(0.4)
            ? other.id
            : this.ids.pick([5, null, "", "x".repeat(513), "lone\uD800", { id: "a" }, ["a"], true]);
      }
      if (lyingItems && Array.isArray(s.items)) s.items = this.lyingItems(s.items);
      if (huge) s.items = this.hugeItems();
    } catch {
      // Something hostile is in the way of further changes.
    }
    if (lie) this.lyingFields(s);
    return s;
  }

  /** An items array behind a Proxy whose length answers differently on each read. */
  lyingItems(items) {
    this.hostile = true;
    const r = this.r;
    // The length grows after the first read, shrinks, or answers at random.
    const mode = r.int(3);
    const lengths =
      mode === 0
        ? [r.int(2), items.length]
        : mode === 1
          ? [items.length, r.int(items.length + 1)]
          : [items.length, r.int(10), items.length + r.range(1, 5), 0];
    let reads = 0;
    const read = (this.readItems = []);
    return new Proxy(items, {
      get(t, k, recv) {
        if (k === "length")
          return mode < 2 ? lengths[Math.min(reads++, 1)] : r.chance(0.5) ? lengths[reads++ % 4] : t.length;
        const v = Reflect.get(t, k, recv);
        if (typeof k === "string" && /^\d+$/.test(k)) {
          try {
            read.push(v?.value);
          } catch {
            read.push(undefined); // a revoked Proxy as the item: the decoder refuses it
          }
        }
        return v;
      },
    });
  }

  /** version, size or items as getters: one throws, or answers differently each time. */
  lyingFields(s) {
    this.hostile = true;
    const r = this.r;
    const key = r.pick(["version", "size", "items"]);
    const real = s[key];
    let n = 0;
    const error = new Error(`the ${key} getter threw`);
    this.own.add(error);
    const mode = r.int(3);
    Object.defineProperty(s, key, {
      enumerable: true,
      configurable: true,
      get() {
        n++;
        if (mode === 0) throw error;
        if (mode === 1) return n === 1 ? real : Array.isArray(real) ? [] : 0;
        return real;
      },
    });
  }

  /** An items array that says it is enormous (without allocating it). */
  hugeItems() {
    this.hostile = true;
    return new Proxy([], {
      get(t, k, recv) {
        return k === "length" ? 2 ** 31 : Reflect.get(t, k, recv);
      },
    });
  }

  /** A valid snapshot's JSON text with a few bytes changed, parsed back (or a valid one). */
  corruptedText() {
    const r = this.r;
    let text = JSON.stringify(this.valid());
    for (let m = r.range(1, 3); m > 0; m--) {
      const i = r.int(text.length);
      switch (r.int(4)) {
        case 0:
          text =
            text.slice(0, i) + r.pick(['"', "}", "]", ",", "0", "-", "e", "9", "null", "1e999"]) + text.slice(i + 1);
          break;
        case 1:
          text = text.slice(0, i) + text.slice(i + r.range(1, 8));
          break;
        case 2:
          text = text.slice(0, i) + text.slice(i - r.int(10), i) + text.slice(i);
          break;
        default:
          text = text.replace(
            /"deadline":[^,}]+/,
            `"deadline":${r.pick(["1e999", "-0", '"1"', "null", "[]", "2e308"])}`,
          );
      }
    }
    try {
      return JSON.parse(text);
    } catch {
      return this.valid();
    }
  }

  next() {
    const r = this.r;
    this.hostile = false;
    this.readItems = null;
    switch (r.int(10)) {
      case 0:
      case 1:
        return this.any();
      case 2:
      case 3:
        return this.corruptedText();
      case 4:
        return this.valid();
      default:
        return this.mutate(this.valid());
    }
  }
}

/** The order restore() must give: by converted deadline, ties in snapshot order. */
function expectedOrder(items) {
  return items
    .map((it, i) => ({ it, i, d: it.deadline - WALL }))
    .sort((a, b) => (a.d < b.d ? -1 : a.d > b.d ? 1 : a.i - b.i))
    .map((x) => x.it);
}

/** Checks one input; returns a problem, or null. Counts the outcome in `tally`. */
function check(input, gen, r, tally) {
  const plain = !gen.hostile;
  let before;
  if (plain) {
    try {
      before = JSON.stringify(input);
    } catch {
      before = undefined;
    }
  }
  const capacity = r.chance(0.2) ? r.range(1, 6) : Infinity;
  const opts = { clock };
  if (capacity !== Infinity) opts.capacity = capacity;
  let q;
  try {
    q = DelayQueue.restore(input, opts);
  } catch (e) {
    if (gen.own.has(e)) {
      tally.own++;
      return null;
    }
    if ((e instanceof TypeError || e instanceof RangeError) && e.message.startsWith("DelayQueue.restore():")) {
      tally.refused++;
      if (before !== undefined && JSON.stringify(input) !== before) return "restore() changed its input";
      return null;
    }
    return `threw ${e?.name}: ${String(e?.message).slice(0, 200)}`;
  }
  tally.restored++;
  try {
    if (before !== undefined && JSON.stringify(input) !== before) return "restore() changed its input";
    const got = q.toArray();
    if (got.length > capacity) return `a queue of capacity ${capacity} holds ${got.length}`;
    if (gen.readItems !== null) {
      // A lying input: every item the decoder read by index must be in the queue, once.
      // (It may read an index more than once: count each value by the most times it was read.)
      const count = (xs) => {
        const m = new Map();
        for (const v of xs) m.set(v, (m.get(v) ?? 0) + 1);
        return m;
      };
      const held = count(got);
      for (const v of new Set(gen.readItems)) {
        if (v !== undefined && !held.has(v))
          return `an item it read (${JSON.stringify(v)}) is not in the queue: half a snapshot`;
      }
      if (got.length > gen.readItems.length)
        return `the queue holds ${got.length} items; it read ${gen.readItems.length}`;
      return null;
    }
    const items = input.items;
    if (got.length !== items.length) return `restored ${got.length} of ${items.length} items`;
    const want = expectedOrder(items);
    for (let i = 0; i < want.length; i++) {
      if (got[i] !== want[i].value)
        return `item ${i}: ${JSON.stringify(got[i])}, expected ${JSON.stringify(want[i].value)}`;
    }
    // And back: every deadline is given back, never earlier (rounded up to whole ms). Not for
    // a hostile input: its getters may answer otherwise when snapshot() reads them again.
    if (!plain) return null;
    const again = q.snapshot();
    // Each item keeps its id (and one without has none), and the id names it.
    for (let i = 0; i < want.length; i++) {
      const id = want[i].id;
      if (again.items[i].id !== id) return `item ${i} came back with id ${again.items[i].id}, expected ${id}`;
      if (id !== undefined && q.delayOf(id) === undefined) return `id ${id.slice(0, 20)} names no item after restore`;
    }
    const sorted = items.map((it) => it.deadline).sort((a, b) => a - b);
    for (let i = 0; i < sorted.length; i++) {
      const e = again.items[i].deadline;
      if (Math.abs(sorted[i]) < 2 ** 50 && (e < sorted[i] || e > Math.ceil(sorted[i]) + 2))
        return `deadline ${sorted[i]} came back as ${e}`;
    }
    return null;
  } finally {
    q.close();
  }
}

/**
 * Runs inputs from `seed` for `ms` milliseconds (or `cases` inputs). Resolves to
 * { cases, restored, refused, own, failures: [text] }.
 */
export async function runSnapshotFuzz({ seed, ms = 2000, cases = Infinity }) {
  const r = new Random(seed);
  const gen = new Inputs(r.fork("inputs"));
  const tally = { cases: 0, restored: 0, refused: 0, own: 0, failures: [] };
  const realNow = Date.now;
  Date.now = () => WALL;
  const until = performance.now() + ms;
  try {
    while (tally.cases < cases && (tally.cases & 63 || performance.now() < until)) {
      const input = gen.next();
      const problem = check(input, gen, r, tally);
      tally.cases++;
      if (problem !== null) {
        let shown;
        try {
          shown = JSON.stringify(input, (_, v) => (typeof v === "bigint" ? `${v}n` : v))?.slice(0, 300);
        } catch {
          shown = "(an input JSON cannot show)";
        }
        tally.failures.push(`seed ${seed}, input ${tally.cases}: ${problem}\n    input: ${shown}`);
        if (tally.failures.length >= 20) break;
      }
      if ((tally.cases & 1023) === 0) await new Promise((res) => setImmediate(res));
    }
  } finally {
    Date.now = realNow;
  }
  return tally;
}

// Command line.
if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name, dflt) => {
    const i = process.argv.indexOf(`--${name}`);
    return i < 0 ? dflt : process.argv[i + 1];
  };
  const seed = Number(arg("seed", String(freshSeed())));
  const t = await runSnapshotFuzz({ seed, ms: Number(arg("seconds", "10")) * 1000 });
  console.log(
    `snapshot decoder, seed ${seed}: ${t.cases} inputs, ${t.restored} restored, ${t.refused} refused, ${t.own} threw their own error`,
  );
  for (const f of t.failures) console.log(`FAILED ${f}`);
  if (t.failures.length) process.exitCode = 1;
}
