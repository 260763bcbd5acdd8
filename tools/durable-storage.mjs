// A fake of a Durable Object's storage (`ctx.storage`) for DurableDelayQueue's tests in Node,
// with failure injection and the alarm as the runtime runs it.
//
// It keeps the guarantees workerd gives (tests/workerd checks the queue against the real one):
// - values are structured-cloned on the way in and out, so a function is a DataCloneError and
//   a caller's later change to an object does not reach what is stored;
// - each call is atomic: `put({k: v, …})` stores every pair or none, `delete([k, …])` likewise;
// - `transaction(closure)` commits every write made through `txn` or none: a closure that
//   throws (or calls `txn.rollback()`) discards them, and so does a failed commit;
// - `setAlarm` refuses times <= 0 and past int64 nanoseconds ("after 2189"), as workerd does;
// - the alarm, when `fire(handler)` runs it: while the handler runs, `getAlarm()` is null unless
//   `setAlarm` was called since it started; when it returns, the alarm is deleted unless set
//   meanwhile; when it throws, the alarm stays for the runtime's retry unless set meanwhile.
//
// Failure injection: `failCall(n)` makes the n-th storage call from now (0 = the next one)
// reject once, with no effect; `failOn(name)` the next call of that name (`setAlarm` also
// matches `txn.setAlarm`). Every call counts: reads, writes, `txn` calls, and a transaction's
// commit (named `transaction`, counted when its closure has returned).

/** The error an injected failure rejects with. */
export class InjectedFailure extends Error {
  constructor(call) {
    super(`injected failure: ${call}`);
    this.name = "InjectedFailure";
  }
}

const MAX_ALARM_MS = 2 ** 63 / 1e6; // workerd converts to int64 nanoseconds

function checkAlarmTime(t) {
  const ms = t instanceof Date ? t.getTime() : t;
  if (typeof ms !== "number" || !Number.isFinite(ms)) {
    throw new TypeError("The value cannot be converted because it is not a valid Date.");
  }
  if (ms >= MAX_ALARM_MS) throw new TypeError("This API doesn't support dates after 2189.");
  if (ms <= 0) throw new TypeError("setAlarm() cannot be called with an alarm time <= 0");
  return Math.ceil(ms);
}

/** The key/value and alarm state both the storage and a transaction act on. */
class Contents {
  constructor(data = new Map(), alarm = null) {
    this.data = data;
    this.alarm = alarm;
  }

  copy() {
    return new Contents(new Map(this.data), this.alarm);
  }

  get(keys) {
    if (Array.isArray(keys)) {
      const out = new Map();
      for (const k of [...keys].sort()) if (this.data.has(k)) out.set(k, structuredClone(this.data.get(k)));
      return out;
    }
    return this.data.has(keys) ? structuredClone(this.data.get(keys)) : undefined;
  }

  put(keyOrEntries, value) {
    const entries = typeof keyOrEntries === "string" ? { [keyOrEntries]: value } : keyOrEntries;
    // Clone all first: one value that cannot be stored leaves every key as it was.
    const cloned = Object.entries(entries).map(([k, v]) => {
      if (v === undefined) throw new TypeError(`put() of undefined for key ${k}`);
      return [k, structuredClone(v)];
    });
    for (const [k, v] of cloned) this.data.set(k, v);
  }

  delete(keys) {
    if (Array.isArray(keys)) return keys.filter((k) => this.data.delete(k)).length;
    return this.data.delete(keys);
  }

  list({ prefix = "" } = {}) {
    const out = new Map();
    for (const k of [...this.data.keys()].sort()) {
      if (k.startsWith(prefix)) out.set(k, structuredClone(this.data.get(k)));
    }
    return out;
  }
}

export class FakeStorage {
  #contents;
  #failAt = -1;
  #failName = null;
  #alarmRun = null; // { setMeanwhile } while fire() runs a handler
  /** Every call made, by name (`txn.put`, `transaction` for a commit, …). */
  calls = [];

