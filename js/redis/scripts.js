// The Lua scripts of tarry-queue/redis as JS calls them: for each one, by name, its ARGV built
// from named fields and its reply read into named fields. This is the one place that knows
// each script's argument layout and reply; the layouts are those of the scripts' headers
// (js/redis/lua/<name>.lua). Every change of a queue's state is one script, run atomically by
// the server with the server's TIME. Redis runs them as one library (js/redis/lua.js): a call
// is the library's SHA, the script's name, then its ARGV.
//
// Times cross as strings (epoch ms with microsecond decimals) and are read back as numbers; a
// head or lease head that does not exist is Infinity.

import { LIBRARY, LUA } from "./lua.js";

/**
 * @typedef {object} Script
 * @property {string} name
 * @property {string} source what EVAL sends when the server does not have it: the library
 * @property {string} sha what EVALSHA names it by: the library's SHA-1
 * @property {boolean} timed whether its reply starts with the server's time (a clock sample)
 * @property {(params: any) => (string | number)[]} argv
 * @property {(reply: any) => any} reply
 */

/**
 * One offer or reschedule's time: a delay from the stamp, or an absolute deadline.
 * @typedef {{ id: string, kind: "d" | "a", ms: number }} Timing
 */

/** @param {unknown} t a time the script replied with, or null */
const timeOf = (t) => (t == null ? Number.POSITIVE_INFINITY : Number(t));

/**
 * @template P, R
 * @param {keyof typeof LUA} name
 * @param {(params: P) => (string | number)[]} argv
 * @param {(reply: any) => R} reply
 */
function script(name, argv, reply) {
  const { source, sha } = LIBRARY;
  return { name, source, sha, timed: LUA[name].timed, argv: (/** @type {P} */ p) => [name, ...argv(p)], reply };
}

const none = () => [];

/** What offer.lua calls each `ifExists`. */
const MODE = { replace: "r", keep: "k", extend: "e" };

