// The one host timer of a queue or scheduler. The binding says when it should fire
// (Deadlines#wakeAt); this module arms the host's setTimeout for that, looked up at call
// time (window, worker, Node, Deno, workerd, and fake timers that replace it).
//
// And what holds a process open while calls wait with no deadline to arm a timer for (a
// take() on an empty queue): `holdProcess()` / `releaseProcess()`, a count shared by every
// queue of the process, behind ONE handle that never fires: in Node (and Bun) a MessagePort
// that is ref'd while the count is above zero, in Deno a timer for the longest wait, ref'd
// the same way (Deno cannot unref a port). So a wait costs a counter, and a ref or unref when
// the count leaves or reaches zero (~50 ns), never a timer of its own; fake timers do not see
// the Node port (their "run all timers" would spin on an interval). Browsers and workerd
// have no process to hold: there it does nothing.

/** The longest wait a host timer takes (2³¹−1 ms, about 24.8 days); longer ones are chained. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class Timer {
  /** @type {ReturnType<typeof setTimeout> | null} */
  #id = null;
  /** The deadline armed for (on the queue's clock), or Infinity. */
  #at = Infinity;
  #clock;
  #keepAlive;
  #fire;
  /** Times armed so far. */
  arms = 0;

  /**
   * @param {{now(): number}} clock the queue's clock
   * @param {boolean} keepAlive false: the timer does not hold a Node or Deno process open
   * @param {() => void} onFire
   */
  constructor(clock, keepAlive, onFire) {
    this.#clock = clock;
    this.#keepAlive = keepAlive;
    this.#fire = () => {
      this.#id = null;
      this.#at = Infinity;
      onFire();
    };
  }

  /** Whether the timer is armed. */
  get armed() {
    return this.#id !== null;
  }

  /**
   * Arms the timer for `deadline` on the clock, or disarms it for Infinity; nothing to do
   * when it is armed for that already. A host that refuses a timer (workerd at module
   * scope) throws, and the timer is then disarmed (never two armed at once).
   */
  set(deadline) {
    if (deadline === this.#at) return;
    if (deadline === Infinity) return this.disarm();
    // Round up: a timer rounded down fires before the deadline, finds nothing due and
    // costs a second arm. A wait longer than the host takes is chained.
    const ms = Math.min(Math.max(Math.ceil(deadline - this.#clock.now()), 0), MAX_TIMER_MS);
    this.disarm();
    const id = setTimeout(this.#fire, ms);
    if (!this.#keepAlive) unref(id);
    this.#id = id;
    this.#at = deadline;
    this.arms++;
  }

  disarm() {
    if (this.#id !== null) clearTimeout(this.#id);
    this.#id = null;
    this.#at = Infinity;
  }
}

function unref(id) {
  if (typeof id === "object" && id !== null && typeof id.unref === "function") id.unref();
  else if (typeof Deno !== "undefined" && typeof Deno.unrefTimer === "function") Deno.unrefTimer(id);
}

/** Waits holding the process open now. */
let holders = 0;
/** ref(on): holds the process open or lets it go; null until first needed, then a no-op where there is no process. */
let refProcess = null;
/** Deno's timers, looked up when this module loads, so that fake timers installed later do not see the handle. */
const hostSetInterval = globalThis.setInterval;

/** One more wait that must keep the process running, like a pending setTimeout would. */
export function holdProcess() {
  if (holders++ === 0) (refProcess ??= processHandle())(true);
}

/** One wait less (served, timed out, aborted, or its queue closed). */
export function releaseProcess() {
  if (--holders === 0) refProcess(false);
}

/** The host's one handle that holds the process open while ref'd, as a function ref(on). */
function processHandle() {
  const deno = globalThis.Deno;
  if (typeof deno?.refTimer === "function" && typeof deno.unrefTimer === "function") {
    const id = /** @type {number} */ (/** @type {unknown} */ (hostSetInterval(() => {}, MAX_TIMER_MS)));
    deno.unrefTimer(id);
    return (on) => (on ? deno.refTimer(id) : deno.unrefTimer(id));
  }
  const node = typeof globalThis.process?.versions?.node === "string";
  const workerd = globalThis.navigator?.userAgent === "Cloudflare-Workers";
  if (node && !workerd && typeof globalThis.MessageChannel === "function") {
    const { port1 } = new MessageChannel();
    const { ref, unref } = port1;
    if (typeof ref === "function" && typeof unref === "function") {
      port1.onmessage = () => {}; // started (a port that is not started holds nothing)
      unref.call(port1);
      return (on) => (on ? ref.call(port1) : unref.call(port1));
    }
    port1.close();
  }
  return () => {};
}
