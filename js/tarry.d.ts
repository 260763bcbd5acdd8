// Types for the npm package `tarry-queue`: what the browser, Node and Deno entries export
// (js/web.js, js/node.js, js/deno.js). The workerd entry adds DurableDelayQueue: workerd.d.ts.
// Hand-written; tests/types/surface.test.mjs fails when an entry's exports or a class's
// members differ from what is declared here.

/**
 * `tarry-queue`: what its browser, Node, Deno and Bun entries export (and the Workers entry,
 * which adds `DurableDelayQueue`). A `DelayQueue` hands items out in deadline order once
 * their delay has expired; a `Scheduler` runs callbacks at their deadlines; both keep one
 * host timer, armed for the earliest deadline that matters. In a browser, `await init()`
 * once before the first queue; elsewhere the wasm is loaded at import.
 *
 * @module tarry-queue
 */

// `[Symbol.dispose]` and `using`: the lib that declares them, also for projects whose `lib`
// stops at es2022 and that have no @types/node.
/// <reference lib="esnext.disposable" />

/**
 * @internal
 * A global class's instance type where the project's types declare that global (lib "dom",
 * "webworker", @types/node, Deno), and `never` where none does, so that these types compile
 * with `lib: ["es2022"]` alone.
 */
type GlobalInstance<Name extends string> = typeof globalThis extends { [K in Name]: { prototype: infer I } }
  ? I
  : never;
/** @internal */
type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : never;

/** An AbortSignal (the DOM's, Node's or Deno's). */
export type AbortSignalLike = GlobalInstance<"AbortSignal">;

/**
 * Where the wasm is, for init(): a URL or a string (fetched), a Request, a Response or a
 * promise of one, its bytes, or a compiled WebAssembly.Module.
 */
export type WasmSource =
  | string
  | GlobalInstance<"URL">
  | GlobalInstance<"Request">
  | GlobalInstance<"Response">
  | PromiseLike<GlobalInstance<"Response">>
  | ArrayBuffer
  | ArrayBufferView
  | (WasmModule & object);

/**
 * Optional: the wasm comes inline with the package and is compiled on the first DelayQueue
 * or Scheduler, in every runtime, with no call. Without `source`, init() compiles it
 * asynchronously instead (off a page's main thread), so the first queue does not. With a
 * `source`, it loads the wasm from there instead of the inline bytes (a CDN, or a
 * WebAssembly.Module compiled elsewhere where a Content-Security-Policy forbids compiling
 * here); await it before the first queue, which until then throws an error saying so.
 * Idempotent: once loaded, it resolves at once. In Workers the wasm is loaded at import.
 */
export declare function init(source?: WasmSource): Promise<void>;

// ---- events and inspection: what every engine shares -------------------------------------

/**
 * An event a queue dispatches: a CustomEvent (the runtime's own) whose `detail` carries the
 * data. Typed as the runtime's Event where the project's types declare one (lib "dom",
 * @types/node, Deno).
 */
export type QueueEvent<D> = ([GlobalInstance<"Event">] extends [never]
  ? { readonly type: string }
  : GlobalInstance<"Event">) & { readonly detail: D };

/** A listener of one kind of event: a function, or an object with handleEvent. */
export type QueueListener<D> = ((event: QueueEvent<D>) => void) | { handleEvent(event: QueueEvent<D>): void };

/** addEventListener's options, as EventTarget takes them. */
export interface QueueListenerOptions {
  capture?: boolean;
  /** The listener leaves after its first event. */
  once?: boolean;
  passive?: boolean;
  /** The listener leaves when the signal aborts. */
  signal?: AbortSignalLike;
}

/**
 * A queue is an EventTarget (the runtime's own); these are its methods, typed by the
 * events it dispatches (`M`: each type's detail). Nobody listening costs nothing: a queue
 * builds an event only for a type someone listens to.
 */
export interface QueueEvents<M> {
  addEventListener<K extends keyof M & string>(
    type: K,
    listener: QueueListener<M[K]> | null,
    options?: boolean | QueueListenerOptions,
  ): void;
  removeEventListener<K extends keyof M & string>(
    type: K,
    listener: QueueListener<M[K]> | null,
    options?: boolean | { capture?: boolean },
  ): void;
  dispatchEvent(event: GlobalInstance<"Event">): boolean;
  /**
   * Calls `listener(detail, event)` for each event of `type`; returns the function that stops
   * it. Options as addEventListener's (`once`, `signal`).
   */
  on<K extends keyof M & string>(
    type: K,
    listener: (detail: M[K], event: QueueEvent<M[K]>) => void,
    options?: QueueListenerOptions,
  ): () => void;
}

/** A DelayQueue's events, posted (dispatched in a microtask) after the call that made them. */
export interface DelayQueueEvents<T = unknown> {
  /** An item was handed out (take, poll, drain, for await): its id if it has one, its value, and how late (ms). */
  delivered: { id: string | undefined; value: T; lateness: number };
  /**
   * An item's deadline passed while it was in the queue: once per item (again after a
   * reschedule), at the latest just before it is handed out. While a listener is attached
   * the queue's timer wakes for deadlines even when no take() waits.
   */
  expired: { id: string | undefined; value: T };
}

