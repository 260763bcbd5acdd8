// tarry-queue/dashboard: a small web app that shows what durable queues hold and lets an
// operator act on them, served as one standard `(Request) => Promise<Response>` handler, so
// it mounts wherever Request and Response are: Node's http (through `nodeListener`, also for
// Express), Hono, Deno.serve, Bun.serve, a Worker's fetch, a Durable Object's fetch. It works
// against the engine contract's methods only (stats, get, pending, inFlight, deadLetters,
// retryDead, deleteDead, purgeDead, pause, resume), so it serves every engine that has them.
//
// Security, because a dashboard that changes a queue is a door:
// - Read-only unless a `token` or an `auth` hook is given; then every change is a POST that
//   carries the token (an `X-Tarry-Token` header) or passes the hook, with a JSON body and
//   an `Origin` header naming this dashboard's own origin (or one of `origins`): a link or a
//   form on another site cannot make one (a form cannot set the header or the content type;
//   a cross-origin fetch that does is preflighted, and no preflight is answered).
// - Values stay out of every response unless `values: true` (they may hold personal data).
// - The page renders every id, value and reason as text (textContent, never HTML), and the
//   responses carry a Content-Security-Policy that allows no inline script and no other origin.
// - Pages are at most MAX_LIMIT items, whatever the request asks; bodies at most MAX_BODY.
//
// History for the charts: each stats request (the page polls every 2 s) records a sample of
// the queue's counts and delivery figures, at most one per SAMPLE_MS, kept for HISTORY_MS,
// in memory (per handler, shared by every viewer; empty again after a restart).

import { page, pageScript, pageStyle } from "./dashboard/page.js";

/** Items per page: the page asks for 50, a request for more gets at most this. */
const MAX_LIMIT = 200;
/** The largest request body read, in bytes. */
const MAX_BODY = 16 * 1024;
const SAMPLE_MS = 2000;
const HISTORY_MS = 15 * 60_000;
const TOKEN_HEADER = "x-tarry-token";

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const SECURITY_HEADERS = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

/** What the page needs of an engine, and the methods its changes call. */
const READS = ["stats", "get", "pending", "inFlight", "deadLetters"];

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
        if (!(await allowed(request, false))) return json(401, { error: "not allowed" });
        if (parts.length === 1 && parts[0] === "queues") {
          return json(200, { queues: [...byName.keys()], write: writable, values: o.values });
        }
        if (parts.length === 1 && parts[0] === "session") {
          return json(200, { write: writable && (await allowed(request, true)) });
        }
        const queue = byName.get(parts[1]);
        if (parts[0] !== "queues" || parts.length !== 3 || queue === undefined)
          return json(404, { error: "no such queue" });
        return await read(queue, parts[1], parts[2], url.searchParams);
      }
      if (method === "POST") {
        if (!writable) return json(403, { error: "this dashboard is read-only (no token or auth was given)" });
        const refused = checkOrigin(request, url, o.origins);
        if (refused !== null) return json(403, { error: refused });
        if (!(request.headers.get("content-type") ?? "").startsWith("application/json")) {
          return json(415, { error: "a change is a POST with a JSON body" });
        }
        if (!(await allowed(request, true))) return json(401, { error: "the token is missing or wrong" });
        const queue = byName.get(parts[1]);
        if (parts[0] !== "queues" || parts.length !== 3 || queue === undefined)
          return json(404, { error: "no such queue" });
        return await change(queue, parts[2], await bodyOf(request));
      }
      return json(405, { error: `${method} is not served here` });
    } catch (e) {
      if (e instanceof BadRequest) return json(400, { error: e.message });
      return json(e?.status === 501 ? 501 : 500, { error: String(e?.message ?? e) });
    }
  };

  async function allowed(request, write) {
    if (write && o.token !== undefined && !sameToken(request.headers.get(TOKEN_HEADER) ?? "", o.token)) return false;
    if (o.auth !== undefined && !(await o.auth(request, { write }))) return false;
    return true;
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
      case "pending":
      case "inflight":
      case "dead": {
        const method = { pending: "pending", inflight: "inFlight", dead: "deadLetters" }[what];
        const got = await call(queue, method, { limit, after });
        // An engine whose deadLetters() resolves to an array (RedisDelayQueue before pages): one page.
        const pageOf = Array.isArray(got) ? { items: got, next: undefined } : got;
        return json(200, { items: pageOf.items.map(shown), next: pageOf.next });
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
        return json(404, { error: "not found" });
    }
  }

  /** An item as the page shows it: its value only if the operator opted in. */
  function shown(item) {
    const { value, ...rest } = item;
    return o.values ? { ...rest, value: preview(value) } : rest;
  }
}

/**
 * An adapter for Node's `http` (and Express, Connect, Fastify's raw routes): `(req, res)` that
 * hands the request to `handler` as a Request and writes its Response back.
 * @param {(request: Request) => Promise<Response>} handler
 */