export const SCRIPTS = {
  offer: script(
    "offer",
    /**
     * `stamp`: the server time of the call made at local time `first`; an item's delay counts
     * from its own call (`at`), so it is sent as a delay from the stamp.
     * @param {{ channel: string, stamp: string, first: number, tolerance: number, items: { id: string, ifExists: "replace" | "keep" | "extend", kind: "d" | "a", ms: number, json: string, at: { at: number } }[] }} p
     */
    ({ channel, stamp, first, tolerance, items }) => {
      const args = [channel, stamp, tolerance];
      for (const it of items) {
        const ms = it.kind === "d" ? it.ms + (it.at.at - first) : it.ms;
        args.push(it.id, MODE[it.ifExists], it.kind, ms, it.json);
      }
      return args;
    },
    ([, head, vanished]) => ({ head: timeOf(head), vanished: vanished === 1 }),
  ),

  take: script(
    "take",
    /** @param {{ channel: string, count: number, visibility: number, maxAttempts: number, reclaim: number, token: string }} p */
    ({ channel, count, visibility, maxAttempts, reclaim, token }) => [
      channel,
      count,
      visibility,
      maxAttempts,
      reclaim,
      token,
    ],
    (reply) => {
      /** @type {import("./schedules.js").Need[]} */
      const needs = reply[5].map(needOf);
      /** @type {{ schedule: string, due: number }[]} */
      const skipped = [];
      for (let j = 0; j < reply[6].length; j += 2)
        skipped.push({ schedule: reply[6][j], due: Number(reply[6][j + 1]) });
      /** @type {{ id: string, attempt: number, dead: boolean, reason: string }[]} */
      const reclaimed = [];
      let i = 8;
      for (const end = 8 + 4 * reply[4]; i < end; i += 4) {
        reclaimed.push({ id: reply[i], attempt: reply[i + 1], dead: reply[i + 2] === "d", reason: reply[i + 3] });
      }
      /** @type {{ id: string, text: string, deadline: number, attempt: number, token: string, schedule: string | undefined }[]} */
      const items = [];
      for (; i < reply.length; i += 6) {
        const [id, text, deadline, attempt, token, schedule] = reply.slice(i, i + 6);
        items.push({ id, text, deadline: Number(deadline), attempt, token, schedule: schedule || undefined });
      }
      const paused = reply[3] === 1;
      const vanished = reply[7] === 1;
      return {
        now: Number(reply[0]),
        head: timeOf(reply[1]),
        leaseHead: timeOf(reply[2]),
        paused,
        reclaimed,
        needs,
        skipped,
        vanished,
        items,
      };
    },
  ),

  ack: script(
    "ack",
    /** @param {{ deliveries: [string, string][] }} p */
    ({ deliveries }) => deliveries.flat(),
    /** @returns {boolean[]} */ (held) => held.map((/** @type {number} */ h) => h === 1),
  ),

  nack: script(
    "nack",
    /** @param {{ channel: string, stamp: string, tolerance: number, id: string, token: string, delayMs: number, maxAttempts: number, reason: string, stack: string }} p */
    ({ channel, stamp, tolerance, id, token, delayMs, maxAttempts, reason, stack }) => [
      channel,
      stamp,
      tolerance,
      id,
      token,
      delayMs,
      maxAttempts,
      reason,
      stack,
    ],
    ([, outcome, head, vanished]) => ({
      held: outcome !== 0,
      dead: outcome === 2,
      head: timeOf(head),
      vanished: vanished === 1,
    }),
  ),

  extend: script(
    "extend",
    /** `longer`: only where the lease would last longer so (the periodic extension of process()). */
    /** @param {{ ms: number, longer: boolean, deliveries: [string, string][] }} p */
    ({ ms, longer, deliveries }) => [ms, longer ? "GT" : "SET", ...deliveries.flat()],
    ([, leaseHead, ...held]) => ({ leaseHead: timeOf(leaseHead), held: held.map((h) => h === 1) }),
  ),

  release: script(
    "release",
    /** @param {{ channel: string, id: string, token: string }} p */
    ({ channel, id, token }) => [channel, id, token],
    ([head]) => ({ head: timeOf(head) }),
  ),

  bury: script(
    "bury",
    /** @param {{ id: string, token: string, reason: string }} p */
    ({ id, token, reason }) => [id, token, reason],
    (buried) => buried === 1,
  ),

  cancel: script(
    "cancel",
    /** @param {{ id: string }} p */
    ({ id }) => [id],
    (found) => found === 1,
  ),

  reschedule: script(
    "reschedule",
    /** @param {{ channel: string, stamp: string, tolerance: number } & Timing} p */
    ({ channel, stamp, tolerance, id, kind, ms }) => [channel, stamp, tolerance, id, kind, ms],
    ([, found, head, vanished]) => ({ found: found === 1, head: timeOf(head), vanished: vanished === 1 }),
  ),

  delayOf: script(
    "delayOf",
    /** @param {{ id: string }} p */
    ({ id }) => [id],
    ([now, deadline]) => ({ now: Number(now), deadline: deadline == null ? undefined : Number(deadline) }),
  ),

  stats: script("stats", none, ([now, pending, inFlight, dead, head, , ...fields]) => {
    /** @type {Record<string, string>} */
    const meta = {};
    for (let i = 0; i < fields.length; i += 2) meta[fields[i]] = fields[i + 1];
    return { now: Number(now), pending, inFlight, dead, head: timeOf(head), meta };
  }),

  get: script(
    "get",
    /** @param {{ id: string }} p */
    ({ id }) => [id],
    (reply) => {
      if (reply === null) return undefined;
      const [state, text, deadline, attempt, lease, died, why, schedule] = reply;
      return {
        state: /** @type {"p" | "l" | "d" | "x"} */ (state),
        text,
        deadline: deadline == null ? undefined : Number(deadline),
        attempt,
        leaseExpiry: lease == null ? undefined : Number(lease),
        diedAt: died == null ? undefined : Number(died),
        why: why ?? undefined,
        schedule: schedule ?? undefined,
      };
    },
  ),

  pending: script(
    "pending",
    /** @param {{ limit: number, after: { deadline: string, seq: string } | undefined }} p */
    ({ limit, after }) => [limit, after?.deadline ?? "", after?.seq ?? ""],
    ([more, ...rest]) => ({ more: more === 1, items: pageRows(rest, "seq") }),
  ),

  inFlight: script(
    "inFlight",
    /** @param {{ limit: number, after: { expiry: string, id: string } | undefined }} p */
    ({ limit, after }) => [limit, after?.expiry ?? "", after?.id ?? ""],
    ([more, ...rest]) => ({ more: more === 1, items: pageRows(rest, "expiry") }),
  ),

  pause: script(
    "pause",
    /** @param {{ channel: string }} p */
    ({ channel }) => [channel],
    (changed) => changed === 1,
  ),

  resume: script(
    "resume",
    /** @param {{ channel: string }} p */
    ({ channel }) => [channel],
    (changed) => changed === 1,
  ),

  deadLetters: script(
    "deadLetters",
    /** `from`: the cursor, [time of death, id], or undefined for the first page. */
    /** @param {{ limit: number, from: [string, string] | undefined }} p */
    ({ limit, from }) => [limit, ...(from ?? ["", ""])],
    ([more, ...rest]) => {
      const letters = [];
      let last = "";
      for (let i = 0; i < rest.length; i += 6) {
        letters.push(deadLetter(rest.slice(i, i + 6)));
        last = rest[i + 5];
      }
      return { letters, more: more === 1, last };
    },
  ),

  deleteDead: script(
    "deleteDead",
    /** @param {{ id: string }} p */
    ({ id }) => [id],
    (found) => found === 1,
  ),

  purgeDead: script(
    "purgeDead",
    /** @param {{ olderThan: number, cutoff: string, limit: number }} p */
    ({ olderThan, cutoff, limit }) => [olderThan, cutoff, limit],
    ([cutoff, removed, more]) => ({ cutoff: String(cutoff), removed, more: more === 1 }),
  ),

  retryDead: script(
    "retryDead",
    /** @param {{ channel: string, id: string }} p */
    ({ channel, id }) => [channel, id],
    ([found, head, vanished]) => ({ found: found === 1, head: timeOf(head), vanished: vanished === 1 }),
  ),

  clear: script("clear", none, () => undefined),

  probe: script(
    "probe",
    /** @param {{ channel: string, shards: number }} p */
    ({ channel, shards }) => [channel, String(shards)],
    (reply) => {
      /** @type {{ what: string, error: string }[]} */
      const refused = [];
      for (let i = 1; i < reply.length; i += 2) refused.push({ what: reply[i], error: reply[i + 1] });
      return refused;
    },
  ),

  scheduleUpsert: script(
    "scheduleUpsert",
    /**
     * `first` and `succ` (cron only): the rule's first occurrence at or after the start the
     * client chose, and the one after it; undefined for none.
     * @param {{ channel: string, id: string, kind: "e" | "c", rule: string, start: number | undefined, zone: string, catchUp: string, overlap: boolean, json: string, first?: number, succ?: number, maxRuns: number | undefined, stopAt: number | undefined }} p
     */
    (p) => [
      p.channel,
      p.id,
      p.kind,
      p.rule,
      p.start === undefined ? "" : String(p.start),
      p.zone,
      p.catchUp,
      p.overlap ? "1" : "0",
      p.json,
      p.first === undefined ? "" : String(p.first),
      p.succ === undefined ? "" : String(p.succ),
      p.maxRuns === undefined ? "" : String(p.maxRuns),
      p.stopAt === undefined ? "" : String(Math.floor(p.stopAt)),
    ],
    ([now, status, ...rest]) =>
      status === 0 || status === 3
        ? { now: Number(now), status, last: Number(rest[0]), schedule: undefined }
        : { now: Number(now), status, last: undefined, schedule: scheduleOf(rest) },
  ),

  schedulePause: script(
    "schedulePause",
    /** @param {{ id: string }} p */
    ({ id }) => [id],
    (done) => done === 1,
  ),

  scheduleResume: script(
    "scheduleResume",
    /** @param {{ channel: string, id: string }} p */
    ({ channel, id }) => [channel, id],
    ([done, head]) => ({ done: done === 1, head: timeOf(head) }),
  ),

  scheduleTrigger: script(
    "scheduleTrigger",
    /** @param {{ channel: string, id: string }} p */
    ({ channel, id }) => [channel, id],
    ([done, head]) => ({ done: done === 1, head: timeOf(head) }),
  ),

  scheduleGet: script(
    "scheduleGet",
    /** @param {{ id: string }} p */
    ({ id }) => [id],
    (fields) => (fields.length === 0 ? undefined : scheduleOf(fields)),
  ),

  scheduleRemove: script(
    "scheduleRemove",
    /** @param {{ id: string }} p */
    ({ id }) => [id],
    (found) => found === 1,
  ),

  scheduleList: script(
    "scheduleList",
    /** @param {{ cursor: string, count: number }} p */
    ({ cursor, count }) => [cursor, count],
    ([cursor, ...rest]) => {
      const schedules = [];
      for (let i = 0; i < rest.length; i += SCHEDULE_FIELDS)
        schedules.push(scheduleOf(rest.slice(i, i + SCHEDULE_FIELDS)));
      return { cursor: String(cursor), schedules };
    },
  ),

  scheduleAdvance: script(
    "scheduleAdvance",
    /** `keep` and `succ` undefined: the rule has none; `version` the need's. @param {{ channel: string, id: string, due: string, keep: number | undefined, succ: number | undefined, version: string }} p */
    ({ channel, id, due, keep, succ, version }) => [
      channel,
      id,
      due,
      keep === undefined ? "end" : String(keep),
      succ === undefined ? "end" : String(succ),
      version,
    ],
    ([accepted, head]) => ({ accepted: accepted === 1, head: timeOf(head) }),
  ),
};