  constructor(contents = new Contents()) {
    this.#contents = contents;
  }

  /** An independent storage with the same keys, values and alarm (as after a restart). */
  clone() {
    return new FakeStorage(this.#contents.copy());
  }

  /** What is stored: every key and value (sorted by key), and the alarm. */
  dump() {
    return { entries: [...this.#contents.list()], alarm: this.#contents.alarm };
  }

  /** The alarm as stored (not as getAlarm() shows it while a handler runs). */
  get alarm() {
    return this.#contents.alarm;
  }

  /** The n-th storage call from now (0 = the next) rejects once, with no effect. */
  failCall(n) {
    this.#failAt = this.calls.length + n;
  }

  /** The next call named `name` (or `txn.${name}`) rejects once, with no effect. */
  failOn(name) {
    this.#failName = name;
  }

  /** Runs `handler` as the runtime runs an alarm; its result, or throws its error. */
  async fire(handler) {
    const run = { setMeanwhile: false };
    this.#alarmRun = run;
    try {
      const result = await handler();
      if (!run.setMeanwhile) this.#contents.alarm = null;
      return result;
    } finally {
      if (this.#alarmRun === run) this.#alarmRun = null;
    }
  }

  async get(keys) {
    this.#enter("get");
    return this.#contents.get(keys);
  }

  async put(keyOrEntries, value) {
    this.#enter("put");
    this.#contents.put(keyOrEntries, value);
  }

  async delete(keys) {
    this.#enter("delete");
    return this.#contents.delete(keys);
  }

  async list(options) {
    this.#enter("list");
    return this.#contents.list(options);
  }

  async getAlarm() {
    this.#enter("getAlarm");
    if (this.#alarmRun && !this.#alarmRun.setMeanwhile) return null;
    return this.#contents.alarm;
  }

  async setAlarm(t) {
    this.#enter("setAlarm");
    this.#contents.alarm = checkAlarmTime(t);
    if (this.#alarmRun) this.#alarmRun.setMeanwhile = true;
  }

  async deleteAlarm() {
    this.#enter("deleteAlarm");
    this.#contents.alarm = null;
    if (this.#alarmRun) this.#alarmRun.setMeanwhile = true;
  }

  async sync() {
    this.#enter("sync");
  }

  async transaction(closure) {
    const staged = this.#contents.copy();
    let open = true;
    let alarmSet = false;
    const op = (name, fn) => {
      this.#enter(`txn.${name}`);
      if (!open) throw new Error(`txn.${name}() after the transaction ended`);
      return fn();
    };
    const txn = {
      get: async (keys) => op("get", () => staged.get(keys)),
      put: async (k, v) => op("put", () => staged.put(k, v)),
      delete: async (keys) => op("delete", () => staged.delete(keys)),
      list: async (o) => op("list", () => staged.list(o)),
      getAlarm: async () => op("getAlarm", () => staged.alarm),
      setAlarm: async (t) => op("setAlarm", () => ((staged.alarm = checkAlarmTime(t)), (alarmSet = true))),
      deleteAlarm: async () => op("deleteAlarm", () => ((staged.alarm = null), (alarmSet = true))),
      rollback: () => {
        open = false;
      },
    };
    try {
      const result = await closure(txn);
      if (!open) return result; // rolled back
      this.#enter("transaction"); // the commit
      this.#contents = staged;
      if (alarmSet && this.#alarmRun) this.#alarmRun.setMeanwhile = true;
      return result;
    } finally {
      open = false;
    }
  }

  #enter(name) {
    const n = this.calls.length;
    this.calls.push(name);
    if (n === this.#failAt || name === this.#failName || name === `txn.${this.#failName}`) {
      this.#failAt = -1;
      this.#failName = null;
      throw new InjectedFailure(name);
    }
  }
}
