// Types of tarry-queue/redis: a delay queue on Redis shared by many processes.

/**
 * `tarry-queue/redis`: a delay queue in Redis (≥ 7) or Redis Cluster, shared by many
 * processes. Redis decides time, every change is one atomic Lua script, and a delivered item
 * is leased to its consumer until it is acked, so a consumer that dies loses nothing. Needs
 * the optional peer dependency `ioredis`.
 *
 * @module tarry-queue/redis
 */

import type {
  DurableEngine,
  DurableEngineConsumer,
  DurableEngineDeadLetter,
  DurableEngineEvents,
  DurableEngineJob,
  DurableEngineOfferItem,
  DurableEngineTakerStats,
  DurableEngineWorker,
} from "./tarry.js";

/** JSON data: what an item's value may be. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * JSON data of the shape `T`, for the constraint of an item type: `T extends Jsonable<T>`.
 * Unlike `T extends Json` it takes interfaces (`interface Order { ... }`), which have no
 * index signature, and it refuses what is not JSON data anywhere inside (a function or
 * method, a Date, a Map, undefined, a bigint): what the queue refuses at run time.
 * Optional properties are allowed (absent, as JSON has them). A mapped type, not a
 * conditional one on `T`: TypeScript takes the latter for a circular constraint.
 */
export type Jsonable<T> =
  | ({ [K in keyof T]: JsonableProperty<T[K]> } & (string | number | boolean | object) & { call?: never })
  | null;
/** A property of JSON data: JSON itself, or an object whose properties are (an interface). */
export type JsonableProperty<V> = V extends Json
  ? V
  : V extends (...args: never[]) => unknown
    ? never
    : V extends object
      ? Jsonable<V>
      : never;

export interface RedisDelayQueueOptions {
  /**
   * A redis:// URL, ioredis options, or an ioredis `Redis` or `Cluster` instance (the queue
   * then also opens a `duplicate()` of it for pub/sub). Default "redis://127.0.0.1:6379".
   */
  redis?: string | object;
  /** The queue's name: every process that opens it shares its items. No braces. */
  name: string;
  /** Prepended to the queue's keys, which are `${prefix}{${name}}:...`. Default "tarry:". */
  prefix?: string;
  /**
   * The hash tags (so, on a Redis Cluster, the primaries) the queue's items are spread over,
   * 1 to 64: an id always goes to the same one. Default 1, the keys under `{name}`. A queue
   * opened with another number than it was created with refuses every call. See
   * docs/redis.md#one-queue-over-several-shards.
   */
  shards?: number;
  /** Ms a delivered item stays leased to its consumer before it comes back. Default 5000. */
  visibilityTimeout?: number;
  /** Deliveries before an item goes to the dead letters. Default 5. */
  maxAttempts?: number;
  /** Ms between the checks that cover a missed pub/sub message. Default 5000. */
  safetyInterval?: number;
  /** How far back (ms) the server accepts a call's stamped time. Default 1000. */
  clockTolerance?: number;
  /**
   * Ms within which every call settles: a call that found no connection by then rejects
   * (never sent), one sent and not answered rejects saying it may or may not have taken
   * effect. Default 5000.
   */
  commandTimeout?: number;
  /**
   * Replicas that must have each offer before `offer()`, `offerAt()` and `offerMany()` resolve
   * (Redis `WAIT` after each offer script), and how long (ms) to wait for them: default 1000,
   * less than the command timeout. When fewer confirm in time the call rejects with a
   * WaitForReplicasError; the item is stored on the primary then. Not with a Redis Cluster
   * client. Default: none (an offer resolves once the primary has it).
   */
  waitForReplicas?: { count: number; timeout?: number };
  /** Errors no call can report (background wake-ups, lease extension, connection errors). Default: console.error. */
  onerror?: (error: unknown) => void;
  /**
   * The queue's events are those of every process (each once, in the order Redis ran them,
   * read from a capped stream that the scripts fill while some process observes), instead
   * of this process's own. Default false.
   */
  observe?: boolean;
}

/** What an offer does when its id names an item already present, and an offer's options: the engine contract's (tarry.d.ts). */
export type { IfExists, DurableEngineOfferOptions as OfferOptions } from "./tarry.js";

/** One item of offerMany(): the engine contract's (tarry.d.ts), of JSON data. */
export type OfferItem<T extends Jsonable<T> = Json> = DurableEngineOfferItem<T>;

/** The Redis keys of a queue (or of one shard of it) and its pub/sub channel. */
export interface RedisQueueKeys {
  items: string;
  pending: string;
  leased: string;
  dead: string;
  seq: string;
  reasons: string;
  meta: string;
  events: string;
  observed: string;
  schedules: string;
  channel: string;
}