export function nodeListener(handler) {
  return (req, res) => {
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on("error", () => res.destroy());
    req.on("end", async () => {
      try {
        const host = req.headers.host ?? "localhost";
        const protocol = req.socket?.encrypted ? "https" : "http";
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) {
          if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
        }
        const method = req.method ?? "GET";
        const body = method === "GET" || method === "HEAD" ? undefined : concat(chunks);
        const request = new Request(new URL(req.url ?? "/", `${protocol}://${host}`), { method, headers, body });
        const response = size > MAX_BODY ? json(413, { error: "the body is too large" }) : await handler(request);
        const out = {};
        response.headers.forEach((v, k) => {
          out[k] = v;
        });
        res.writeHead(response.status, out);
        res.end(method === "HEAD" ? undefined : new Uint8Array(await response.arrayBuffer()));
      } catch (e) {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(String(e?.message ?? e));
      }
    });
  };
}

// ---- helpers ---------------------------------------------------------------------------------

class BadRequest extends Error {}

function queuesByName(queues) {
  const map = new Map();
  if (queues === null || typeof queues !== "object") {
    throw new TypeError("queues must be a queue, an array of queues or an object of queues by name");
  }
  const isQueue = (q) => q !== null && typeof q === "object" && typeof q.stats === "function";
  const entries = isQueue(queues)
    ? [[nameOf(queues, 0), queues]]
    : Array.isArray(queues)
      ? queues.map((q, i) => [nameOf(q, i), q])
      : Object.entries(queues);
  for (const [name, q] of entries) {
    if (!isQueue(q)) throw new TypeError(`queues: ${JSON.stringify(name)} is not a queue (it has no stats())`);
    const missing = READS.filter((m) => typeof q[m] !== "function");
    if (missing.length > 0) {
      throw new TypeError(`queues: ${JSON.stringify(name)} lacks ${missing.join(", ")}, which the dashboard reads`);
    }
    if (map.has(name)) throw new TypeError(`queues: two queues are named ${JSON.stringify(name)}`);
    map.set(name, q);
  }
  if (map.size === 0) throw new TypeError("queues: give at least one queue");
  return map;
}

function nameOf(q, i) {
  return typeof q?.name === "string" && q.name !== "" ? q.name : `queue-${i + 1}`;
}

function checkOptions(options) {
  if (options === null || typeof options !== "object") throw new TypeError("options must be an object");
  const known = ["token", "auth", "values", "basePath", "origins", "title"];
  for (const k of Object.keys(options)) {
    if (!known.includes(k))
      throw new TypeError(`options.${k} is not an option of dashboard() (its options: ${known.join(", ")})`);
  }
  const { token, auth, values = false, basePath = "", origins = [], title = "tarry" } = options;
  if (token !== undefined && (typeof token !== "string" || token.length < 8)) {
    throw new TypeError("options.token must be a string of at least 8 characters");
  }
  if (auth !== undefined && typeof auth !== "function") throw new TypeError("options.auth must be a function");
  if (typeof values !== "boolean") throw new TypeError("options.values must be a boolean");
  if (typeof basePath !== "string" || (basePath !== "" && (!basePath.startsWith("/") || basePath.endsWith("/")))) {
    throw new TypeError('options.basePath must be "" or a path like "/tarry" (no trailing slash)');
  }
  if (!Array.isArray(origins) || origins.some((x) => typeof x !== "string")) {
    throw new TypeError("options.origins must be an array of origins (strings)");
  }
  if (typeof title !== "string") throw new TypeError("options.title must be a string");
  return { token, auth, values, basePath, origins: origins.map((x) => new URL(x).origin), title };
}

/** A POST's Origin must be this dashboard's own (or an allowed one); browsers always send it on a POST. */
function checkOrigin(request, url, origins) {
  const origin = request.headers.get("origin");
  if (origin === null) return "a change needs an Origin header (a browser sends one)";
  if (origin !== url.origin && !origins.includes(origin)) return `a change from another origin (${origin}) is refused`;
  if (request.headers.get("sec-fetch-site") === "cross-site") return "a change from another site is refused";
  return null;
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
  return s.length > 2000 ? `${s.slice(0, 2000)}…` : s;
}

function concat(chunks) {
  const size = chunks.reduce((n, c) => n + c.length, 0);
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function respond(status, body, type, extra = {}) {
  return new Response(body, { status, headers: { ...SECURITY_HEADERS, "content-type": type, ...extra } });
}

function json(status, data) {
  return respond(status, JSON.stringify(data), "application/json; charset=utf-8");
}

function text(status, body) {
  return respond(status, body, "text/plain; charset=utf-8");
}

function redirect(location) {
  return respond(308, "", "text/plain; charset=utf-8", { location });
}
