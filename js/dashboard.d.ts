// Types of tarry-queue/dashboard: a web dashboard for durable queues, as a request handler.

/**
 * `tarry-queue/dashboard`: a small web app that shows what durable queues hold (counts,
 * throughput and lateness over the last minutes, upcoming deadlines, items in flight, dead
 * letters, search by id) and, with a token or an auth hook, retries and deletes dead letters
 * and pauses and resumes the queue. One `(Request) => Promise<Response>` handler: it mounts
 * in Node's http (through `nodeListener`), Express, Hono, Deno, Bun and Workers.
 *
 * @module tarry-queue/dashboard
 */

import type { DurableEngine, Page, PageOptions } from "./tarry.js";

/**
 * @internal
 * A global class's instance type where the project's types declare that global (lib "dom",
 * @types/node, Deno), and `never` where none does.
 */
type GlobalInstance<Name extends string> = typeof globalThis extends { [K in Name]: { prototype: infer I } }
  ? I
  : never;
/** The runtime's Request (Fetch API). */
export type RequestLike = GlobalInstance<"Request">;
/** The runtime's Response (Fetch API). */
export type ResponseLike = GlobalInstance<"Response">;

/**
 * What the dashboard needs of a queue: the engine contract's inspection calls (`DurableEngine`,
 * tarry.d.ts), and its changes where it has them. RedisDelayQueue and DurableDelayQueue (and
 * any engine that keeps the contract) are InspectableQueues.
 */
export interface InspectableQueue
  extends Pick<DurableEngine, "stats" | "get" | "pending" | "inFlight">,
    Partial<Pick<DurableEngine, "name" | "retryDead" | "deleteDead" | "purgeDead" | "pause" | "resume">> {
  /** A page; or the dead letters as one array, which the dashboard shows as one page. */
  deadLetters(options?: PageOptions): Promise<Page<object> | object[]>;
}

export interface DashboardOptions {
  /**
   * Allows changes (retry, delete, purge, pause, resume) to requests that carry it, in an
   * `X-Tarry-Token` header (the page asks for it, or takes it from `#token=` in its address
   * once). At least 8 characters. Without `token` and `auth` the dashboard is read-only.
   */
  token?: string;
  /**
   * The host application's own check, called for every API request: `write` is true for a
   * change. Resolve false to refuse it (401). With `token` too, a change needs both.
   */
  auth?: (request: RequestLike, access: { write: boolean }) => boolean | Promise<boolean>;
  /** Show the items' values (default false: they may hold personal data). */
  values?: boolean;
  /** Where the handler is mounted when the request's path still has it (Hono, Deno, Bun): "/tarry". Default "". */
  basePath?: string;
  /** Origins besides the dashboard's own whose pages may make changes (e.g. behind a proxy). */
  origins?: string[];
  /** The page's title. Default "tarry". */
  title?: string;
}

/**
 * The dashboard for `queues` (one queue, an array of queues named by their `name`, or an
 * object of queues by name) as a request handler.
 */
export declare function dashboard(
  queues: InspectableQueue | InspectableQueue[] | Record<string, InspectableQueue>,
  options?: DashboardOptions,
): (request: RequestLike) => Promise<ResponseLike>;

/** Node's `http` (and Express) listener that hands each request to `handler` as a Request. */
export declare function nodeListener(
  handler: (request: RequestLike) => Promise<ResponseLike>,
): (req: NodeRequestLike, res: NodeResponseLike) => void;

/** The part of Node's IncomingMessage that nodeListener reads. */
export interface NodeRequestLike {
  method?: string;
  url?: string;
  headers: Record<string, string | string[] | undefined>;
  socket?: object & { encrypted?: boolean };
  on(event: string, listener: (...args: any[]) => void): unknown;
}

/** The part of Node's ServerResponse that nodeListener writes. */
export interface NodeResponseLike {
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body?: any): unknown;
  destroy(): unknown;
}
