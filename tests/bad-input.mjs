// Bad input everywhere: ONE table of every public call × bad argument, as data, and the
// sweep that runs it. Each runtime's runner imports this module and hands it the package's
// classes as that runtime loads them: Node 20 and 24 (tests/js/bad-input.test.mjs), Deno
// (tests/deno/bad-input.test.ts), Chromium (tests/browser/bad-input.test.mjs) and workerd
// (tests/workerd/bad-input.test.mjs). The JS-face fuzzer (tests/fuzz/face.mjs) draws rows
// from it too, between its random calls. No runtime-specific import here.
//
// Every row names a call and what it must do:
//   - throw (or, for a call that returns a Promise, reject with: such a call never throws) a
//     TypeError or RangeError whose message names the argument, and change nothing: size,
//     items in order, deadlines and stats (timer arms included), compared before and after;
//   - or, for a value that is no mistake but must not touch anything (a number that is no
//     handle, a drain of at most -0 items), return what the row says and change nothing;
//   - or reject with an already-aborted signal's reason, adding nothing.
// The queue and scheduler read a clock that stands still, so every deadline is compared exactly.
// The durable engines' bad arguments are cases of the engine contract (tests/contract), run
// against RedisDelayQueue and DurableDelayQueue (in workerd too).

// biome-ignore-all lint/suspicious/noThenProperty: thenables are bad values this table offers

const CLOCK_MS = 1000;

/** A Proxy that was revoked: every operation on it throws a TypeError. */
function revoked(target = {}) {
  const { proxy, revoke } = Proxy.revocable(target, {});
  revoke();
  return proxy;
}

/** Arguments that are not numbers at all: a TypeError wherever a number is wanted. */
function notNumbers() {
  return [
    ["undefined", undefined],
    ["null", null],
    ['"5"', "5"],
    ['""', ""],
    ["true", true],
    ["5n", 5n],
    ["Symbol()", Symbol("s")],
    ["{}", {}],
    ["[5]", [5]],
    ["new Number(5)", new Number(5)],
    [
      "{ valueOf() { throw } }",
      {
        valueOf() {
          throw new Error("valueOf must not be called");
        },
      },
    ],
    ["() => 5", () => 5],
    ["a revoked Proxy", revoked()],
    ["a Date", new Date(5)],
  ];
}

const nonFinite = () => [
  ["NaN", Number.NaN],
  ["Infinity", Infinity],
  ["-Infinity", -Infinity],
];

/** Whole numbers that a queue never gives out as handles: a call with one finds nothing, no error. */
const noHandles = () => [
  ["-0", -0],
  ["0", 0],
  ["2^26-1", 2 ** 26 - 1],
  ["2^53-1", 2 ** 53 - 1],
];

/** Numbers no call returns as a handle (not whole numbers from 0 to 2^53-1): a TypeError. */
const notHandles = () => [
  ["NaN", Number.NaN],
  ["Infinity", Infinity],
  ["-Infinity", -Infinity],
  ["-1", -1],
  ["1.5", 1.5],
  ["2^53", 2 ** 53],
  ["2^53+1", 2 ** 53 + 1],
  ["Number.MAX_VALUE", Number.MAX_VALUE],
  ["2^26 + 0.5", 2 ** 26 + 0.5],
];

/**
 * Values no queue takes: undefined (what poll() returns for "no item") and thenables. (null
 * is a value like any other, on every engine.)
 */
function badValues() {
  const throwingThen = {
    get then() {
      throw new Error("then getter");
    },
  };
  const trapThrows = new Proxy(
    {},
    {
      get() {
        throw new Error("get trap");
      },
    },
  );
  const fnWithThen = Object.assign(() => {}, { then() {} });
  return [
    ["undefined", undefined],
    ["{ then() {} }", { then() {} }],
    ["a Promise", Promise.resolve(1)],
    ["a function with then", fnWithThen],
    ["an object whose then getter throws", throwingThen],
    ["a Proxy whose get trap throws", trapThrows],
    ["a revoked Proxy", revoked()],
  ];
}

/** Strings that are no id: empty, too long, not well-formed (a RangeError naming the id). */
const badIds = () => [
  ['""', ""],
  ["513 characters", "x".repeat(513)],
  ["a lone high surrogate", "order\uD800"],
  ["a lone low surrogate", "\uDC00order"],
];

