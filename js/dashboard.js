// tarry-queue/dashboard: a small web app that shows what durable queues hold and lets an
// operator act on them, served as one standard `(Request) => Promise<Response>` handler, so
// it mounts wherever Request and Response are: Node's http (through `nodeListener`, also for
// Express), Hono, Deno.serve, Bun.serve, a Worker's fetch, a Durable Object's fetch. It works
// against the engine contract's methods only (stats, get, pending, inFlight, deadLetters,
// retryDead, deleteDead, purgeDead, pause, resume), so it serves every engine that has them.
//
// Security, because a dashboard that changes a queue is a door:
// - A request whose Host is not one the dashboard is reached by (loopback names by default,
//   and `allowedHosts`: js/dashboard/hosts.js) is refused first, so that a site that rebinds
//   its name to 127.0.0.1 cannot read it.
// - Read-only unless a `token` or an `auth` hook is given; then every change is a POST that
//   carries the token (an `X-Tarry-Token` or `Authorization: Bearer` header) or passes the
//   hook, with a JSON body and, from a browser, an `Origin` header naming this dashboard's
//   own origin (or one of `origins`): a link or a form on another site cannot make one (a
//   form cannot set the header or the content type; a cross-origin fetch that does is
//   preflighted, and no preflight is answered). A request with no Origin is not a browser's
//   (browsers send one on every POST): it may change with the token in a header, which no
//   cookie supplies, but not on the `auth` hook alone.
// - Values stay out of every response unless `values: true` (they may hold personal data),
//   and so does the text of a record that does not read as JSON (`raw`).
// - An internal error's text (which may quote a connection URL or a stack) goes to
//   `onerror`, redacted, never into a response: a 500 says "internal error" and an id that
//   the log line carries too.
// - The page renders every id, value and reason as text (textContent, never HTML), and the
//   responses carry a Content-Security-Policy that allows no inline script and no other origin.
// - Pages are at most MAX_LIMIT items, whatever the request asks; bodies at most MAX_BODY.
//
// History for the charts: each stats request (the page polls every 2 s) records a sample of
// the queue's counts and delivery figures, at most one per SAMPLE_MS, kept for HISTORY_MS,
// in memory (per handler, shared by every viewer; empty again after a restart).

import { MAX_BODY } from "./dashboard/node.js";
import { checkOptions, queuesByName } from "./dashboard/options.js";
import { page, pageScript, pageStyle } from "./dashboard/page.js";
import { json, redirect, respond, text } from "./dashboard/responses.js";
import { scheduleReport } from "./dashboard/schedules.js";
import { redact } from "./engine/redact.js";

export { nodeListener } from "./dashboard/node.js";

/** Items per page: the page asks for 50, a request for more gets at most this. */
const MAX_LIMIT = 200;
/** Dead letters read at most to list them newest first (the engines list them oldest first). */
const NEWEST_MAX = 1000;
const SAMPLE_MS = 2000;
const HISTORY_MS = 15 * 60_000;
const TOKEN_HEADER = "x-tarry-token";

/** What can be done to a schedule (the change's name, as the page asks for it), by the engine method each calls. */
const SCHEDULE_CHANGES = {
  pauseSchedule: "pauseSchedule",
  resumeSchedule: "resumeSchedule",
  trigger: "trigger",
  unschedule: "unschedule",
};

/**
 * The dashboard as a request handler.
 *
 * @param {object | object[] | Record<string, object>} queues a queue, an array of queues
 *   (named by their `name`), or an object of queues by name
 * @param {{
 *   token?: string,
 *   auth?: (request: Request, access: { write: boolean }) => boolean | Promise<boolean>,
 *   values?: boolean,
 *   basePath?: string,
 *   origins?: string[],
 *   allowedHosts?: string[] | true,
 *   onerror?: (error: unknown, id: string) => void,
 *   title?: string,
 * }} [options]
 * @returns {(request: Request) => Promise<Response>}
 */
