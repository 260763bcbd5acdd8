// The cron rules (tarry-queue/cron, on croner) against a brute-force model of the
// documented rule (cron-model.mjs) and against a second library, cron-parser, for
// thousands of random expressions and zones (seeded, so a failure repeats; CRON_SEED=n
// picks another run). Half of the starting instants lie within a day and a half of a
// daylight-saving change of their zone, where cron libraries differ.
//
// tarry's rule must agree with the model on every case. cron-parser may disagree, but only
// near a change (away from one the two libraries must agree); each disagreement is
// classified from the model's answer and printed, and the model says which one is right.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CronExpressionParser } from "cron-parser";
import { cron } from "tarry-queue/cron";
import { CronModel, ZoneModel } from "./cron-model.mjs";
import { rng as random } from "../../bench/rng.mjs"; // mulberry32, seeded

const SEED = Number(process.env.CRON_SEED ?? 20260);
const CASES = Number(process.env.CRON_CASES ?? 3000);
/** Occurrences compared per case, and the horizon they must fall before (the zone model's span). */
const N = 6;
const HORIZON = Date.UTC(2028, 2, 1);

const ZONES = [
  "UTC",
  "America/New_York",
  "Europe/Berlin",
  "Australia/Lord_Howe", // 30-minute shift
  "Asia/Kathmandu", // +05:45
  "America/Los_Angeles",
  "Europe/London",
  "Europe/Dublin", // "winter time" is the negative DST in the tz database
  "Australia/Sydney",
  "Pacific/Auckland",
  "Pacific/Chatham", // +12:45 / +13:45
  "America/St_Johns", // −03:30 / −02:30
  "America/Santiago", // changes at 24:00
  "America/Havana", // changes at 00:00 / 01:00
  "Asia/Beirut", // changes at 00:00
  "Africa/Casablanca", // back an hour for Ramadan
  "Asia/Tehran", // no DST since 2022
  "Asia/Kolkata",
  "America/Sao_Paulo", // no DST since 2019
];

/** A random field over [min, max]: its text and the values it names. */
function field(rnd, min, max, weights, pick = () => min + Math.floor(rnd() * (max - min + 1))) {
  const range = (a, b, step = 1) => {
    const v = [];
    for (let x = a; x <= b; x += step) v.push(x);
    return v;
  };
  const kinds = Object.keys(weights);
  let r = rnd() * kinds.reduce((s, k) => s + weights[k], 0);
  const kind = kinds.find((k) => (r -= weights[k]) < 0) ?? kinds[0];
  switch (kind) {
    case "star":
      return { text: "*", values: range(min, max), star: true };
    case "single": {
      const v = pick();
      return { text: String(v), values: [v] };
    }
    case "step": {
      const step = [2, 3, 4, 5, 6, 10, 15, 20, 30].filter((s) => s <= max - min)[Math.floor(rnd() * 6)] ?? 2;
      return { text: `*/${step}`, values: range(min, max, step) };
    }
    case "list": {
      const set = new Set();
      const n = 2 + Math.floor(rnd() * 3);
      for (let tries = 0; set.size < n && tries < 20; tries++) set.add(pick());
      if (set.size === 1) set.add(set.has(min) ? max : min);
      const values = [...set].sort((a, b) => a - b);
      return { text: values.join(","), values };
    }
    case "range": {
      const a = pick();
      const b = Math.min(max, a + 1 + Math.floor(rnd() * (max - min)));
      return { text: `${a}-${b}`, values: range(a, b) };
    }
    default: {
      // a range with a step
      const a = pick();
      const b = Math.min(max, a + 2 + Math.floor(rnd() * (max - min)));
      const step = 2 + Math.floor(rnd() * 4);
      return { text: `${a}-${b}/${step}`, values: range(a, b, step) };
    }
  }
}

