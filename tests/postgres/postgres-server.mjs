// A private PostgreSQL 15 cluster for the tests: initdb into a temporary directory and pg_ctl
// as the `postgres` user (Postgres refuses to run as root), listening on a free loopback port
// only (its socket in the same directory), fsync on as in production. `startPostgres()` gives
// { url, port, stop(), restart({ immediate }), query(sql) }: the shape the shared tool
// tools/postgres-server.mjs exports, which replaces this one when it lands.

import { execFile } from "node:child_process";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const BIN = "/usr/lib/postgresql/15/bin";
const asPostgres = (cmd, args) =>
  process.getuid?.() === 0
    ? run("runuser", ["-u", "postgres", "--", join(BIN, cmd), ...args])
    : run(join(BIN, cmd), args);

/** A port the kernel says is free on loopback now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {import("node:net").AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts a private cluster; its `stop()` removes it.
 * @param {{ port?: number }} [opts]
 */
export async function startPostgres({ port } = {}) {
  const dir = await mkdtemp(join(tmpdir(), "tarry-pg-"));
  await chmod(dir, 0o777);
  const data = join(dir, "data");
  const chosen = port ?? (await freePort());
  await asPostgres("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"]);
  const opts = `-p ${chosen} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on -c max_connections=200`;
  const start = () => asPostgres("pg_ctl", ["-D", data, "-o", opts, "-l", join(dir, "log"), "-w", "-t", "60", "start"]);
  await start();
  const url = `postgres://postgres@127.0.0.1:${chosen}/postgres`;
  return {
    url,
    port: chosen,
    /** Runs one statement with psql, returning its unaligned output. @param {string} sql */
    async query(sql) {
      const out = await run("psql", ["-h", "127.0.0.1", "-p", String(chosen), "-U", "postgres", "-At", "-c", sql]);
      return out.stdout;
    },
    /** A restart: `immediate` is a crash restart (WAL replay), else a clean one. */
    async restart({ immediate = false } = {}) {
      await asPostgres("pg_ctl", ["-D", data, "-m", immediate ? "immediate" : "fast", "-w", "stop"]);
      await start();
    },
    async stop() {
      await asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
