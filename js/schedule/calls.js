// The schedule calls of a durable engine's public class (RedisDelayQueue, PostgresDelayQueue):
// schedule(), unschedule(), schedules(), pauseSchedule(), resumeSchedule(), trigger() and
// nextRuns(), written once. Each checks its arguments (./spec.js: a TypeError or RangeError
// naming the argument, before anything is sent), then asks the queue whether it is open (a
// closed queue rejects with ClosedError), then hands the call to the engine's schedules role
// (js/redis/schedules.js, js/postgres/schedules.js), which runs it in one script or one
// transaction. A call that places an occurrence tells the queue's consumer of the new head, so
// that a take waiting for a later one wakes for it.

import { checkNextRuns, checkScheduleCall, checkScheduleId } from "./spec.js";

/** A schedule() call, checked: its spec, the value's JSON text, and a cron rule (or null). @typedef {Awaited<ReturnType<typeof checkScheduleCall>>} CheckedSchedule */

/**
 * What an engine's schedules role does once a call is checked: `resume` and `trigger` resolve
 * `{ done, head }`, head the due time placed (server ms), or undefined or Infinity for none.
 * @typedef {object} ScheduleRole
 * @property {(checked: CheckedSchedule) => Promise<any>} schedule
 * @property {(id: string) => Promise<boolean>} unschedule
 * @property {() => Promise<any[]>} list
 * @property {(id: string) => Promise<boolean>} pause
 * @property {(id: string) => Promise<{ done: boolean, head: number | undefined }>} resume
 * @property {(id: string) => Promise<{ done: boolean, head: number | undefined }>} trigger
 * @property {(id: string, n: number) => Promise<number[]>} nextRuns
 */

export class ScheduleCalls {
  /** @type {ScheduleRole} */
  #role;
  #open;
  #sawHead;

  /**
   * @param {ScheduleRole} role the engine's schedules
   * @param {() => void} open throws ClosedError once the queue is closing (and starts what its first call needs)
   * @param {(head: number) => void} sawHead tells the queue's consumer of a head a call placed
   */
  constructor(role, open, sawHead) {
    this.#role = role;
    this.#open = open;
    this.#sawHead = sawHead;
  }

  /**
   * Creates or updates the schedule `id`; resolves with it, as schedules() lists it.
   * @param {unknown} id @param {unknown} rule @param {unknown} value @param {unknown} [opts]
   */
  async schedule(id, rule, value, opts) {
    const checked = await checkScheduleCall(id, rule, value, opts);
    this.#open();
    return this.#role.schedule(checked);
  }

  /** Removes the schedule `id` and its pending occurrence: true if there was one. @param {string} id */
  async unschedule(id) {
    checkScheduleId(id);
    this.#open();
    return this.#role.unschedule(id);
  }

  /** Every schedule of the queue, by id. */
  async list() {
    this.#open();
    return this.#role.list();
  }

  /** Places no new occurrence of the schedule `id` until resume(): true if it was running. @param {string} id */
  async pause(id) {
    checkScheduleId(id);
    this.#open();
    return this.#role.pause(id);
  }

  /** Places again the occurrence the schedule `id` waited for: true if it was paused. @param {string} id */
  async resume(id) {
    checkScheduleId(id);
    this.#open();
    return this.#placed(await this.#role.resume(id));
  }

  /** One extra run of the schedule `id` now, counted as a run: true if it was added. @param {string} id */
  async trigger(id) {
    checkScheduleId(id);
    this.#open();
    return this.#placed(await this.#role.trigger(id));
  }

  /** The next `n` (1 to 100) occurrences of the schedule `id` (epoch ms). @param {string} id @param {number} n */
  async nextRuns(id, n) {
    checkScheduleId(id);
    checkNextRuns(n);
    this.#open();
    return this.#role.nextRuns(id, n);
  }

  /** @param {{ done: boolean, head: number | undefined }} reply */
  #placed({ done, head }) {
    if (head !== undefined) this.#sawHead(head);
    return done;
  }
}
