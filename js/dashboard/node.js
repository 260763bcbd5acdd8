// nodeListener: the dashboard's handler served by Node's http (and Express, Connect,
// Fastify's raw routes). It turns each IncomingMessage into a Request, reading at most
// MAX_BODY bytes of its body, and writes the Response back; the Host check and everything
// else is the handler's.

import { json } from "./responses.js";

/** The largest request body read, in bytes. */
export const MAX_BODY = 16 * 1024;

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
        // A Host that makes no URL, or a response that could not be written: no error text out.
        const bad = e instanceof TypeError && !res.headersSent;
        if (!res.headersSent) res.writeHead(bad ? 400 : 500, { "content-type": "text/plain" });
        res.end(bad ? "bad request" : "internal error");
      }
    });
  };
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