/** What is not a deadline: a TypeError, or a RangeError for a non-finite time. */
function badDeadlines() {
  const dateProxy = new Proxy(new Date(), {});
  return [
    ...notNumbers()
      .filter(([label]) => label !== "a Date")
      .map(([l, v]) => [l, v, "TypeError"]),
    ["{ getTime: () => 5 }", { getTime: () => 5 }, "TypeError"],
    ["a Proxy of a Date", dateProxy, "TypeError"],
    ...nonFinite().map(([l, v]) => [l, v, "RangeError"]),
    ["an invalid Date", new Date(Number.NaN), "RangeError"],
  ];
}

/** What is not an options bag. */
function notObjects() {
  return [
    ["null", null],
    ["5", 5],
    ['"x"', "x"],
    ["true", true],
    ["5n", 5n],
    ["Symbol()", Symbol("o")],
    ["a revoked Proxy", revoked()],
  ];
}

/** What is not an AbortSignal. */
function badSignals() {
  return [
    ["null", null],
    ["5", 5],
    ['"abort"', "abort"],
    ["{}", {}],
    ["an AbortController", new AbortController()],
    ["an EventTarget", new EventTarget()],
    ['{ aborted: "no", addEventListener() {} }', { aborted: "no", addEventListener() {} }],
    ["{ aborted: false }", { aborted: false }],
    ["a revoked Proxy", revoked()],
  ];
}

/** Signals already aborted: the wait rejects with the reason (an AbortError when none). */
function abortedSignals() {
  const reason = new Error("aborted before the call");
  const duck = { aborted: true, addEventListener() {}, removeEventListener() {} };
  return [
    ["AbortSignal.abort(reason)", () => AbortSignal.abort(reason), (e) => e === reason],
    ["AbortSignal.abort()", () => AbortSignal.abort(), (e) => e?.name === "AbortError"],
    ["an aborted duck-typed signal", () => duck, (e) => e?.name === "AbortError"],
  ];
}

/** An options bag whose getter throws: its own error comes out, unchanged, and nothing changes. */
function ownError(key) {
  const error = new Error(`the ${key} getter threw`);
  return [
    {
      get [key]() {
        throw error;
      },
    },
    error,
  ];
}

/** Sources init() cannot load from. */
function badSources() {
  return [
    ["null", null],
    ["5", 5],
    ["{}", {}],
    ["true", true],
    ["Symbol()", Symbol("src")],
    ["a revoked Proxy", revoked()],
  ];
}

/** Snapshots restore() refuses as malformed (a TypeError naming what is wrong). */
function badSnapshots() {
  const item = (value, deadline = 1) => ({ version: 1, size: 1, items: [{ value, deadline }] });
  return [
    ["undefined", undefined, /snapshot/],
    ["null", null, /snapshot/],
    ["5", 5, /snapshot/],
    ["an array", [], /snapshot/],
    ["a revoked Proxy", revoked(), /snapshot/],
    ["{}", {}, /version/],
    ["version 2", { version: 2, size: 0, items: [] }, /version/],
    ['version "1"', { version: "1", size: 0, items: [] }, /version/],
    ["size -1", { version: 1, size: -1, items: [] }, /size/],
    ["size 1.5", { version: 1, size: 1.5, items: [] }, /size/],
    ["a truncated one", { version: 1, size: 2, items: [{ value: 1, deadline: 1 }] }, /truncated|size/],
    ["items not an array", { version: 1, size: 0, items: {} }, /items/],
    ["items a revoked Proxy", { version: 1, size: 0, items: revoked([]) }, /items/],
    ["items[0] null", { version: 1, size: 1, items: [null] }, /items\[0\]/],
    ["items[0] a revoked Proxy", { version: 1, size: 1, items: [revoked()] }, /items\[0\]/],
    ["a NaN deadline", item(1, Number.NaN), /items\[0\]\.deadline/],
    ['a deadline "1"', item(1, "1"), /items\[0\]\.deadline/],
    ["a missing value", { version: 1, size: 1, items: [{ deadline: 1 }] }, /items\[0\]\.value/],
    ["a function value", item(() => 1), /items\[0\]\.value/],
    ["a value holding a revoked Proxy", item({ a: revoked() }), /items\[0\]\.value/],
    ["a revoked Proxy value", item(revoked()), /items\[0\]\.value/],
    ["an id 5", { version: 1, size: 1, items: [{ id: 5, value: 1, deadline: 1 }] }, /items\[0\]\.id/],
    ['an id ""', { version: 1, size: 1, items: [{ id: "", value: 1, deadline: 1 }] }, /items\[0\]\.id/],
    [
      "an id with a lone surrogate",
      { version: 1, size: 1, items: [{ id: "\uD800", value: 1, deadline: 1 }] },
      /items\[0\]\.id/,
    ],
    [
      "two items with one id",
      {
        version: 1,
        size: 2,
        items: [
          { id: "a", value: 1, deadline: 1 },
          { id: "a", value: 2, deadline: 2 },
        ],
      },
      /items\[1\]\.id .* items\[0\]/,
    ],
  ];
}