/** A Scheduler's events, posted after the wake-up that made them. */
export interface SchedulerEvents {
  /** A one-off callback ran, this late (ms). */
  delivered: { lateness: number };
  /** An occurrence of a schedule ran: the schedule's id, the occurrence's due time (epoch ms), how late. */
  occurrence: { schedule: string; due: number; lateness: number };
  /**
   * An occurrence did not run: "overlap" (the previous run was still running, overlap:
   * false), or "missed" (the schedule fell behind and its catchUp skips: one event for the
   * run of skipped occurrences, `due` the first).
   */
  skipped: { schedule: string; due: number; reason: "overlap" | "missed" };
}

/**
 * What an offer does when its id names an item already present: "replace" (default), "keep"
 * or "extend" (docs/semantics.md, "Offering an id that is present").
 */
export type IfExists = "replace" | "keep" | "extend";

/** What a durable queue (Redis, Durable Objects) holds under an id, as get() and the pages show it. */
export interface ItemInfo<T = unknown> {
  id: string;
  /** "pending": waiting, or due and not handed out; "inFlight": handed out, its outcome not stored; "dead": a dead letter. */
  state: "pending" | "inFlight" | "dead";
  value: T;
  /** Epoch ms: when it is due (a dead letter's: its last delivery's). */
  deadline: number;
  /** Deliveries begun so far. */
  attempt: number;
  /** In flight, where leases are kept (Redis): when it comes back unless acked, epoch ms. */
  leaseExpiry?: number;
  /** Dead: the error its last delivery failed with (an Error's name and message). */
  reason?: string;
  /** Dead: that Error's stack, when it had one. */
  stack?: string;
  /** Dead: when it died, epoch ms. */
  diedAt?: number;
  /** The schedule whose occurrence it is, if it is one. */
  schedule?: string;
}

/** One page of a listing, and the cursor to pass back as `after` for the next (undefined: the last page). */
export interface Page<I> {
  items: I[];
  next: string | undefined;
}

/** Which page: at most `limit` items (1 to 1000, default 100), after the cursor a page returned as `next`. */
export interface PageOptions {
  limit?: number;
  after?: string;
}

/** The events of a durable queue (Redis, Durable Objects), dispatched once the change they tell is stored. */
export interface DurableEngineEvents {
  /** An item was handed to a consumer: its attempt (1 for the first), its deadline (epoch ms) and how late (ms). */
  delivered: { id: string; attempt: number; deadline: number; lateness: number };
  /** A handler finished: the item is done. */
  acked: { id: string };
  /** A handler failed and the item comes back `delayMs` later. */
  nacked: { id: string; attempt: number; delayMs: number; reason: string };
  /** An item is handed out again because its last delivery never finished (a lease expired, an object reset). */
  redelivered: { id: string; attempt: number };
  /** An item became a dead letter. */
  dead: { id: string; reason: string };
  /** Something failed under the consumer (storage, the connection); the consumer carries on or rejects. */
  error: { error: unknown };
  /** The queue was paused, or resumed (by this process or, on Redis, any). */
  paused: Record<string, never>;
  resumed: Record<string, never>;
}

// ---- the durable engines' contract: what Redis, Durable Objects (and any next engine) share ---

/** An offer's options on a durable engine: the item's id, and what to do when an item has it. */
export interface DurableEngineOfferOptions {
  /** The item's id: a non-empty, well-formed string of at most 512 code units. Default: 22 random base64url characters (128 bits). */
  id?: string;
  /**
   * "replace" (default): a new item in its place (new value and deadline, attempts from 0).
   * "keep": the item present stays as it is. "extend": a pending item takes the later of
   * the two deadlines and the new value, keeping its attempts; an item in flight or dead is
   * replaced.
   */
  ifExists?: IfExists;
}

/** One item of `offerMany()` on a durable engine: its value, due `delayMs` from the call or at `deadline`. */
export type DurableEngineOfferItem<T = unknown> = { value: T; id?: string; ifExists?: IfExists } & (
  | { delayMs: number; deadline?: undefined }
  | { deadline: number | Date; delayMs?: undefined }
);

/** A dead letter, as `deadLetters()` lists it: an item whose last allowed delivery failed. */
export interface DurableEngineDeadLetter<T = unknown> {
  id: string;
  state: "dead";
  /** The value (undefined on an engine that could not read it back). */
  value: T | undefined;
  attempt: number;
  /** The deadline of its last delivery, epoch ms (undefined where it could not be read back). */
  deadline: number | undefined;
  /** What its last delivery failed with: an Error's name and message, or the text nack() was given (at most 1,000 characters). */
  reason: string;
  /** That Error's stack, when the reason came from one (at most 8,000 characters). */
  stack?: string;
  /** When it died, epoch ms. */
  diedAt: number;
}