export function dashboard(queues, options = {}) {
  const byName = queuesByName(queues);
  const o = checkOptions(options);
  /** @type {Map<string, ReturnType<typeof sampleOf>[]>} */
  const history = new Map([...byName.keys()].map((name) => [name, []]));
  const writable = o.token !== undefined || o.auth !== undefined;
  const html = page({ title: o.title });

  return async function handle(request) {
    try {
      if (!(request instanceof Request)) throw new TypeError("the dashboard handles a Request");
      const url = new URL(request.url);
      if (!o.hostAllowed(url)) {
        return text(
          403,
          `this dashboard does not answer the host ${url.host} (options.allowedHosts lists the names it answers)`,
        );
      }
      if (!url.pathname.startsWith(o.basePath)) return text(404, "not found");
      const path = url.pathname.slice(o.basePath.length);
      if (path === "") return redirect(`${url.pathname}/`);
      const method = request.method;
      if (method === "GET" || method === "HEAD") {
        if (path === "/") return respond(200, html, "text/html; charset=utf-8");
        if (path === "/app.js") return respond(200, pageScript, "text/javascript; charset=utf-8");
        if (path === "/app.css") return respond(200, pageStyle, "text/css; charset=utf-8");
      }
      if (!path.startsWith("/api/")) return text(404, "not found");
      const parts = path.slice(5).split("/").map(decodeURIComponent);
      if (method === "GET") {
        if (!(await hook(request, false))) return json(403, { error: "the auth hook refused this request" });
        if (parts.length === 1 && parts[0] === "queues") {
          // write: whether changes can be made here at all (with the token, when there is one).
          const write = writable && (o.auth === undefined || (await hook(request, true)));
          return json(200, { queues: [...byName.keys()], write, values: o.values });
        }
        if (parts.length === 1 && parts[0] === "session") {
          return json(200, { write: writable && (await refusal(request)) === null });
        }
        const queue = byName.get(parts[1]);
        if (parts[0] !== "queues" || parts.length !== 3 || queue === undefined)
          return json(404, { error: "no such queue" });
        return await read(queue, parts[1], parts[2], url.searchParams);
      }
      if (method === "POST") {
        if (!writable) return json(403, { error: "this dashboard is read-only (no token or auth was given)" });
        const refused = checkOrigin(request, url, o.origins, o.token !== undefined && tokenOf(request) !== "");
        if (refused !== null) return json(403, { error: refused });
        if (!(request.headers.get("content-type") ?? "").startsWith("application/json")) {
          return json(415, { error: "a change is a POST with a JSON body" });
        }
        const why = await refusal(request);
        if (why !== null) return json(why.status, { error: why.error });
        const queue = byName.get(parts[1]);
        if (parts[0] !== "queues" || parts.length !== 3 || queue === undefined)
          return json(404, { error: "no such queue" });
        return await change(queue, parts[2], await bodyOf(request));
      }
      return json(405, { error: `${method} is not served here` });
    } catch (e) {
      if (e instanceof BadRequest) return json(400, { error: redact(e.message) });
      if (e?.status === 501) return json(501, { error: e.message });
      // The error's text stays on the server: it may quote a connection URL, a path, a stack.
      const id = errorId();
      o.onerror(e instanceof Error ? redactedCopy(e) : redact(String(e)), id);
      return json(500, { error: `internal error (id ${id}: the server's log has it)`, id });
    }
  };

  /** Whether the auth hook (when there is one) lets this request in. */
  async function hook(request, write) {
    return o.auth === undefined || Boolean(await o.auth(request, { write }));
  }

  /** Why a change by this request is refused ({ status, error }), or null when it may change. */
  async function refusal(request) {
    if (o.token !== undefined && !sameToken(tokenOf(request), o.token)) {
      return { status: 401, error: "the token is missing or wrong" };
    }
    if (!(await hook(request, true))) return { status: 403, error: "the auth hook refused this change" };
    return null;
  }

  async function read(queue, name, what, params) {
    const limit = limitOf(params.get("limit"));
    const after = params.get("after") ?? undefined;
    switch (what) {
      case "stats": {
        const stats = await call(queue, "stats");
        const samples = /** @type {ReturnType<typeof sampleOf>[]} */ (history.get(name));
        const now = Date.now();
        if (samples.length === 0 || now - samples[samples.length - 1].t >= SAMPLE_MS) {
          samples.push(sampleOf(stats, now));
          while (samples.length > 0 && samples[0].t < now - HISTORY_MS) samples.shift();
        }
        return json(200, { now, stats: plain(stats), history: samples });
      }
      case "dead": {
        const order = params.get("order") ?? "death";
        if (order !== "death" && order !== "newest") throw new BadRequest('order must be "death" or "newest"');
        const newest = order === "newest" ? await newestDead(queue, limit, after) : null;
        if (newest !== null) return json(200, newest);
        const note =
          order === "newest"
            ? `more than ${NEWEST_MAX} dead letters: shown in order of death, oldest first`
            : undefined;
        return json(200, { ...(await list(queue, "deadLetters", limit, after)), note });
      }
      case "pending":
        return json(200, await list(queue, "pending", limit, after));
      case "inflight":
        return json(200, await list(queue, "inFlight", limit, after));
      case "schedules": {
        const report = await scheduleReport(queue, { values: o.values });
        if (report === null) return json(200, { schedules: [], total: 0, actions: [] });
        const schedules = report.schedules.map((x) =>
          o.values ? { ...x, value: preview(/** @type {any} */ (x).value) } : x,
        );
        return json(200, {
          ...report,
          schedules,
          actions: Object.keys(SCHEDULE_CHANGES).filter((a) => typeof queue[SCHEDULE_CHANGES[a]] === "function"),
        });
      }
      case "item": {
        const id = params.get("id");
        if (id === null || id === "") throw new BadRequest("item needs ?id=");
        const item = await call(queue, "get", id);
        // Not found is an answer, not an error: { item: null }.
        return json(200, { item: item === undefined ? null : shown(item) });
      }
      default:
        return json(404, { error: "not found" });
    }
  }

  /** A page of one of the engine's lists, as the page shows it. */
  async function list(queue, method, limit, after) {
    const got = await call(queue, method, { limit, after });
    // An engine whose deadLetters() resolves to an array (RedisDelayQueue before pages): one page.
    const pageOf = Array.isArray(got) ? { items: got, next: undefined } : got;
    return { items: pageOf.items.map(shown), next: pageOf.next };
  }

  /**
   * A page of the dead letters newest first, or null when there are more than NEWEST_MAX
   * (the engines list them in order of death only, so this reads them all: bounded).
   */
  async function newestDead(queue, limit, after) {
    let from = 0;
    if (after !== undefined) {
      if (!/^n\d{1,6}$/.test(after)) throw new BadRequest("after must be a cursor this list returned as next");
      from = Number(after.slice(1));
    }
    const letters = [];
    let cursor;
    for (let read = 0; read < NEWEST_MAX; read += MAX_LIMIT) {
      const got = await call(queue, "deadLetters", { limit: MAX_LIMIT, after: cursor });
      const pageOf = Array.isArray(got) ? { items: got, next: undefined } : got;
      letters.push(...pageOf.items);
      cursor = pageOf.next;
      if (cursor === undefined) break;
    }
    if (cursor !== undefined) return null;
    letters.reverse();
    const items = letters.slice(from, from + limit).map(shown);
    return { items, next: from + limit < letters.length ? `n${from + limit}` : undefined };
  }

  async function change(queue, what, body) {
    switch (what) {
      case "retry":
        return json(200, { done: await call(queue, "retryDead", idOf(body)) });
      case "delete":
        return json(200, { done: await call(queue, "deleteDead", idOf(body)) });
      case "purge": {
        const olderThan = body.olderThan ?? 0;
        if (typeof olderThan !== "number" || !(olderThan >= 0)) throw new BadRequest("olderThan must be a number >= 0");
        return json(200, { removed: await call(queue, "purgeDead", { olderThan }) });
      }
      case "pause":
        return json(200, { done: await call(queue, "pause") });
      case "resume":
        return json(200, { done: await call(queue, "resume") });
      default:
        if (Object.hasOwn(SCHEDULE_CHANGES, what))
          return json(200, { done: await call(queue, SCHEDULE_CHANGES[what], idOf(body)) });
        return json(404, { error: "not found" });
    }
  }

  /**
   * An item as the page shows it: its value only if the operator opted in, and so the text of
   * a record that does not read (`raw`), which holds the value as Redis has it.
   */
  function shown(item) {
    const { value, raw, ...rest } = item;
    if (!o.values) return rest;
    return raw === undefined ? { ...rest, value: preview(value) } : { ...rest, raw: cut(String(raw)) };
  }
}