const names = (name) => new RegExp(`\\b${name.replace(/[[\]]/g, "\\$&")}`);
const throws = (type, name) => ({ error: type, names: names(name) });

/**
 * The table: [method, label, call(ctx), expect]. `ctx` holds the package's classes (`api`),
 * a queue `q` with items and a waiting take, its handle `h`, a scheduler `s` with a callback
 * `sh`.
 */
export function table(api) {
  const rows = [];
  const row = (method, label, call, expect) => rows.push({ method, label, call, expect });
  const { DelayQueue, Scheduler } = api;

  // ---- DelayQueue ----------------------------------------------------------------------
  for (const [l, v] of badValues()) {
    row("DelayQueue#offer", `value ${l}`, ({ q }) => q.offer(v, 1), throws("TypeError", "value"));
    row("DelayQueue#add", `value ${l}`, ({ q }) => q.add(v, 1), throws("TypeError", "value"));
    row("DelayQueue#put", `value ${l}`, ({ q }) => q.put(v, 1), throws("TypeError", "value"));
    row("DelayQueue#offerAt", `value ${l}`, ({ q }) => q.offerAt(v, 0), throws("TypeError", "value"));
    row(
      "DelayQueue#offerMany",
      `values [1, ${l}]`,
      ({ q }) => q.offerMany([1, v], 1),
      throws("TypeError", "values[1]"),
    );
  }
  // Ids: offer's `{ id }` (and add's, offerAt's, put's), offerMany's `{ ids }`.
  const idCalls = [
    ["DelayQueue#offer", (ctx, o) => ctx.q.offer("x", 1, o)],
    ["DelayQueue#add", (ctx, o) => ctx.q.add("x", 1, o)],
    ["DelayQueue#offerAt", (ctx, o) => ctx.q.offerAt("x", 0, o)],
    ["DelayQueue#put", (ctx, o) => ctx.q.put("x", 1, o)],
  ];
  for (const [method, call] of idCalls) {
    for (const [l, v] of notObjects())
      row(method, `options ${l}`, (ctx) => call(ctx, v), throws("TypeError", "options"));
    for (const [l, v] of [
      ["5", 5],
      ["null", null],
      ["{}", {}],
      ["Symbol()", Symbol("id")],
      ["a String object", new String("x")],
    ]) {
      row(method, `id ${l}`, (ctx) => call(ctx, { id: v }), throws("TypeError", "options\\.id"));
    }
    for (const [l, v] of badIds())
      row(method, `id ${l}`, (ctx) => call(ctx, { id: v }), throws("RangeError", "options\\.id"));
    // ifExists: with an id an item has ("kept"), the offer must change nothing either.
    for (const [l, v] of [
      ["5", 5],
      ["null", null],
      ["a String object", new String("keep")],
    ])
      row(
        method,
        `ifExists ${l}`,
        (ctx) => call(ctx, { id: "kept", ifExists: v }),
        throws("TypeError", "options\\.ifExists"),
      );
    for (const [l, v] of [
      ['"merge"', "merge"],
      ['"Keep"', "Keep"],
      ['""', ""],
    ])
      row(
        method,
        `ifExists ${l}`,
        (ctx) => call(ctx, { id: "kept", ifExists: v }),
        throws("RangeError", "options\\.ifExists"),
      );
    row(method, "options { idd }", (ctx) => call(ctx, { idd: "a" }), {
      error: "TypeError",
      names: /options\.idd is not an option of .*; did you mean id\?/,
    });
  }
  for (const [l, v] of [
    ['"ab"', "ab"],
    ["null", null],
    ["a Set", new Set(["a"])],
    ["a revoked Proxy", revoked([])],
  ]) {
    row(
      "DelayQueue#offerMany",
      `ids ${l}`,
      ({ q }) => q.offerMany(["x"], 1, { ids: v }),
      throws("TypeError", "options\\.ids"),
    );
  }
  row(
    "DelayQueue#offerMany",
    'ifExists "merge"',
    ({ q }) => q.offerMany(["x"], 1, { ids: ["kept"], ifExists: "merge" }),
    throws("RangeError", "options\\.ifExists"),
  );
  row(
    "DelayQueue#offerMany",
    "ifExists 1, no ids",
    ({ q }) => q.offerMany(["x"], 1, { ifExists: 1 }),
    throws("TypeError", "options\\.ifExists"),
  );
  row(
    "DelayQueue#offerMany",
    "ids too few",
    ({ q }) => q.offerMany(["x", "y"], 1, { ids: ["a"] }),
    throws("RangeError", "options\\.ids"),
  );
  row(
    "DelayQueue#offerMany",
    "ids[1] 5",
    ({ q }) => q.offerMany(["x", "y"], 1, { ids: ["a", 5] }),
    throws("TypeError", "options\\.ids[1]"),
  );
  for (const [l, v] of badIds()) {
    row(
      "DelayQueue#offerMany",
      `ids[1] ${l}`,
      ({ q }) => q.offerMany(["x", "y"], 1, { ids: ["a", v] }),
      throws("RangeError", "options\\.ids[1]"),
    );
  }
  row("DelayQueue#offerMany", "options { id }", ({ q }) => q.offerMany(["x"], 1, { id: "a" }), {
    error: "TypeError",
    names: /options\.id is not an option of offerMany\(\); did you mean ids\?/,
  });
  row(
    "DelayQueue#offerMany",
    "a batch with ids larger than the room left",
    ({ q }) =>
      q.offerMany(
        Array.from({ length: 20 }, (_, i) => i),
        1,
        { ids: Array.from({ length: 20 }, (_, i) => `n${i}`) },
      ),
    { error: "RangeError", names: /batch|room/ },
  );
  const msCalls = [
    ["DelayQueue#offer", "delayMs", (ctx, x) => ctx.q.offer("x", x)],
    ["DelayQueue#add", "delayMs", (ctx, x) => ctx.q.add("x", x)],
    ["DelayQueue#put", "delayMs", (ctx, x) => ctx.q.put("x", x)],
    ["DelayQueue#reschedule", "delayMs", (ctx, x) => ctx.q.reschedule(ctx.h, x)],
    ["DelayQueue#offerMany", "delays", (ctx, x) => ctx.q.offerMany(["x"], x)],
    ["DelayQueue#offerMany", "delays[1]", (ctx, x) => ctx.q.offerMany(["x", "y"], [1, x])],
    ["DelayQueue#offerMany", "delays[0]", (ctx, x) => ctx.q.offerMany(["x"], Float64Array.of(x))],
    ["DelayQueue#take", "timeout", (ctx, x) => ctx.q.take({ timeout: x })],
    ["Scheduler#schedule", "delayMs", (ctx, x) => ctx.s.schedule(() => {}, x)],
    ["Scheduler#reschedule", "delayMs", (ctx, x) => ctx.s.reschedule(ctx.sh, x)],
  ];
  for (const [method, arg, call] of msCalls) {
    const typed = method === "DelayQueue#offerMany" && arg === "delays[0]"; // a Float64Array holds numbers only
    if (!typed) {
      for (const [l, v] of notNumbers()) {
        // offerMany's `delays` may be an array; [5] is one then (a length mismatch, below).
        if (arg === "delays" && l === "[5]") continue;
        // take({ timeout: undefined }) is a take without a timeout.
        if (arg === "timeout" && v === undefined) continue;
        row(method, `${arg} ${l}`, (ctx) => call(ctx, v), throws("TypeError", arg));
      }
    }
    for (const [l, v] of nonFinite()) row(method, `${arg} ${l}`, (ctx) => call(ctx, v), throws("RangeError", arg));
  }
  for (const [l, v] of [
    ["-1", -1],
    ["-5", -5],
    ["-Number.MIN_VALUE", -Number.MIN_VALUE],
  ]) {
    row(
      "DelayQueue#take",
      `timeout ${l}`,
      ({ q }) => q.take({ timeout: v }),
      throws("RangeError", "options\\.timeout"),
    );
  }
  row("DelayQueue#offerMany", "values not an array", ({ q }) => q.offerMany("ab", 1), throws("TypeError", "values"));
  row(
    "DelayQueue#offerMany",
    "values an array-like",
    ({ q }) => q.offerMany({ length: 1, 0: "x" }, 1),
    throws("TypeError", "values"),
  );
  row("DelayQueue#offerMany", "values a Set", ({ q }) => q.offerMany(new Set(["x"]), 1), throws("TypeError", "values"));
  row(
    "DelayQueue#offerMany",
    "values a revoked Proxy",
    ({ q }) => q.offerMany(revoked([]), 1),
    throws("TypeError", "values"),
  );
  row("DelayQueue#offerMany", "values undefined", ({ q }) => q.offerMany(undefined, 1), throws("TypeError", "values"));
  row(
    "DelayQueue#offerMany",
    "delays too few",
    ({ q }) => q.offerMany(["x", "y"], [1]),
    throws("RangeError", "delays"),
  );
  row(
    "DelayQueue#offerMany",
    "delays a Float32Array",
    ({ q }) => q.offerMany(["x"], Float32Array.of(1)),
    throws("TypeError", "delays"),
  );
  row(
    "DelayQueue#offerMany",
    "delays a revoked Proxy",
    ({ q }) => q.offerMany(["x"], revoked([])),
    throws("TypeError", "delays"),
  );
  row(
    "DelayQueue#offerMany",
    "a batch larger than the room left",
    ({ q }) =>
      q.offerMany(
        Array.from({ length: 20 }, (_, i) => i),
        1,
      ),
    { error: "RangeError", names: /batch|room/ },
  );
  for (const [l, v, type] of badDeadlines()) {
    row("DelayQueue#offerAt", `deadline ${l}`, ({ q }) => q.offerAt("x", v), throws(type, "deadline"));
    row("Scheduler#scheduleAt", `deadline ${l}`, ({ s }) => s.scheduleAt(() => {}, v), throws(type, "deadline"));
  }
  const handleCalls = [
    ["DelayQueue#cancel", (ctx, x) => ctx.q.cancel(x), undefined],
    ["DelayQueue#reschedule", (ctx, x) => ctx.q.reschedule(x, 5), false],
    ["DelayQueue#delayOf", (ctx, x) => ctx.q.delayOf(x), undefined],
    ["Scheduler#cancel", (ctx, x) => ctx.s.cancel(x), false],
    ["Scheduler#reschedule", (ctx, x) => ctx.s.reschedule(x, 5), false],
    ["Scheduler#delayOf", (ctx, x) => ctx.s.delayOf(x), undefined],
  ];
  for (const [method, call, none] of handleCalls) {
    const ids = method.startsWith("DelayQueue#"); // a DelayQueue's items have ids too
    for (const [l, v] of notNumbers()) {
      if (ids && typeof v === "string") continue; // an id: below
      row(method, `handle ${l}`, (ctx) => call(ctx, v), throws("TypeError", "handle"));
    }
    if (ids) {
      for (const [l, v] of badIds()) row(method, `id ${l}`, (ctx) => call(ctx, v), throws("RangeError", "id"));
      for (const [l, v] of [
        ['"5"', "5"],
        ['"a"', "a"],
        ["512 characters", "x".repeat(512)],
      ]) {
        row(method, `id ${l} (no item has it)`, (ctx) => call(ctx, v), { returns: none });
      }
    }
    for (const [l, v] of notHandles()) row(method, `handle ${l}`, (ctx) => call(ctx, v), throws("TypeError", "handle"));
    for (const [l, v] of noHandles()) row(method, `handle ${l}`, (ctx) => call(ctx, v), { returns: none });
  }
  for (const [l, v] of notNumbers()) {
    if (v === undefined) continue; // drain() drains everything due
    row("DelayQueue#drain", `max ${l}`, ({ q }) => q.drain(v), throws("TypeError", "max"));
  }
  for (const [l, v] of [...nonFinite().filter(([x]) => x !== "Infinity"), ["-1", -1], ["1.5", 1.5]]) {
    row("DelayQueue#drain", `max ${l}`, ({ q }) => q.drain(v), throws("RangeError", "max"));
  }
  row("DelayQueue#drain", "max -0", ({ q }) => q.drain(-0), { returns: [] });

  // Options bags and their fields.
  for (const [l, v] of notObjects()) {
    row("DelayQueue#take", `options ${l}`, ({ q }) => q.take(v), throws("TypeError", "options"));
    row("DelayQueue#put", `options ${l}`, ({ q }) => q.put("x", 1, v), throws("TypeError", "options"));
    row("new DelayQueue", `options ${l}`, () => new DelayQueue(v), throws("TypeError", "options"));
    row("new Scheduler", `options ${l}`, () => new Scheduler(v), throws("TypeError", "options"));
    row(
      "DelayQueue.restore",
      `options ${l}`,
      () => DelayQueue.restore(emptySnapshot(), v),
      throws("TypeError", "options"),
    );
  }
  for (const [l, v] of badSignals()) {
    row("DelayQueue#take", `signal ${l}`, ({ q }) => q.take({ signal: v }), throws("TypeError", "signal"));
    row("DelayQueue#put", `signal ${l}`, ({ q }) => q.put("x", 1, { signal: v }), throws("TypeError", "signal"));
  }
  for (const [l, make, isReason] of abortedSignals()) {
    row("DelayQueue#take", `signal ${l}`, ({ q }) => q.take({ signal: make() }), { rejectsWith: isReason });
    row("DelayQueue#put", `signal ${l}`, ({ q }) => q.put("x", 1, { signal: make() }), { rejectsWith: isReason });
  }
  for (const [method, call, key] of [
    ["DelayQueue#take", (ctx, o) => ctx.q.take(o), "signal"],
    ["DelayQueue#put", (ctx, o) => ctx.q.put("x", 1, o), "signal"],
    ["new DelayQueue", (_, o) => new DelayQueue(o), "capacity"],
    ["new Scheduler", (_, o) => new Scheduler(o), "onerror"],
    ["DelayQueue.restore", (_, o) => DelayQueue.restore(emptySnapshot(), o), "capacity"],
  ]) {
    const [o, error] = ownError(key);
    row(method, `options whose ${key} getter throws`, (ctx) => call(ctx, o), { throwsOwn: error });
  }
  // Unknown options (misspelt ones, mostly) are refused, naming the key and the option meant.
  const unknown = (key, meant) => ({
    error: "TypeError",
    names: new RegExp(
      `options\\.${key} is not an option of .*${meant === undefined ? "\\(its options: " : `did you mean ${meant}\\?`}`,
    ),
  });
  for (const [method, call, key, meant] of [
    ["new DelayQueue", (_, o) => new DelayQueue(o), "capcity", "capacity"],
    ["new DelayQueue", (_, o) => new DelayQueue(o), "keepalive", "keepAlive"],
    ["new DelayQueue", (_, o) => new DelayQueue(o), "clocks", "clock"],
    ["new DelayQueue", (_, o) => new DelayQueue(o), "size", undefined],
    ["DelayQueue.restore", (_, o) => DelayQueue.restore(emptySnapshot(), o), "capacty", "capacity"],
    ["DelayQueue#take", (ctx, o) => ctx.q.take(o), "timeot", "timeout"],
    ["DelayQueue#take", (ctx, o) => ctx.q.take(o), "sigal", "signal"],
    ["DelayQueue#take", (ctx, o) => ctx.q.take(o), "limit", undefined],
    ["DelayQueue#put", (ctx, o) => ctx.q.put("x", 1, o), "Signal", "signal"],
    ["DelayQueue#put", (ctx, o) => ctx.q.put("x", 1, o), "timeout", undefined],
    ["new Scheduler", (_, o) => new Scheduler(o), "onError", "onerror"],
    ["new Scheduler", (_, o) => new Scheduler(o), "keepAlve", "keepAlive"],
  ]) {
    row(method, `options { ${key}: 1 }`, (ctx) => call(ctx, { [key]: 1 }), unknown(key, meant));
    // Its value does not matter: undefined is refused too (the key is what is misspelt).
    row(method, `options { ${key}: undefined }`, (ctx) => call(ctx, { [key]: undefined }), unknown(key, meant));
  }
  const capacities = [
    ["0", 0, "RangeError"],
    ["-1", -1, "RangeError"],
    ["-0", -0, "RangeError"],
    ["1.5", 1.5, "RangeError"],
    ["NaN", Number.NaN, "RangeError"],
    ["-Infinity", -Infinity, "RangeError"],
    ["2^26+1", 2 ** 26 + 1, "RangeError"],
    ["2^53+1", 2 ** 53 + 1, "RangeError"],
    ['"3"', "3", "TypeError"],
    ["3n", 3n, "TypeError"],
    ["null", null, "TypeError"],
    ["a revoked Proxy", revoked(), "TypeError"],
  ];
  for (const [l, v, type] of capacities) {
    row("new DelayQueue", `capacity ${l}`, () => new DelayQueue({ capacity: v }), throws(type, "capacity"));
    row(
      "DelayQueue.restore",
      `capacity ${l}`,
      () => DelayQueue.restore(emptySnapshot(), { capacity: v }),
      throws(type, "capacity"),
    );
  }
  for (const [l, v] of [
    ['"no"', "no"],
    ["1", 1],
    ["null", null],
  ]) {
    row("new DelayQueue", `keepAlive ${l}`, () => new DelayQueue({ keepAlive: v }), throws("TypeError", "keepAlive"));
    row("new Scheduler", `keepAlive ${l}`, () => new Scheduler({ keepAlive: v }), throws("TypeError", "keepAlive"));
  }
  for (const [l, v] of [
    ["5", 5],
    ['"now"', "now"],
    ["{}", {}],
    ["null", null],
  ]) {
    row("new DelayQueue", `clock ${l}`, () => new DelayQueue({ clock: v }), throws("TypeError", "clock"));
    row("new Scheduler", `clock ${l}`, () => new Scheduler({ clock: v }), throws("TypeError", "clock"));
  }
  for (const [l, v] of [
    ["5", 5],
    ['"log"', "log"],
    ["{}", {}],
  ]) {
    row("new Scheduler", `onerror ${l}`, () => new Scheduler({ onerror: v }), throws("TypeError", "onerror"));
  }
  for (const [l, v, message] of badSnapshots()) {
    row("DelayQueue.restore", `snapshot ${l}`, () => DelayQueue.restore(v), { error: "TypeError", names: message });
  }
  row(
    "DelayQueue.restore",
    "more items than the capacity",
    () =>
      DelayQueue.restore(
        {
          version: 1,
          size: 2,
          items: [
            { value: 1, deadline: 1 },
            { value: 2, deadline: 2 },
          ],
        },
        { capacity: 1 },
      ),
    { error: "RangeError", names: /capacity/ },
  );

  // ---- Scheduler -----------------------------------------------------------------------
  for (const [l, v] of [
    ["undefined", undefined],
    ["null", null],
    ['"f"', "f"],
    ["{}", {}],
    ["{ call() {} }", { call() {} }],
    ["a revoked Proxy", revoked()],
  ]) {
    row("Scheduler#schedule", `callback ${l}`, ({ s }) => s.schedule(v, 1), throws("TypeError", "callback"));
    row("Scheduler#scheduleAt", `callback ${l}`, ({ s }) => s.scheduleAt(v, 0), throws("TypeError", "callback"));
  }

  // ---- init ----------------------------------------------------------------------------
  for (const [l, v] of badSources()) {
    row("init", `source ${l}`, () => api.init(v), throws("TypeError", "source"));
  }

  // A call that returns a Promise never throws: what it refuses, it rejects.
  for (const r of rows) {
    if (!PROMISE_METHODS.has(r.method)) continue;
    if (r.expect.error !== undefined) r.expect = { rejects: r.expect.error, names: r.expect.names };
    else if ("throwsOwn" in r.expect) r.expect = { rejectsOwn: r.expect.throwsOwn };
  }
  return rows;
}