/** One delivery of an item, leased to this process until ack(), nack() or the lease runs out: the contract's (tarry.d.ts). */
export type RedisJob<T extends Jsonable<T> = Json> = DurableEngineJob<T>;

/** A schedule's rule, options and description: one declaration for every engine (tarry.d.ts). */
export type { ScheduleInfo, ScheduleOptions as RedisScheduleOptions, ScheduleRule } from "./tarry.js";

/** A dead letter, as the engine contract has it (tarry.d.ts), and its text when it could not be read. */
export interface DeadLetter<T extends Jsonable<T> = Json> extends DurableEngineDeadLetter<T> {
  /** The value, or undefined when it could not be read (then `raw` holds the text). */
  value: T | undefined;
  /** When it was dead-lettered, epoch ms by the server's clock. */
  diedAt: number;
  raw?: string;
}

/** The engine contract's figures (tarry.d.ts; lateness: server time at transfer minus deadline), and Redis's own. */
export interface RedisQueueStats extends DurableEngineTakerStats {
  /** Every process's figures, kept in Redis: deliveries and outcomes, and their lateness (ms). */
  all: {
    delivered: number;
    acked: number;
    nacked: number;
    /** Leases that expired, their items back in the queue. */
    redelivered: number;
    dead: number;
    latenessP50: number;
    latenessP99: number;
    latenessMax: number;
  };
}

/** What process() returns: the contract's (tarry.d.ts). */
export type RedisWorker = DurableEngineWorker;

/**
 * A delay queue in Redis: items named by string ids, due by the server's clock, handed out in
 * deadline order (FIFO among ties) to one consumer at a time, at least once. It keeps the
 * engine contract (`DurableEngine`, tarry.d.ts: offers, cancel, reschedule, the pages, dead
 * letters, pause and resume, schedules, events, close), with times by the server's clock and
 * pages of O(log n + limit); `close()` also rejects waiting takes, lets process() handlers
 * finish and closes the connections it opened. Consumers take() or process() its items.
 */
export declare class RedisDelayQueue<T extends Jsonable<T> = Json> {
  constructor(options: RedisDelayQueueOptions);
  /**
   * The queue's keys (all under the hash tag {name}) and its pub/sub channel; on a queue of
   * more than one shard, those of the shard whose tag is the name, and every shard's keys in
   * `shards`, in shard order.
   */
  readonly keys: RedisQueueKeys & { shards?: RedisQueueKeys[] };
}

/**
 * A RedisDelayQueue is an EventTarget: delivered, acked, nacked, redelivered (a lease expired
 * and the item came back), dead, error, paused and resumed; `released` (a delivery no take
 * received went back) with `observe: true`. By default the events of this process (its
 * deliveries and their outcomes, the leases its take script put back, pause and resume as its
 * consumer hears them); with `observe: true` those of every process.
 */
export interface RedisDelayQueue<T extends Jsonable<T> = Json>
  extends DurableEngine<T, RedisQueueStats, DeadLetter<T>, DurableEngineEvents & { released: { id: string } }>,
    DurableEngineConsumer<T, RedisJob<T>, RedisWorker> {}

/** What a closed queue's methods throw and its waiting takes reject with: the class tarry-queue exports. */
export { ClosedError } from "./tarry.js";

/**
 * What an `offerMany` rejects with when some of its scripts did not answer: `stored` names
 * the items stored for sure, `ids` every item's id in the batch's order (generated ones
 * included). Offering the batch again with those ids and `ifExists: "keep"` stores the rest
 * and leaves the stored ones as they are.
 */
export declare class OfferManyError extends Error {
  constructor(message: string, stored: string[], ids: string[], cause: Error);
  readonly name: "OfferManyError";
  /** The ids of the items stored for sure. */
  readonly stored: string[];
  /** Every item's id, in the batch's order. */
  readonly ids: string[];
}

/**
 * What `offer()`, `offerAt()` and `offerMany()` reject with when fewer replicas than
 * `waitForReplicas.count` confirmed an offer within `waitForReplicas.timeout`: the item is
 * stored on the primary, and is lost only if the primary fails before a replica has it.
 * Offering it again with the same id and `ifExists: "keep"` is safe.
 */
export declare class WaitForReplicasError extends Error {
  constructor(message: string, acknowledged: number, required: number);
  readonly name: "WaitForReplicasError";
  /** The replicas that confirmed the offer in time. */
  readonly acknowledged: number;
  /** The replicas asked for: `waitForReplicas.count`. */
  readonly required: number;
}
