// A brute-force model of cron occurrences in a time zone, to check croner (through
// tarry-queue/cron) and cron-parser against: it reads nothing but the fields (as sets of
// values, not as a string) and the zone's UTC offsets, which it learns from Intl by
// sampling and bisection, and applies the rule as the docs state it, day by day:
//
// - a day matches by month, and by day of month OR day of week when neither field is `*`
//   (the other one alone when one is `*`);
// - each matching local time of a matching day is resolved to instants: one when it exists
//   once; two in a fall-back's repeated hour (a fixed-time expression, whose seconds,
//   minute and hour fields each name one value, takes the first only); none in a
//   spring-forward gap, where a fixed-time expression runs at the first instant after
//   the gap instead (when that is still the same local day);
// - instants are occurrences: equal ones count once.
//
// Slow (a day's matching times one by one) and obviously right, which is the point.

const HOUR = 3_600_000;
const DAY = 86_400_000;

/** Intl's wall time in `zone` at `t` (whole seconds), as epoch ms of that wall time read as UTC. */
function wallOf(format, t) {
  const p = {};
  for (const { type, value } of format.formatToParts(new Date(t))) p[type] = Number(value);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour % 24, p.minute, p.second);
}

/** A zone's UTC offsets over [from, to): offset(t) in ms, and its transitions. */
export class ZoneModel {
  /** [{ at, before, after }]: at `at` the offset changes from `before` to `after`. */
  transitions = [];
  #starts = [0];
  #offsets = [];

  constructor(zone, from = Date.UTC(2025, 5, 1), to = Date.UTC(2028, 5, 1)) {
    this.zone = zone;
    this.from = from;
    this.to = to;
    const format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    const off = (t) => wallOf(format, t) - t;
    // Sample every 12 hours (no zone changes twice within 12 hours), bisect each change to
    // the second.
    let t = from;
    let o = off(t);
    this.#offsets.push(o);
    for (let u = from + 12 * HOUR; u <= to; u += 12 * HOUR) {
      const ou = off(u);
      if (ou !== o) {
        let lo = u - 12 * HOUR;
        let hi = u;
        while (hi - lo > 1000) {
          const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
          if (off(mid) === o) lo = mid;
          else hi = mid;
        }
        this.transitions.push({ at: hi, before: o, after: ou });
        this.#starts.push(hi);
        this.#offsets.push(ou);
        o = ou;
      }
      t = u;
    }
  }

  /** The offset at instant `t` (epoch ms minus the wall time read as UTC, negated). */
  offset(t) {
    if (t < this.from || t > this.to) throw new RangeError(`the model of ${this.zone} covers 2025-06 to 2028-06 only`);
    const s = this.#starts;
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid] <= t) lo = mid;
      else hi = mid - 1;
    }
    return this.#offsets[lo];
  }

  /** The wall time at `t`, as epoch ms read as UTC. */
  wall(t) {
    return t + this.offset(t);
  }

  /**
   * The instants whose wall time is `wall` (read as UTC): [] in a gap, [t] or [t1, t2].
   * In a gap, `gapEnd` is the first instant after it.
   */
  resolve(wall) {
    const found = new Set();
    for (const o of this.#offsetsNear(wall)) {
      const t = wall - o;
      if (this.offset(t) === o) found.add(t);
    }
    const instants = [...found].sort((a, b) => a - b);
    if (instants.length > 0) return { instants };
    const tr = this.transitions.find((x) => x.at + x.before <= wall && wall < x.at + x.after);
    return { instants, gapEnd: tr?.at };
  }

  #offsetsNear(wall) {
    const set = new Set([this.offset(wall - 15 * HOUR), this.offset(wall + 15 * HOUR)]);
    for (const x of this.transitions) {
      if (Math.abs(x.at - wall) < 2 * DAY) {
        set.add(x.before);
        set.add(x.after);
      }
    }
    return set;
  }
}

/**
 * A cron expression as sets: { seconds, minutes, hours, days, months, weekdays } (arrays
 * of the values each field names; weekdays 0–6, Sunday 0), `domStar`/`dowStar` (the field
 * is `*`), and `fixed` (seconds, minute and hour each name one value).
 */
export class CronModel {
  constructor(fields, zone) {
    this.f = fields;
    this.zone = zone;
    this.fixed = fields.seconds.length === 1 && fields.minutes.length === 1 && fields.hours.length === 1;
    this.seconds = new Set(fields.seconds);
    this.minutes = new Set(fields.minutes);
    this.hours = new Set(fields.hours);
    this.days = new Set(fields.days);
    this.months = new Set(fields.months);
    this.weekdays = new Set(fields.weekdays);
    // The times of a matching day, in order, as ms after local midnight.
    this.times = [];
    for (const h of [...this.hours].sort((a, b) => a - b))
      for (const m of [...this.minutes].sort((a, b) => a - b))
        for (const s of [...this.seconds].sort((a, b) => a - b)) this.times.push(((h * 60 + m) * 60 + s) * 1000);
  }

  dayMatches(y, mo, d) {
    const { domStar, dowStar } = this.f;
    if (!this.months.has(mo)) return false;
    const dom = this.days.has(d);
    const dow = this.weekdays.has(new Date(Date.UTC(y, mo - 1, d)).getUTCDay());
    if (domStar && dowStar) return true;
    if (domStar) return dow;
    if (dowStar) return dom;
    return dom || dow;
  }

  /** The occurrences of one local day (midnight `day`, read as UTC), sorted. */
  occurrencesOn(day) {
    const z = this.zone;
    const date = new Date(day);
    if (!this.dayMatches(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate())) return [];
    const out = [];
    for (const time of this.times) {
      const { instants, gapEnd } = z.resolve(day + time);
      if (instants.length > 0) {
        if (this.fixed) out.push(instants[0]);
        else out.push(...instants);
      } else if (this.fixed && gapEnd !== undefined && Math.floor(z.wall(gapEnd) / DAY) * DAY === day) {
        out.push(gapEnd);
      }
    }
    return out.sort((a, b) => a - b);
  }

  /** The first `n` occurrences strictly after `after` and before `until`. */
  next(after, n, until) {
    const z = this.zone;
    let day = Math.floor(z.wall(after) / DAY) * DAY - DAY;
    const found = new Set();
    let past = 0; // days looked at after the n-th was found (two, for repeats that cross a midnight)
    for (; day < until + DAY && past < 2; day += DAY) {
      for (const t of this.occurrencesOn(day)) if (t > after) found.add(t);
      if (found.size >= n) past++;
    }
    return [...found]
      .filter((t) => t < until)
      .sort((a, b) => a - b)
      .slice(0, n);
  }
}