/** The figures every durable engine's `stats()` gives; each engine adds its own. */
export interface DurableEngineStats {
  /** Items waiting for their deadline, or due and not yet handed out. */
  pending: number;
  /** Items handed out and not yet done. */
  inFlight: number;
  dead: number;
  /** Whether pause() stopped deliveries. */
  paused: boolean;
  /** Ms until the head's deadline (negative when overdue), or undefined when none is pending. */
  headDelay: number | undefined;
  /** This process: wake-ups of the consumer, those that found nothing due yet, and deliveries. */
  wakes: number;
  earlyWakes: number;
  delivered: number;
  /** This process: deliveries after the first (attempt ≥ 2), whatever ended the attempt before (a nack, an expired lease, a reset). */
  retried: number;
  /**
   * This process: deliveries whose previous attempt never finished (a lease expired, an object
   * was reset), as the `redelivered` event and the `tarry.queue.redelivered` counter count
   * them. Before this version it counted every delivery after the first: that is `retried`.
   */
  redelivered: number;
  /** This process: ms between deadline and delivery (median, 99th percentile, max). */
  latenessP50: number;
  latenessP99: number;
  latenessMax: number;
}

/**
 * The figures of an engine whose consumers `take()` (RedisDelayQueue, PostgresDelayQueue): the
 * contract's, and this process's consumer's own.
 */
export interface DurableEngineTakerStats extends DurableEngineStats {
  /** This process: waiting take() calls. */
  takers: number;
  /** This process: the queue's one timer, armed (1) or not (0). */
  timersArmed: number;
  timerArms: number;
  /** This process: wake-up messages received (Redis: on the head channel; Postgres: notifications). */
  messages: number;
  /** Deliveries no take received (it left, aborted or timed out, while the script or statement handing them out ran): put back. */
  released: number;
}

/** `process()`'s options on an engine whose consumers take (RedisDelayQueue, PostgresDelayQueue). */
export interface DurableEngineProcessOptions {
  /** Handlers that run at once at most, in this process. Default 1. */
  concurrency?: number;
  /** Ms before an item whose handler threw comes back: a number, or (attempt, error) => ms. Default 1000. */
  retryDelayMs?: number | ((attempt: number, error: unknown) => number);
}

/** What `process()` returns on an engine whose consumers take (RedisDelayQueue, PostgresDelayQueue). */
export interface DurableEngineWorker {
  /** Stops taking items and resolves when the running handlers have finished (and acked). */
  close(): Promise<void>;
}

/**
 * One delivery of an item by an engine whose consumers take (RedisDelayQueue,
 * PostgresDelayQueue), leased to this process until ack(), nack() or the lease runs out.
 */
export interface DurableEngineJob<T = unknown> {
  readonly id: string;
  readonly value: T;
  /** The deadline it was due at: epoch ms by the server's clock. */
  readonly deadline: number;
  /** 1 for the first delivery, 2 after one nack or expired lease, ... */
  readonly attempt: number;
  /** For an occurrence of a schedule, the schedule's id (then `deadline` is its due time); undefined for any other item. */
  readonly schedule: string | undefined;
  /** Done: the item is removed. False if this delivery had lost its lease (then nothing changes). */
  ack(): Promise<boolean>;
  /** Not done: back after delayMs (default 0), or to the dead letters after the last attempt. False if the lease was lost. */
  nack(options?: { delayMs?: number; reason?: unknown }): Promise<boolean>;
  /** Keeps the lease ms more from now (default: visibilityTimeout). False if it was lost. */
  extend(ms?: number): Promise<boolean>;
}

/**
 * What an engine whose consumers take (RedisDelayQueue, PostgresDelayQueue) adds to the
 * contract, declared once: take(), the async iterator, process() and clear(). `Job` and
 * `Worker` are the engine's own job and worker types.
 */
export interface DurableEngineConsumer<T, Job extends DurableEngineJob<T>, Worker extends DurableEngineWorker> {
  /**
   * The next due item, leased to this process; rejects when `signal` aborts or the queue
   * closes. Without a timeout it resolves only with a job.
   */
  take(options?: { signal?: AbortSignalLike; timeout?: undefined }): Promise<Job>;
  /** With a `timeout` (ms): undefined when it passes with nothing due. */
  take(options?: TakeOptions): Promise<Job | undefined>;
  /** `for await (const job of queue)`: takes jobs as they come due, until close(). */
  [Symbol.asyncIterator](): AsyncIterator<Job>;
  /** Runs handler for each due item, acks on success, nacks (retry after retryDelayMs) on a throw. */
  process(handler: (value: T, job: Job) => unknown, options?: DurableEngineProcessOptions): Worker;
  /** Removes every item (pending, in flight and dead) and every schedule. */
  clear(): Promise<void>;
}

/**
 * The contract of a durable engine (RedisDelayQueue, DurableDelayQueue, and any engine to
 * come): items named by string ids, kept outside the process, due by the engine's clock,
 * delivered at least once in deadline order (FIFO among ties), with attempts, retries and
 * dead letters, pages to inspect them, pause and resume, and recurring schedules. Every
 * method returns a Promise; bad input rejects naming the argument and changes nothing; after
 * `close()` each rejects with ClosedError. How items are consumed is each engine's own
 * (`take()` and `process()` on Redis, `deliver()` from a Durable Object's alarm).
 * `Stats`, `Dead` and `Events` are the engine's own `stats()`, dead letters and events: these
 * or more.
 */