// ---- helpers ---------------------------------------------------------------------------------

class BadRequest extends Error {}

/**
 * A POST's Origin must be this dashboard's own (or an allowed one); browsers always send it on
 * a POST. A request without one is a program's, not a page's: it may change only with the
 * token in a header (`tokenInHeader`), which a browser never adds on its own as it does a cookie.
 */
function checkOrigin(request, url, origins, tokenInHeader) {
  const origin = request.headers.get("origin");
  if (origin === null) {
    return tokenInHeader
      ? null
      : "a change needs an Origin header (a browser sends one) or the token in an Authorization: Bearer header";
  }
  if (origin !== url.origin && !origins.includes(origin)) return `a change from another origin (${origin}) is refused`;
  if (request.headers.get("sec-fetch-site") === "cross-site") return "a change from another site is refused";
  return null;
}

/** The token a request carries: `X-Tarry-Token`, else `Authorization: Bearer …`; "" for none. */
function tokenOf(request) {
  const given = request.headers.get(TOKEN_HEADER);
  if (given !== null && given !== "") return given;
  const m = /^Bearer +(\S+) *$/i.exec(request.headers.get("authorization") ?? "");
  return m === null ? "" : m[1];
}

/** A short id that names one internal error in the response and in the log. */
function errorId() {
  return crypto.randomUUID().slice(0, 8);
}