/** The calls of the in-memory API that return a Promise (the durable engines' bad input is in tests/contract/). */
const PROMISE_METHODS = new Set(["DelayQueue#take", "DelayQueue#put"]);

function emptySnapshot() {
  return { version: 1, size: 0, items: [] };
}

/** What must not change: everything the public API shows of the queue and scheduler. */
async function state(ctx) {
  const { q, s, values, handles, schedHandles } = ctx;
  const out = {
    q: {
      size: q.size,
      closed: q.closed,
      remainingCapacity: q.remainingCapacity,
      items: q.toArray().map((v) => values.indexOf(v)),
      delays: handles.map((h) => q.delayOf(h)),
      // Ids: the one given, and those the rows offer with (a bad call must name nothing).
      ids: ["kept", "a", "x", "n0", "n19"].map((id) => q.delayOf(id)),
      stats: q.stats,
    },
    s: { size: s.size, closed: s.closed, delays: schedHandles.map((h) => s.delayOf(h)), stats: s.stats },
  };
  return out;
}

function same(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => same(a[k], b[k]));
}

function show(x) {
  try {
    return JSON.stringify(x, (_, v) => (typeof v === "bigint" ? `${v}n` : v));
  } catch {
    return String(x);
  }
}

/** What a call did: `{ threw }`, `{ returned }`, and for a Promise `{ rejected }` or `{ resolved }`. */
async function outcome(call) {
  let result;
  try {
    result = call();
  } catch (e) {
    return { threw: e };
  }
  if (result instanceof Promise) {
    // A call that should have refused but waits instead (an option it ignored) is a failure
    // of its row, not a sweep that never ends.
    let timer;
    const stillPending = new Promise((resolve) => {
      timer = setTimeout(() => resolve({ pending: "after 2 s" }), 2000);
    });
    const settled = result.then(
      (v) => ({ resolved: v }),
      (e) => ({ rejected: e }),
    );
    return Promise.race([settled, stillPending]).finally(() => clearTimeout(timer));
  }
  return { returned: result };
}

