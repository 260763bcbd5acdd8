// A small static server for the repository root, so that the demo (/www/), the package's
// JS (/js/) and its wasm (/dist/) load from one origin as they would from a CDN. `npm start`
// runs it; the browser and bundler tests and the Chromium benchmark import serve() from here.
// Port: $PORT, or a free one.
//
//   node tools/serve.mjs        → prints http://127.0.0.1:<port>/www/

import { createServer } from "node:http";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(fileURLToPath(new URL("..", import.meta.url)));

const types = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".wasm": "application/wasm",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".ico": "image/x-icon",
  ".md": "text/markdown; charset=utf-8",
  ".ts": "text/plain; charset=utf-8",
};

/**
 * Serves `root` (the repository by default) on 127.0.0.1. Resolves to the running server
 * and its base URL once it listens. GET and HEAD only; "/" redirects to the demo.
 * @param {{port?: number, root?: string, log?: boolean}} [opts]
 */
export async function serve({ port = 0, root = repo, log = false } = {}) {
  const server = createServer(async (req, res) => {
    const done = (status, body = "", headers = {}) => {
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers });
      res.end(req.method === "HEAD" ? undefined : body);
      if (log) console.log(`${status} ${req.method} ${req.url}`);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return done(405, "method not allowed\n", { allow: "GET, HEAD" });
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    } catch {
      return done(400, "bad request\n");
    }
    if (path === "/") return done(302, "", { location: "/www/" });
    const file = resolve(join(root, path));
    // Nothing outside the root, and no dotfiles (.git, .cargo).
    if ((file !== root && !file.startsWith(root + sep)) || /[\\/]\./.test(path)) return done(404, "not found\n");
    let target = file;
    let info = await stat(target).catch(() => null);
    if (info?.isDirectory()) {
      if (!path.endsWith("/")) return done(301, "", { location: `${path}/` });
      target = join(file, "index.html");
      info = await stat(target).catch(() => null);
    }
    if (!info?.isFile()) return done(404, "not found\n");
    res.writeHead(200, {
      "content-type": types[extname(target)] ?? "application/octet-stream",
      "content-length": info.size,
      // A development server: always the file as it is on disk now.
      "cache-control": "no-store",
    });
    if (log) console.log(`200 ${req.method} ${req.url}`);
    if (req.method === "HEAD") return res.end();
    createReadStream(target).pipe(res);
  });
  await new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", ok);
  });
  const url = `http://127.0.0.1:${server.address().port}`;
  // close() also ends connections a browser keeps open: server.close() alone waits for them
  // (Chromium held one for 90 s after its page had closed, stalling the bundler tests).
  const close = () =>
    new Promise((ok) => {
      server.close(ok);
      server.closeAllConnections();
    });
  return { server, url, close };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const port = process.env.PORT === undefined || process.env.PORT === "" ? 0 : Number(process.env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`PORT must be a port number, got ${JSON.stringify(process.env.PORT)}`);
    process.exit(2);
  }
  const { url, close } = await serve({ port, log: process.env.LOG === "1" });
  console.log(`tarry demo: ${url}/www/   (Ctrl-C to stop)`);
  const stop = () => close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