export interface DurableEngine<
  T = unknown,
  Stats extends DurableEngineStats = DurableEngineStats,
  Dead extends DurableEngineDeadLetter<T> = DurableEngineDeadLetter<T>,
  Events extends DurableEngineEvents = DurableEngineEvents,
> extends QueueEvents<Events> {
  /** The queue's name: what metrics and the dashboard call it. */
  readonly name: string;
  /** Offers value due `delayMs` after this call; resolves with its id once stored. */
  offer(value: T, delayMs: number, options?: DurableEngineOfferOptions): Promise<string>;
  /** Offers value due at a wall-clock time (epoch ms or a Date), by the engine's clock. */
  offerAt(value: T, deadline: number | Date, options?: DurableEngineOfferOptions): Promise<string>;
  /** Checks every item, then offers them in order; resolves to their ids. */
  offerMany(items: DurableEngineOfferItem<T>[]): Promise<string[]>;
  /** Removes a pending item: true if it was pending. */
  cancel(id: string): Promise<boolean>;
  /** A new delay for a pending item, counted from this call: true if it was pending. */
  reschedule(id: string, delayMs: number): Promise<boolean>;
  /** Ms until a pending item's deadline (negative when overdue), or undefined. */
  delayOf(id: string): Promise<number | undefined>;
  /** The number of pending items. */
  size(): Promise<number>;
  /** Counts by state, and this process's delivery figures. */
  stats(): Promise<Stats>;
  /** What the queue holds under `id` (pending, in flight or dead), or undefined. */
  get(id: string): Promise<ItemInfo<T> | undefined>;
  /** A page of pending items in deadline order (FIFO among ties); O(log n + limit) whatever the page. */
  pending(options?: PageOptions): Promise<Page<ItemInfo<T>>>;
  /** A page of the items handed out whose outcome is not stored yet. */
  inFlight(options?: PageOptions): Promise<Page<ItemInfo<T>>>;
  /** A page of dead letters in order of death; pass `next` back as `after` (undefined: the last page). */
  deadLetters(options?: PageOptions): Promise<Page<Dead>>;
  /** A dead letter back into the queue, due now, attempts reset: true if it was dead. */
  retryDead(id: string): Promise<boolean>;
  /** Removes a dead letter: true if it was dead. */
  deleteDead(id: string): Promise<boolean>;
  /** Removes the dead letters that died at least `olderThan` ms ago (default 0: all); resolves to how many. */
  purgeDead(options?: { olderThan?: number }): Promise<number>;
  /** Stops deliveries (for every consumer; offers still land): true if it was running. */
  pause(): Promise<boolean>;
  /** Lets deliveries run again: true if it was paused. */
  resume(): Promise<boolean>;
  /**
   * Creates the schedule `id`, or updates it (its chain goes on when its rule is the same):
   * each occurrence is an item with `value`, delivered like any other, with `job.schedule` =
   * `id` and `job.deadline` = its due time. Resolves with the schedule.
   */
  schedule(id: string, rule: ScheduleRule, value: T, options?: ScheduleOptions): Promise<ScheduleInfo<T>>;
  /** Removes a schedule and its pending occurrence (a run in flight finishes): true if there was one. */
  unschedule(id: string): Promise<boolean>;
  /** Every schedule of the queue, by id: one that ended (its rule, maxRuns or stopAt) stays, with no nextRun. */
  schedules(): Promise<ScheduleInfo<T>[]>;
  /** Places no new occurrence of the schedule `id` until resumeSchedule() (a run in flight finishes): true if it was running. */
  pauseSchedule(id: string): Promise<boolean>;
  /**
   * Places again the occurrence the schedule `id` waited for when paused; if it came due
   * meanwhile, catchUp decides what runs: true if it was paused.
   */
  resumeSchedule(id: string): Promise<boolean>;
  /**
   * One extra run of the schedule `id` now, an occurrence due now (`<id>@<now>`): it counts
   * as a run (runs, lastRun, maxRuns), the pending occurrence stays. With overlap false,
   * while a run of the schedule lasts (handed out, or waiting for its retry), nothing is
   * added and it resolves false; false too for an ended schedule or none. A paused schedule
   * runs and stays paused.
   */
  trigger(id: string): Promise<boolean>;
  /**
   * The next `n` (1 to 100) occurrences of the schedule `id` (epoch ms), from its rule: the
   * pending one first, none after stopAt, no more than maxRuns leaves. Reads the schedule
   * only; empty for an ended schedule or none.
   */
  nextRuns(id: string, n: number): Promise<number[]>;
  /** Refuses later calls and resolves once those already made have finished. */
  close(): Promise<void>;
  /** close(), for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

// ---- schedules: one set of types for every engine (redis.d.ts and workerd.d.ts re-export them) ---

/**
 * Options of a schedule, on every engine: Scheduler#every and Scheduler#cron, and a durable
 * queue's `schedule()` (docs/schedules.md has the rules).
 */
export interface ScheduleOptions {
  /**
   * What runs when the schedule fell behind (the occurrence after the one due was due as
   * well: the process slept or was stopped, the event loop was blocked): "one" (default)
   * runs the latest missed occurrence once, for all of them; "all" runs each, in order,
   * one per wake-up; "none" runs none of them. An occurrence late by less than that runs.
   */
  catchUp?: "one" | "all" | "none";
  /**
   * false (default): an occurrence that comes due while the previous run is still running
   * (its callback's promise pending; on Redis, its delivery in flight) is skipped and
   * counted (`skipped`), and a missed one that catchUp "all" runs waits for that run to
   * end; true: it runs. A DurableDelayQueue keeps the option with the schedule: its
   * deliver() runs one handler at a time, so its occurrences never overlap.
   */
  overlap?: boolean;
  /**
   * every: the first occurrence (default one period from now; one in the past sets the
   * phase). cron: no occurrence before it (default now).
   */
  start?: number | Date;
  /**
   * The runs after which the schedule ends (a whole number ≥ 1; a run now, `trigger()`,
   * counts): its last run leaves no occurrence pending. Default: no limit.
   */
  maxRuns?: number;
  /** No occurrence after this instant (a Date or epoch ms): the schedule ends at the last one at or before it. */
  stopAt?: number | Date;
}

/** Options of Scheduler#every: a schedule's, and its name. */
export interface SchedulerScheduleOptions extends ScheduleOptions {
  /** The schedule's id (unique among this scheduler's active and paused schedules). Default: "schedule-N". */
  id?: string;
}

/** A durable schedule's rule: a fixed rate (`every` ms), or a cron expression in an IANA time zone (default "UTC"). */
export type ScheduleRule =
  | { every: number; cron?: undefined; timezone?: undefined }
  | { cron: string; timezone?: string; every?: undefined };

/** A durable schedule, as `schedule()` and `schedules()` give it. Times are epoch ms. */
export type ScheduleInfo<T = unknown> = (
  | { every: number; cron?: undefined }
  | { cron: string; timezone: string; every?: undefined }
) & {
  id: string;
  /** every: its first occurrence (the phase); cron: the start given, or undefined. */
  start: number | undefined;
  catchUp: "one" | "all" | "none";
  overlap: boolean;
  /** What each occurrence carries as its value (from a DurableDelayQueue: a copy). */
  value: T;
  /** The due time of its pending occurrence; undefined when its rule has no more. */
  nextRun: number | undefined;
  /** The due time of the latest occurrence handed out, or undefined. */
  lastRun: number | undefined;
  /** Occurrences handed out so far. */
  runs: number;
  /** Occurrences skipped because the previous run was still running (overlap: false; always 0 on a DurableDelayQueue). */
  skipped: number;
  /** The runs after which it ends, or undefined. */
  maxRuns: number | undefined;
  /** The instant after which no occurrence is due (epoch ms), or undefined. */
  stopAt: number | undefined;
  /** Whether pauseSchedule() paused it. */
  paused: boolean;
};

// ---- in memory ------------------------------------------------------------------------------

/** What the methods of a closed queue or scheduler throw, and what its waiting calls reject with. */
export declare class ClosedError extends Error {
  constructor(what: string);
  readonly name: "ClosedError";
}

/**
 * A handle names one offered item: a plain integer in [2^26, 2^53), never reused while its
 * queue lives, and naming nothing in another queue (docs/semantics.md, "Handles and ids").
 */
export type Handle = number;

export interface DelayQueueOptions {
  /**
   * Most items held at once (an integer from 1 to 2^26 = 67,108,864); `offer()` returns null
   * and `put()` waits when full. Default: unbounded (up to 2^26 items; beyond, offer() throws).
   */
  capacity?: number;
  /**
   * Default true: while a take() or put() waits, the process keeps running (Node, Bun, Deno),
   * as a pending setTimeout would, also on an empty queue. false: waiting calls do not hold
   * the process open (the timer is unref'd).
   */
  keepAlive?: boolean;
  /**
   * The one function the queue reads the time through: monotonic milliseconds. Default:
   * `performance.now()`, looked up at each call (so fake timers that replace it are followed).
   * For node:test's `mock.timers`, which does not fake performance.now(): `() => Date.now()`.
   */
  clock?: () => number;
}

/** Options of an unbounded queue: no `capacity`, so `offer()` never returns null. */
export interface UnboundedOptions extends DelayQueueOptions {
  capacity?: undefined;
}

/** Options of a bounded queue: `offer()` returns null when it is full. */
export interface BoundedOptions extends DelayQueueOptions {
  capacity: number;
}

export interface TakeOptions {
  /** Rejects the take with the signal's reason when aborted; the item stays in the queue. */
  signal?: AbortSignalLike;
  /** Milliseconds to wait; the take resolves undefined when they pass with nothing expired. */
  timeout?: number;
}

export interface OfferOptions {
  /**
   * A name for the item that the application chooses (an order's id, say): `cancel`,
   * `reschedule` and `delayOf` take it as they take the item's handle, and snapshots keep it,
   * so the item can be cancelled by it after `restore()` in another process (where handles
   * name nothing). A non-empty, well-formed string of at most 512 UTF-16 code units.
   */
  id?: string;
  /**
   * What the offer does when an item already has the id; it returns that item's handle.
   * "replace" (default): the item gets the new value and deadline, as if offered anew.
   * "keep": the item stays as it is (throttle). "extend": the item gets the new value, and
   * the new deadline if that is later, else keeps its own (debounce).
   */
  ifExists?: IfExists;
}

export interface OfferManyOptions {
  /** `ids[i]` names `values[i]` as OfferOptions.id does (undefined: no id), in batch order. */
  ids?: readonly (string | undefined)[];
  /** What each offer whose id an item has (one offered earlier in the batch, too) does: as OfferOptions.ifExists. */
  ifExists?: IfExists;
}

export interface PutOptions extends OfferOptions {
  /** Rejects the put with the signal's reason if aborted before there was room; nothing is added. */
  signal?: AbortSignalLike;
}

/** Figures for monitoring a queue. */
export interface DelayQueueStats {
  /** Items in the queue, expired or not. */
  size: number;
  /** take() calls waiting now. */
  takers: number;
  /**
   * The queue's host timer, armed now: 0 or 1. A take() waiting on an empty queue arms none
   * (there is no deadline to wake for); what keeps the process running then is one handle
   * shared by every queue of the process, which never fires.
   */
  timersArmed: number;
  /** Host timers armed so far (each re-arm counts). */
  timerArms: number;
  /** Times the timer fired. */
  wakes: number;
  /** Times it fired before anything was due (early host timers, chained long waits) and was re-armed. */
  earlyWakes: number;
  /** Items handed to take() calls (whether a timer woke them or the item was already due). */
  delivered: number;
  /** How long after its deadline each of those items was handed out, in ms: median, 99th percentile, max. */
  latenessP50: number;
  latenessP99: number;
  latenessMax: number;
}

/**
 * The arguments `Args` when no value of `T` is a thenable; otherwise one argument that
 * nothing can be, so that `new DelayQueue<Promise<number>>()` (and `restore()` of such
 * items) does not compile, as offering a thenable throws at run time: the Promise of a
 * take() would adopt it. (A constraint on DelayQueue's `T` cannot say this: TypeScript takes
 * `T extends (T extends PromiseLike<unknown> ? never : unknown)` for a circular constraint.)
 */
export type UnlessThenable<T, Args extends unknown[]> = 0 extends 1 & T
  ? Args // any
  : true extends (T extends { then: (...args: never[]) => unknown } ? true : never)
    ? [thenablesAreRefused: "a DelayQueue holds no thenables (a take() would adopt them): wrap them, e.g. { promise }"]
    : Args;

/** What offer() and offerAt() return: a handle, or null only when a bounded queue is full. */
export type OfferResult<Bounded extends boolean> = Bounded extends false ? Handle : Handle | null;

/**
 * A delay queue: items come out in deadline order (FIFO among equal deadlines) once their
 * delay has expired. One host timer per queue, armed only while a take() waits.
 *
 * `Bounded` is `false` for a queue built without `capacity` (offer() always gives a handle)
 * and `true` for one built with it (offer() gives null when full).
 */
export interface DelayQueue<T = unknown, Bounded extends boolean = boolean>
  extends AsyncIterable<T>,
    QueueEvents<DelayQueueEvents<T>> {
  /** Items in the queue, expired or not. */
  readonly size: number;
  /** Room left before offer() returns null; Infinity when unbounded. */
  readonly remainingCapacity: number;
  /** Whether close() was called. */
  readonly closed: boolean;
  /** Figures for monitoring: size, waiting takes, the timer (0 or 1 armed), wake-ups, lateness. */
  readonly stats: DelayQueueStats;
  /**
   * Adds `value` due `delayMs` from now (negative: already expired). null when a bounded queue
   * is full. Throws a TypeError for undefined or a thenable value (a Promise would adopt it);
   * null is a value. `{ id }` names the item (see OfferOptions): an item with that id meets
   * the offer as `ifExists` says (replaced by default), in place, and that needs no room.
   */
  offer(value: T, delayMs: number, options?: OfferOptions): OfferResult<Bounded>;
  /**
   * Adds `values[i]` due `delays[i]` ms from now (or all due `delays` ms when one number),
   * with one clock reading for the batch. Throws, adding nothing, on a bad value, delay or
   * id, or when the batch's new items do not fit.
   */
  offerMany(
    values: readonly T[],
    delays: number | readonly number[] | Float64Array,
    options?: OfferManyOptions,
  ): Handle[];
  /** Like offer(), but throws a RangeError when full. */
  add(value: T, delayMs: number, options?: OfferOptions): Handle;
  /** Adds `value` due at a wall-clock time (epoch ms or Date), converted once to the monotonic clock. */
  offerAt(value: T, deadline: number | Date, options?: OfferOptions): OfferResult<Bounded>;
  /**
   * Adds `value`, waiting for room when bounded; the delay counts from the call. Never
   * throws: a bad argument rejects. With an `id` that an item has, it meets that item at once, as `ifExists` says.
   */
  put(value: T, delayMs: number, options?: PutOptions): Promise<Handle>;
  /** The expired head, removed, or undefined. */
  poll(): T | undefined;
  /**
   * The next expired item when it expires; rejects on abort or close, and with a TypeError
   * carrying the item on `error.value` if its value became a thenable after it was offered
   * (so no item is lost to Promise adoption). Never throws: a bad option rejects (a negative
   * or NaN timeout is a RangeError naming options.timeout). Without a timeout it resolves
   * only with an item.
   */
  take(options?: TakeOptions & { timeout?: undefined }): Promise<T>;
  /** With a `timeout`: undefined when it passes with nothing expired. */
  take(options?: TakeOptions): Promise<T | undefined>;
  /** The head, expired or not. */
  peek(): T | undefined;
  /** The head, expired or not; throws a RangeError when empty. */
  element(): T;
  /**
   * Removes an item by handle or id and returns its value; undefined for a stale or unknown
   * handle, or an id no item has. O(log n). A number no call returns as a handle (1.5, -1)
   * is a TypeError.
   */
  cancel(item: Handle | string): T | undefined;
  /** Moves an item's deadline (by handle or id) to `delayMs` from now; false when none is named. O(log n). */
  reschedule(item: Handle | string, delayMs: number): boolean;
  /** Milliseconds until the item (by handle or id) is due (negative when overdue); undefined when none is named. */
  delayOf(item: Handle | string): number | undefined;
  /** Removes and returns up to `max` expired items, in order. */
  drain(max?: number): T[];
  /** Removes every item; handles given out so far stay stale. */
  clear(): void;
  /** All items in deadline order, without removing them. */
  toArray(): T[];
  /**
   * The pending items as plain data (deadlines in epoch ms, deadline order, FIFO ties);
   * the queue is unchanged. Throws a TypeError naming the first item whose value JSON
   * cannot carry (functions, symbols, bigints, NaN, Dates, Maps, class instances, cycles).
   */
  snapshot(): Snapshot<T>;
  /** Hands every overdue item to waiting takes now, without waiting for the (maybe throttled) timer. */
  flush(): void;
  /** Rejects waiting takes and puts, disarms the timer, frees the wasm memory. */
  close(): void;
  /** close(), for `using queue = new DelayQueue()`. */
  [Symbol.dispose](): void;
  /** `for await (const item of queue)`: items as they expire, until close(). */
  [Symbol.asyncIterator](): AsyncIterator<T>;
  readonly [Symbol.toStringTag]: string;
}

export interface DelayQueueConstructor {
  /** An unbounded queue (no `capacity`): offer() always returns a handle. */
  new <T = unknown>(...options: UnlessThenable<T, [options?: UnboundedOptions]>): DelayQueue<T, false>;
  /** A bounded queue: offer() returns null when it is full. */
  new <T = unknown>(...options: UnlessThenable<T, [options: BoundedOptions]>): DelayQueue<T, true>;
  readonly prototype: DelayQueue<any>;
  /**
   * A new queue holding a snapshot's items: overdue ones first, all in deadline order,
   * FIFO among ties; never due before their written deadline. A malformed snapshot throws
   * a TypeError (a RangeError when it holds more than `capacity`) and builds nothing.
   */
  restore<T = unknown>(
    snapshot: Snapshot<T>,
    ...options: UnlessThenable<T, [options?: UnboundedOptions]>
  ): DelayQueue<T, false>;
  restore<T = unknown>(
    snapshot: Snapshot<T>,
    ...options: UnlessThenable<T, [options: BoundedOptions]>
  ): DelayQueue<T, true>;
  /** Data of unknown shape (read back from storage): checked whole at run time. */
  restore(snapshot: unknown, options?: UnboundedOptions): DelayQueue<unknown, false>;
  restore(snapshot: unknown, options: BoundedOptions): DelayQueue<unknown, true>;
}

export declare const DelayQueue: DelayQueueConstructor;

/** One pending item of a snapshot: its value, its absolute wall-clock deadline, and its id if it has one. */
export interface SnapshotItem<T = unknown> {
  /** The id it was offered with; absent when it has none. restore() gives it back. */
  id?: string;
  value: T;
  /** Epoch milliseconds (a whole number when written by snapshot()). */
  deadline: number;
}

/** A queue's pending items as plain, JSON-serialisable data, in deadline order. */
export interface Snapshot<T = unknown> {
  version: 1;
  /** The number of items; restore() refuses a snapshot whose array is shorter or longer. */
  size: number;
  items: SnapshotItem<T>[];
}

export interface SchedulerOptions {
  /** false: pending callbacks do not hold a Node or Deno process open. Default: true. */
  keepAlive?: boolean;
  /** The scheduler's clock, as DelayQueueOptions.clock. Default: `performance.now()`. */
  clock?: () => number;
  /** Gets the error when a callback throws or its promise rejects. Default: console.error. */
  onerror?: ((error: unknown) => void) | null;
  /**
   * The `cron` export of `tarry-queue/cron`, which `Scheduler#cron` needs: the cron rules
   * load apart because they bring croner (about 10 kB gzipped) that pages without cron
   * should not load.
   */
  cron?: ((expression: string, options?: { timezone?: string }) => OccurrenceRule) | null;
}

/**
 * The occurrences of a schedule, from its rule alone: `next(after)` is the first
 * occurrence strictly after `after`, `latest(at)` the last at or before `at` (epoch ms),
 * undefined when there is none.
 */
export interface OccurrenceRule {
  next(after: number): number | undefined;
  latest(at: number): number | undefined;
}

/** Options of Scheduler#cron. */
export interface CronScheduleOptions extends SchedulerScheduleOptions {
  /** The IANA time zone the expression is read in. Default: "UTC". */
  timezone?: string;
}

/** A Scheduler is an EventTarget: its events (`delivered`, `occurrence`, `skipped`). */
export interface Scheduler extends QueueEvents<SchedulerEvents> {}

/** A recurring schedule, as Scheduler#every and Scheduler#cron return it. */
export interface Schedule {
  /** Its name: the `id` option, or "schedule-N", unique in this process. */
  readonly id: string;
  /** When the next occurrence is due; undefined when none will run (paused, cancelled or ended). */
  nextRun(): Date | undefined;
  /** "ended": the rule has no more occurrences, maxRuns or stopAt was reached, or the scheduler was closed. */
  readonly state: "active" | "paused" | "cancelled" | "ended";
  /** Occurrences run so far. */
  readonly runs: number;
  /** Occurrences skipped because the previous run was still running (overlap: false). */
  readonly skipped: number;
  /** The due time of the latest occurrence run. */
  readonly lastRun: Date | undefined;
  /** Stops it for good (a run in progress finishes); false when it was cancelled or ended. */
  cancel(): boolean;
  /** Stops running occurrences until resume(); false when it was not active. */
  pause(): boolean;
  /** Runs again: the occurrence pending when paused comes back, catchUp deciding if it was due meanwhile; false when it was not paused. */
  resume(): boolean;
  /** One extra run now (Scheduler#trigger); false when it did not run. */
  trigger(): boolean;
  /** The next `n` (1 to 100) occurrences (Scheduler#nextRuns). */
  nextRuns(n: number): Date[];
  readonly [Symbol.toStringTag]: string;
}

/**
 * Runs callbacks once at their deadlines, in deadline order (FIFO among ties), with one
 * host timer for all of them: `setTimeout` with O(log n) cancel and reschedule by handle.
 * A failing callback does not stop the others: its error goes to `onerror`. One wake-up
 * runs the callbacks that were due when it began; one scheduled meanwhile, even at delay 0,
 * waits for the next wake-up. Pending callbacks keep a Node or Deno process running, as a
 * pending `setTimeout` does, unless `keepAlive: false`.
 */
export declare class Scheduler {
  constructor(options?: SchedulerOptions);
  /** Gets the error when a callback throws or rejects; console.error when null. */
  onerror: ((error: unknown) => void) | null;
  /** Callbacks waiting to run. */
  readonly size: number;
  /** Whether close() was called. */
  readonly closed: boolean;
  /** Figures for monitoring, as a DelayQueue's; `delivered` counts callbacks run. */
  readonly stats: DelayQueueStats;
  /** Runs `fn(...args)` once, `delayMs` from now. */
  schedule<A extends unknown[]>(fn: (...args: A) => unknown, delayMs: number, ...args: A): Handle;
  /** Runs `fn(...args)` once at a wall-clock time (epoch ms or Date). */
  scheduleAt<A extends unknown[]>(fn: (...args: A) => unknown, deadline: number | Date, ...args: A): Handle;
  /**
   * Runs `fn(due)` at a fixed rate, on the scheduler's one timer: occurrence k is due at
   * start + k·periodMs (a whole number of ms), never drifting with the time runs take.
   */
  every(periodMs: number, fn: (due: Date) => unknown, options?: SchedulerScheduleOptions): Schedule;
  /**
   * Runs `fn(due)` at the occurrences of a cron expression (five fields, or six with
   * seconds first) in `timezone` (IANA, default "UTC"), with Vixie cron's rule at
   * daylight-saving changes. Needs `new Scheduler({ cron })`, `cron` from tarry-queue/cron.
   */
  cron(expression: string, fn: (due: Date) => unknown, options?: CronScheduleOptions): Schedule;
  /**
   * Runs a schedule (its id or its Schedule) once now, beside its occurrences: the run counts
   * (runs, lastRun, maxRuns), its pending occurrence stays. With overlap false, while a run of
   * it lasts, nothing runs and it returns false; false too for a cancelled, ended or unknown
   * schedule. A paused schedule runs and stays paused.
   */
  trigger(schedule: string | Schedule): boolean;
  /**
   * The next `n` (1 to 100) occurrences of a schedule (its id or its Schedule), from its rule:
   * none after stopAt, no more than maxRuns leaves; a paused one's from the occurrence resume() places. Empty for a
   * cancelled, ended or unknown schedule.
   */
  nextRuns(schedule: string | Schedule, n: number): Date[];
  /** Forgets a pending callback; false when the handle names none. */
  cancel(handle: Handle): boolean;
  /** Moves a pending callback to `delayMs` from now; false when the handle names none. */
  reschedule(handle: Handle, delayMs: number): boolean;
  /** Milliseconds until a pending callback runs; undefined when none. */
  delayOf(handle: Handle): number | undefined;
  /** Drops every pending callback and disarms the timer. */
  close(): void;
  /** close(), for `using scheduler = new Scheduler()`. */
  [Symbol.dispose](): void;
  readonly [Symbol.toStringTag]: string;
}