function describeOutcome(o) {
  const [kind, x] = Object.entries(o)[0];
  if (x instanceof Error) return `${kind} ${x.name}: ${x.message}`;
  return `${kind} ${typeof x === "object" ? show(x) : String(x)}`;
}

/** Whether `o` is what the row expects; a reason why not, or null. */
function judge(o, expect) {
  const error = o.threw ?? o.rejected;
  if (expect.error !== undefined || expect.rejects !== undefined) {
    const type = expect.error ?? expect.rejects;
    if (expect.error !== undefined && o.threw === undefined && o.rejected === undefined) return "expected it to throw";
    if (expect.rejects !== undefined && o.rejected === undefined) return "expected a rejected Promise";
    if (error?.name !== type || !(error instanceof Error)) return `expected a ${type}`;
    if (!expect.names.test(error.message)) return `expected the message to name ${expect.names}`;
    return null;
  }
  if ("throwsOwn" in expect) return error === expect.throwsOwn ? null : "expected the getter's own error, unchanged";
  if ("rejectsOwn" in expect) {
    if (o.rejected === undefined) return "expected a rejected Promise";
    return o.rejected === expect.rejectsOwn ? null : "expected the getter's own error, unchanged";
  }
  if ("rejectsWith" in expect) {
    if (o.rejected === undefined) return "expected a rejected Promise";
    return expect.rejectsWith(o.rejected) ? null : "expected the signal's reason";
  }
  if ("resolves" in expect) {
    if (!("resolved" in o)) return "expected a resolved Promise";
    return same(o.resolved, expect.resolves) ? null : `expected it to resolve to ${show(expect.resolves)}`;
  }
  if ("returned" in o && same(o.returned, expect.returns)) return null;
  return `expected it to return ${show(expect.returns)}`;
}