/** The fields of a row of a page of items (includes/page.lua's page_row). */
const PAGE_ROW = 6;

/**
 * The rows of a page of items, read: `key` names what orders the page (a pending seq, a lease expiry).
 * @template {"seq" | "expiry"} K
 * @param {any[]} rest the reply after its first field
 * @param {K} key
 * @returns {({ id: string, text: string, deadline: string, attempt: number, schedule: string | undefined } & Record<K, string>)[]}
 */
function pageRows(rest, key) {
  const rows = [];
  for (let i = 0; i < rest.length; i += PAGE_ROW) {
    const [id, order, text, deadline, attempt, schedule] = rest.slice(i, i + PAGE_ROW);
    rows.push({ id, [key]: order, text, deadline, attempt, schedule: schedule ?? undefined });
  }
  return /** @type {any} */ (rows);
}

/** The fields of a schedule in a reply (includes/schedule.lua's sched_reply). */
const SCHEDULE_FIELDS = 15;

/**
 * A schedule as a reply gives it, read.
 * @param {any[]} fields id, kind, rule, start, zone, catchUp, overlap, due, last, runs, skipped, maxRuns, stopAt, paused, value
 * @returns {import("./schedules.js").StoredSchedule}
 */
function scheduleOf([
  id,
  kind,
  rule,
  start,
  zone,
  catchUp,
  overlap,
  due,
  last,
  runs,
  skipped,
  maxRuns,
  stopAt,
  paused,
  text,
]) {
  return {
    id,
    kind: kind === "e" ? "every" : "cron",
    rule,
    start: start === "" ? undefined : Number(start),
    timezone: zone,
    catchUp,
    overlap: overlap === "1",
    due: due === "" ? undefined : Number(due),
    last: last === "" ? undefined : Number(last),
    runs,
    skipped,
    maxRuns: maxRuns === "" ? undefined : Number(maxRuns),
    stopAt: stopAt === "" ? undefined : Number(stopAt),
    paused: paused === "1",
    text,
  };
}