/** A random expression: its text and its fields as sets. */
function expression(rnd) {
  const withSeconds = rnd() < 0.2;
  // Hours and minutes near the changes (00:00-03:59, :00 and :30) half of the time.
  const hourPick = () => (rnd() < 0.5 ? Math.floor(rnd() * 4) : Math.floor(rnd() * 24));
  const minutePick = () => (rnd() < 0.4 ? [0, 15, 30, 45][Math.floor(rnd() * 4)] : Math.floor(rnd() * 60));
  const seconds = withSeconds
    ? field(rnd, 0, 59, { single: 5, list: 2, step: 1 }, () => [0, 30][Math.floor(rnd() * 2)])
    : { text: "", values: [0] };
  if (seconds.text === "*/2" || seconds.text === "*/3" || seconds.text === "*/4") {
    seconds.text = "*/10";
    seconds.values = [0, 10, 20, 30, 40, 50];
  }
  const minutes = field(rnd, 0, 59, { single: 5, star: 1, step: 2, list: 2, range: 1, rangeStep: 1 }, minutePick);
  const hours = field(rnd, 0, 23, { single: 5, star: 2, step: 1, list: 2, range: 1, rangeStep: 1 }, hourPick);
  const days = field(rnd, 1, 31, { star: 12, single: 1, list: 2, range: 2, step: 1 });
  const months = field(rnd, 1, 12, { star: 12, list: 2, range: 2 }, () => [3, 4, 10, 11][Math.floor(rnd() * 4)]);
  const weekdays = field(rnd, 0, 6, { star: 12, single: 2, range: 3, list: 2 });
  const text = [seconds.text, minutes.text, hours.text, days.text, months.text, weekdays.text]
    .filter((t) => t !== "")
    .join(" ");
  return {
    text,
    fields: {
      seconds: seconds.values,
      minutes: minutes.values,
      hours: hours.values,
      days: days.values,
      months: months.values,
      weekdays: weekdays.values,
      domStar: days.star === true,
      dowStar: weekdays.star === true,
    },
  };
}

/** Up to N occurrences after `after` and before HORIZON, from an iterator of epoch ms. */
function take(nextOf, after) {
  const out = [];
  let t = after;
  while (out.length < N) {
    t = nextOf(t);
    if (t === undefined || t >= HORIZON) break;
    out.push(t);
  }
  return out;
}

function parserOccurrences(text, zone, after) {
  const out = [];
  let it;
  try {
    it = CronExpressionParser.parse(text, { currentDate: new Date(after), tz: zone });
  } catch (e) {
    out.error = `refuses the expression: ${e.message}`;
    return out;
  }
  while (out.length < N) {
    let t;
    try {
      t = it.next().getTime();
    } catch (e) {
      if (!/Out of the time span range/.test(e.message)) out.error = `throws: ${e.message}`;
      break; // no more
    }
    if (t >= HORIZON) break;
    out.push(t);
  }
  return out;
}

const iso = (t) => (t === undefined ? "none" : new Date(t).toISOString().replace(".000Z", "Z"));

