// The one host timer of tarry-queue/redis in a process. Every consumer (js/redis/consumer.js),
// every connection's call limits and slot-migration retries (js/redis/connection.js) and every
// client hub's clock reading (js/redis/client.js) asks for an `Alarm`, which behaves as a
// js/engine/timer.js `Timer` of its own; all of them together arm ONE `Timer`, for the earliest
// alarm, so that ten thousand queues in a process cost one host timer, not ten thousand.
//
// The alarms wait in an indexed binary heap by deadline (each alarm knows its place):
// arming, re-arming and disarming an alarm cost O(log n), finding the earliest O(1). When the
// host timer fires, every alarm due by the clock is taken out and fired, in deadline order
// (equal deadlines in the order they were armed); an alarm not due yet stays (the host timer
// can fire ~1 ms early, and is then armed again), so an alarm never fires before its deadline.
//
// Keep-alive as with a timer of its own: the host timer holds the process open while at least
// one armed alarm was made with keepAlive (a consumer while a take waits), and not otherwise
// (a call's limit must not keep a process running). Where the host's timer handle cannot be
// ref'd and unref'd after it was made (browsers and workerd have no process to hold), nothing
// changes.

import { Timer } from "./timer.js";
import { localNow } from "./clock.js";

/** @type {Alarm[]} the armed alarms, a binary heap by (deadline, order armed) */
const heap = [];
/** Armed alarms made with keepAlive. */
let holding = 0;
/** Arming order: the tie-break among equal deadlines. */
let armed = 0;
/** The host timer: ref'd only while `holding` > 0 (so its own keepAlive is set anew at each arm). */
let host = /** @type {Timer | null} */ (null);
let hostHolds = false;
let firing = false;

export class Alarm {
  /** The deadline armed for (local ms), or Infinity. */
  at = Number.POSITIVE_INFINITY;
  /** Its place in the heap, or -1. */
  pos = -1;
  order = 0;
  /** Taken out as due by the firing pass, and neither re-armed nor disarmed since. */
  due = false;
  /** Times armed so far. */
  arms = 0;
  keepAlive;
  fire;

  /**
   * @param {boolean} keepAlive whether, while armed, it holds a Node or Deno process open
   * @param {() => void} onFire
   */
  constructor(keepAlive, onFire) {
    this.keepAlive = keepAlive;
    this.fire = onFire;
  }

  /** Whether it is armed. */
  get armed() {
    return this.pos >= 0;
  }

  /**
   * Arms it for `deadline` (local ms), or disarms it for Infinity; nothing to do when it is
   * armed for that already.
   * @param {number} deadline
   */
  set(deadline) {
    this.due = false;
    if (deadline === this.at) return;
    if (deadline === Number.POSITIVE_INFINITY) return this.disarm();
    const was = this.pos >= 0;
    this.at = deadline;
    this.order = armed++;
    this.arms++;
    if (was) {
      up(this.pos);
      down(this.pos);
    } else {
      this.pos = heap.length;
      heap.push(this);
      up(this.pos);
      if (this.keepAlive) holding++;
    }
    rearm();
  }

  disarm() {
    this.due = false;
    if (this.pos < 0) return;
    remove(this);
    rearm();
  }
}

/** Alarms armed now, for tests and stats. */
export function armedAlarms() {
  return heap.length;
}

/** @param {Alarm} a */
function remove(a) {
  const i = a.pos;
  const last = /** @type {Alarm} */ (heap.pop());
  if (last !== a) {
    heap[i] = last;
    last.pos = i;
    up(i);
    down(last.pos);
  }
  a.pos = -1;
  a.at = Number.POSITIVE_INFINITY;
  if (a.keepAlive) holding--;
}

/** @param {Alarm} a @param {Alarm} b */
const before = (a, b) => a.at < b.at || (a.at === b.at && a.order < b.order);

/** @param {number} i */
function up(i) {
  const a = heap[i];
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!before(a, heap[p])) break;
    heap[i] = heap[p];
    heap[i].pos = i;
    i = p;
  }
  heap[i] = a;
  a.pos = i;
}

/** @param {number} i */
function down(i) {
  const a = heap[i];
  const n = heap.length;
  for (;;) {
    let c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && before(heap[c + 1], heap[c])) c++;
    if (!before(heap[c], a)) break;
    heap[i] = heap[c];
    heap[i].pos = i;
    i = c;
  }
  heap[i] = a;
  a.pos = i;
}

/** Arms the host timer for the earliest alarm (not while firing: that re-arms once at its end). */
function rearm() {
  if (firing) return;
  const holds = holding > 0;
  if (host === null || holds !== hostHolds) {
    // A timer's keepAlive is fixed when made: a new one when that changes (rare: the first
    // waiting take, the last one served).
    host?.disarm();
    host = new Timer({ now: localNow }, holds, fireDue);
    hostHolds = holds;
  }
  host.set(heap.length ? heap[0].at : Number.POSITIVE_INFINITY);
}

/**
 * The host timer fired: every alarm due fires, in deadline order; then the timer is armed
 * again. An alarm that one of them re-arms or disarms before its turn does not fire, and one
 * re-armed for a time already past fires in the next pass (as a timer of its own would).
 */
function fireDue() {
  firing = true;
  const now = localNow();
  /** @type {Alarm[]} */
  const due = [];
  while (heap.length && heap[0].at <= now) {
    const a = heap[0];
    remove(a);
    a.due = true;
    due.push(a);
  }
  try {
    for (const a of due) {
      if (!a.due) continue;
      a.due = false;
      try {
        a.fire();
      } catch (e) {
        // One alarm's failure stops none of the others; it is thrown where nothing catches it.
        queueMicrotask(() => {
          throw e;
        });
      }
    }
  } finally {
    firing = false;
    rearm();
  }
}