/**
 * What the take script asks a client to compute for a cron schedule.
 * @param {any[]} need id, due, now, expression, zone, catchUp, version (of the rule)
 * @returns {import("./schedules.js").Need}
 */
function needOf([id, due, now, expression, zone, catchUp, version]) {
  return { id, due, now: Number(now), expression, timezone: zone, catchUp, version: String(version) };
}

/**
 * A dead letter from the deadLetters reply: its value when the record reads and holds JSON,
 * else `raw`, the text that could not be read (or the raw text kept when it died). A reason
 * that is not the JSON the scripts write is given as it is.
 * @param {any[]} fields id, text, deadline, attempt, reason JSON, time of death
 */
function deadLetter([id, text, deadline, attempt, why, diedAt]) {
  let reason = "";
  let raw;
  let stack;
  if (typeof why === "string") {
    try {
      const kept = JSON.parse(why);
      if (typeof kept?.reason !== "string") throw new Error("not a reason");
      ({ reason, raw, stack } = kept);
    } catch {
      reason = why;
    }
  }
  /** @type {{ id: string, state: "dead", value: any, deadline: number | undefined, attempt: number, reason: string, diedAt: number, raw?: string }} */
  const letter = {
    id,
    state: "dead",
    value: undefined,
    deadline: deadline == null ? undefined : Number(deadline),
    attempt,
    reason,
    ...(typeof stack === "string" && { stack }),
    diedAt: Number(diedAt),
  };
  try {
    if (deadline == null) throw new Error("not a record");
    letter.value = JSON.parse(text);
  } catch {
    letter.raw = raw ?? text;
  }
  if (raw !== undefined) letter.raw = raw;
  return letter;
}