/** A copy of an error with its message and stack redacted (the original may be the engine's). */
function redactedCopy(e) {
  const copy = new Error(redact(e.message));
  copy.name = e.name;
  copy.stack = typeof e.stack === "string" ? redact(e.stack) : copy.stack;
  return copy;
}

function sameToken(given, token) {
  if (given.length !== token.length) return false;
  let diff = 0;
  for (let i = 0; i < token.length; i++) diff |= given.charCodeAt(i) ^ token.charCodeAt(i);
  return diff === 0;
}

function limitOf(raw) {
  if (raw === null) return 50;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new BadRequest("limit must be a whole number >= 1");
  return Math.min(n, MAX_LIMIT);
}

function idOf(body) {
  if (typeof body.id !== "string" || body.id === "") throw new BadRequest("the body needs an id (a string)");
  return body.id;
}

async function bodyOf(request) {
  const text = await request.text();
  if (text.length > MAX_BODY) throw new BadRequest("the body is too large");
  let body;
  try {
    body = text === "" ? {} : JSON.parse(text);
  } catch {
    throw new BadRequest("the body is not JSON");
  }
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new BadRequest("the body must be a JSON object");
  return body;
}

/** Calls a contract method; an engine without it answers 501, a bad argument 400. */
async function call(queue, method, ...args) {
  if (typeof queue[method] !== "function") {
    throw Object.assign(new Error(`this queue has no ${method}()`), { status: 501 });
  }
  try {
    return await queue[method](...args);
  } catch (e) {
    if (e instanceof TypeError || e instanceof RangeError) throw new BadRequest(e.message);
    throw e;
  }
}

/**
 * One history sample of a queue's stats: its counts, and the delivery figures of every process
 * where the engine keeps them (RedisDelayQueue's `all`), else the queue's own.
 */
function sampleOf(s, t) {
  const f = s.all ?? s;
  return {
    t,
    pending: s.pending,
    inFlight: s.inFlight,
    dead: s.dead,
    delivered: f.delivered,
    p50: f.latenessP50,
    p99: f.latenessP99,
  };
}

/** Stats as JSON carries them (undefined fields dropped, numbers kept). */
function plain(stats) {
  return JSON.parse(JSON.stringify(stats));
}

/** A value as the page shows it: its JSON, cut at 2000 characters. */
function preview(value) {
  let s;
  try {
    s = JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return cut(s);
}

function cut(s) {
  return s.length > 2000 ? `${s.slice(0, 2000)}…` : s;
}