/**
 * Runs every row against one queue and scheduler: each call must do what its row says and
 * change nothing. `api`: { DelayQueue, Scheduler, init }.
 * Resolves to { ran, failures: [{ method, label, problem }], methods: [names] }.
 */
export async function sweep(api) {
  const { DelayQueue, Scheduler } = api;
  // The clock stands still, so deadlines and delays compare exactly.
  const clock = () => CLOCK_MS;
  const q = new DelayQueue({ capacity: 10, clock, keepAlive: false });
  const values = [{ id: "a" }, "b", 3];
  const handles = values.map((v, i) => q.offer(v, 3_600_000 + (i % 2), i === 0 ? { id: "kept" } : undefined));
  const waiting = q.take(); // a waiting take: a timer armed, stats.takers 1
  const waited = waiting.then(
    (v) => ({ resolved: v }),
    (e) => ({ rejected: e }),
  );
  const s = new Scheduler({ clock, keepAlive: false, onerror: () => {} });
  const schedHandles = [s.schedule(() => {}, 3_600_000), s.schedule(() => {}, 7_200_000)];
  const ctx = { api, q, s, h: handles[0], sh: schedHandles[0], values, handles, schedHandles };
  const rows = table(api);
  const failures = [];
  const methods = new Set();
  const before = show(await state(ctx));
  for (const { method, label, call, expect } of rows) {
    methods.add(method);
    const o = await outcome(() => call(ctx));
    const problem = judge(o, expect);
    const after = show(await state(ctx));
    if (problem !== null) failures.push({ method, label, problem: `${problem}; ${describeOutcome(o)}` });
    if (after !== before) failures.push({ method, label, problem: `changed the queue: ${before} -> ${after}` });
  }
  q.close();
  s.close();
  const end = await waited;
  if (end.rejected?.name !== "ClosedError") {
    failures.push({
      method: "DelayQueue#take",
      label: "the waiting take",
      problem: `ended with ${describeOutcome(end)}`,
    });
  }
  return { ran: rows.length, failures, methods: [...methods] };
}

/** One line per failure, for a runner's assertion message. */
export function report({ ran, failures }) {
  return `${failures.length} of ${ran} bad-input calls failed:\n${failures
    .map((f) => `  ${f.method} with ${f.label}: ${f.problem}`)
    .join("\n")}`;
}
