// The replies of the Lua scripts of tarry-queue/redis read into named fields: the readers
// longer than a line (js/redis/scripts.js holds the short ones beside each script's ARGV).
// Each follows the reply its script's header describes (js/redis/lua/<name>.lua), and the
// shared row layouts of includes/page.lua (page_row) and includes/schedule.lua (sched_reply).

/**
 * A time a script replied with, as a number; a head or lease head that does not exist is Infinity.
 * @param {unknown} t a time the script replied with, or null
 */
export const timeOf = (t) => (t == null ? Number.POSITIVE_INFINITY : Number(t));

/**
 * take.lua's reply: now, head, lease head, paused, reclaimed count, cron needs, skipped runs,
 * vanished, then the reclaimed (4 fields each) and the items (6 fields each).
 * @param {any[]} reply
 */
export function readTake(reply) {
  /** @type {import("./schedules.js").Need[]} */
  const needs = reply[5].map(needOf);
  /** @type {{ schedule: string, due: number }[]} */
  const skipped = [];
  for (let j = 0; j < reply[6].length; j += 2) skipped.push({ schedule: reply[6][j], due: Number(reply[6][j + 1]) });
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
}

/**
 * get.lua's reply, or undefined when nothing is there.
 * @param {any} reply
 */
export function readGet(reply) {
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
}

/**
 * deadLetters.lua's reply: more, then 6 fields per dead letter.
 * @param {any[]} reply
 */
export function readDeadLetters([more, ...rest]) {
  const letters = [];
  let last = "";
  for (let i = 0; i < rest.length; i += 6) {
    letters.push(deadLetter(rest.slice(i, i + 6)));
    last = rest[i + 5];
  }
  return { letters, more: more === 1, last };
}

/** The fields of a row of a page of items (includes/page.lua's page_row). */
const PAGE_ROW = 6;

/**
 * The rows of a page of items, read: `key` names what orders the page (a pending seq, a lease expiry).
 * @template {"seq" | "expiry"} K
 * @param {any[]} rest the reply after its first field
 * @param {K} key
 * @returns {({ id: string, text: string, deadline: string, attempt: number, schedule: string | undefined } & Record<K, string>)[]}
 */
export function pageRows(rest, key) {
  const rows = [];
  for (let i = 0; i < rest.length; i += PAGE_ROW) {
    const [id, order, text, deadline, attempt, schedule] = rest.slice(i, i + PAGE_ROW);
    rows.push({ id, [key]: order, text, deadline, attempt, schedule: schedule ?? undefined });
  }
  return /** @type {any} */ (rows);
}

/** The fields of a schedule in a reply (includes/schedule.lua's sched_reply). */
export const SCHEDULE_FIELDS = 15;

/**
 * A schedule as a reply gives it, read.
 * @param {any[]} fields id, kind, rule, start, zone, catchUp, overlap, due, last, runs, skipped, maxRuns, stopAt, paused, value
 * @returns {import("./schedules.js").StoredSchedule}
 */
export function scheduleOf([
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