test(`cron rules against the brute-force model and cron-parser: ${CASES} random expressions and zones (seed ${SEED})`, () => {
  const rnd = random(SEED);
  const zones = new Map(ZONES.map((z) => [z, new ZoneModel(z)]));
  const ours = []; // disagreements with the model: none allowed
  const theirs = new Map(); // cron-parser's, by kind
  let compared = 0;
  let nearChange = 0;
  let refused = 0;
  for (let i = 0; i < CASES; i++) {
    const zone = ZONES[Math.floor(rnd() * ZONES.length)];
    const z = zones.get(zone);
    const { text, fields } = expression(rnd);
    const changes = z.transitions.filter((x) => x.at >= Date.UTC(2026, 0, 1) && x.at < Date.UTC(2028, 0, 1));
    let after;
    if (changes.length > 0 && rnd() < 0.5) {
      const x = changes[Math.floor(rnd() * changes.length)];
      after = x.at + Math.floor((rnd() - 0.5) * 3 * 86_400_000);
      nearChange++;
    } else {
      after = Date.UTC(2026, 0, 1) + Math.floor(rnd() * 730 * 86_400_000);
    }
    after = Math.floor(after / 1000) * 1000 + (rnd() < 0.3 ? Math.floor(rnd() * 1000) : 0);

    const model = new CronModel(fields, z);
    const expected = model.next(after, N, HORIZON);
    let rule;
    try {
      rule = cron(text, { timezone: zone });
    } catch (e) {
      // An expression no date matches (the 31st of April and November) is refused at the call.
      if (!(e instanceof RangeError && /has no occurrence/.test(e.message))) throw e;
      assert.deepEqual(expected, [], `${text} is refused as having no occurrence, but the model has some`);
      refused++;
      continue;
    }
    const got = take((t) => rule.next(t), after);
    compared++;
    if (got.join() !== expected.join()) {
      ours.push(
        `${text} in ${zone} after ${iso(after)}: tarry ${got.map(iso).join(" ")}; model ${expected.map(iso).join(" ")}`,
      );
      continue;
    }
    // latest(): the last occurrence at or before a point is one, and none lies between.
    if (got.length >= 2) {
      const at = got[0] + Math.floor((got[1] - got[0]) / 2);
      assert.equal(rule.latest(at), got[0], `${text} in ${zone}: latest(${iso(at)})`);
      assert.equal(rule.latest(got[1]), got[1], `${text} in ${zone}: latest(${iso(got[1])})`);
    }
    const parsed = parserOccurrences(text, zone, after);
    if (parsed.join() === expected.join()) continue;
    // Where they part: the model's occurrence cron-parser lacks, or cron-parser's extra one.
    let k = 0;
    while (k < Math.min(parsed.length, expected.length) && parsed[k] === expected[k]) k++;
    const o = expected[k];
    const p = parsed[k];
    const near = (t) => t !== undefined && z.transitions.some((x) => Math.abs(x.at - t) < 36 * 3_600_000);
    const kind = parsed.error !== undefined ? parsed.error : classify(z, model, o, p);
    const local = (t) => (t === undefined ? "" : ` (${new Date(z.wall(t)).toISOString().slice(11, 16)} local)`);
    const entry = `${text} in ${zone} after ${iso(after)}: cron-parser ${iso(p)}${local(p)}, model and tarry ${iso(o)}${local(o)}`;
    const key = `${near(o) || near(p) ? "" : "AWAY FROM A CHANGE: "}${kind}`;
    if (!theirs.has(key)) theirs.set(key, []);
    theirs.get(key).push(entry);
  }
  const lines = [
    `${compared} cases (${nearChange} near a change; ${refused} expressions refused as matching no date); cron-parser disagrees with the model on:`,
  ];
  for (const [kind, list] of [...theirs].sort((a, b) => b[1].length - a[1].length)) {
    lines.push(`  ${list.length} × ${kind}`);
    for (const e of list) lines.push(`      ${e}`);
  }
  console.log(lines.join("\n"));
  assert.deepEqual(ours, [], "tarry's cron rule differs from the model");
  const away = [...theirs.keys()].filter((k) => k.startsWith("AWAY"));
  assert.deepEqual(away, [], "away from a DST change, cron-parser and the model must agree");
});

/** Why cron-parser's answer `p` differs from the model's `o`, in the words of the rule. */
function classify(z, model, o, p) {
  const kind = model.fixed ? "fixed-time" : "wall-clock";
  if (o !== undefined && (p === undefined || o < p)) {
    // cron-parser skipped an occurrence the rule has.
    const w = z.wall(o);
    const { instants } = z.resolve(w);
    if (instants.length === 2 && instants[1] === o) return `${kind}: skips the second pass of a repeated hour`;
    if (instants.length === 2) return `${kind}: skips the first pass of a repeated hour`;
    if (!instants.includes(o) || model.fixed) {
      const stated = model.times.some(
        (time) => z.resolve(Math.floor(w / 86_400_000) * 86_400_000 + time).instants.length === 0,
      );
      if (stated) return `${kind}: does not run at the first instant after a spring-forward gap that skips its time`;
    }
    return `${kind}: skips a time that exists, right after a spring-forward gap`;
  }
  // cron-parser has an occurrence the rule does not (at p, before o).
  const { instants } = z.resolve(z.wall(p));
  if (instants.length === 2 && model.fixed) return `${kind}: runs both passes of a repeated hour`;
  if (model.fixed) return `${kind}: runs a time skipped by a spring-forward gap later, shifted by the gap`;
  return `${kind}: runs a time that a spring-forward gap skips, shifted past the gap`;
}
