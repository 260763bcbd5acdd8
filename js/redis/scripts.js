// The Lua scripts of tarry-queue/redis as JS calls them: for each one, by name, its ARGV built
// from named fields and its reply read into named fields. This is the one place that knows
// each script's argument layout and reply; the layouts are those of the scripts' headers
// (js/redis/lua/<name>.lua). Every change of a queue's state is one script, run atomically by
// the server with the server's TIME. A lone call runs the script's own source (js/redis/lua.js)
// by its SHA, with this ARGV; a batch of several queues' calls names it in the library's batch
// (js/redis/gather.js). The longer reply readers are in js/redis/replies.js.
//
// Times cross as strings (epoch ms with microsecond decimals) and are read back as numbers; a
// head or lease head that does not exist is Infinity.

import { LUA } from "./lua.js";
import { pageRows, readDeadLetters, readGet, readTake, SCHEDULE_FIELDS, scheduleOf, timeOf } from "./replies.js";

/**
 * @typedef {object} Script
 * @property {string} name
 * @property {string} source what EVAL sends when the server does not have it: the script with its includes
 * @property {string} sha what EVALSHA names it by: that source's SHA-1
 * @property {boolean} timed whether its reply starts with the server's time (a clock sample)
 * @property {(params: any) => (string | number)[]} argv
 * @property {(reply: any) => any} reply
 */

/**
 * One offer or reschedule's time: a delay from the stamp, or an absolute deadline.
 * @typedef {{ id: string, kind: "d" | "a", ms: number }} Timing
 */

/**
 * @template P, R
 * @param {keyof typeof LUA} name
 * @param {(params: P) => (string | number)[]} argv
 * @param {(reply: any) => R} reply
 */
function script(name, argv, reply) {
  const { source, sha, timed } = LUA[name];
  return { name, source, sha, timed, argv, reply };
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
    readTake,
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
    readGet,
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
    readDeadLetters,
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
