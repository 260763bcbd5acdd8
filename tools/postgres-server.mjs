// Private PostgreSQL clusters for the tests, the benchmark and the examples of
// tarry-queue/postgres: Debian's Postgres 15 (scripts/setup-postgres.sh installs it), one
// `initdb` per cluster in its own temporary directory, on a free loopback port, started and
// stopped with `pg_ctl`, with the server's defaults (fsync on) unless `settings` says
// otherwise. Postgres refuses to run as root, so when this process is root the binaries run as
// the `postgres` user (`runuser -u postgres --`). Each cluster is stopped and its directory
// removed by stop(), when this process exits, or (if this process is killed with SIGKILL) by a
// small watchdog that outlives it. Nothing here touches a Postgres that it did not start.
//
//   const pg = await startPostgres();   // { url, port, dir, query, restart, stop }
//   await pg.query("SELECT 1");          // "1": psql's unaligned output, trimmed

import { execFile, execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const live = new Set(); // clusters started and not yet stopped

/** Where initdb, pg_ctl and psql live: pg_config's bindir, Debian's versioned path, or PATH. */
function findBinaries() {
  const has = (dir) => existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"));
  // TARRY_PG_BINDIR, when set, is the only place looked at (another installation, or none).
  const only = process.env.TARRY_PG_BINDIR;
  if (only) {
    if (!has(only))
      throw new Error(`PostgreSQL is not installed in TARRY_PG_BINDIR=${only} (no initdb and pg_ctl there)`);
    return { bindir: only, psql: [join(only, "psql"), "/usr/bin/psql"].find(existsSync) ?? "psql" };
  }
  const candidates = [];
  try {
    candidates.push(execFileSync("pg_config", ["--bindir"], { encoding: "utf8", stdio: "pipe" }).trim());
  } catch {}
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    // 15 first: the version the tests and the benchmark's figures are for.
    for (const v of ["15", ...versions]) candidates.push(join(debian, v, "bin"));
  }
  for (const dir of (process.env.PATH ?? "").split(":")) if (dir) candidates.push(dir);
  const bindir = candidates.find(has);
  if (!bindir)
    throw new Error(
      "PostgreSQL is not installed (no initdb and pg_ctl in pg_config --bindir, /usr/lib/postgresql/*/bin or PATH): run scripts/setup-postgres.sh",
    );
  const psql = [join(bindir, "psql"), "/usr/bin/psql"].find(existsSync);
  if (!psql)
    throw new Error(`PostgreSQL's psql is missing (not in ${bindir} or /usr/bin): run scripts/setup-postgres.sh`);
  return { bindir, psql };
}

const root = process.getuid?.() === 0;

/** argv that runs `program` as the cluster's owner: the postgres user when this process is root. */
const asOwner = (program, args) => (root ? ["runuser", ["-u", "postgres", "--", program, ...args]] : [program, args]);

function portFree(port) {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

async function freePort() {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 40000);
    if (await portFree(port)) return port;
  }
}

function stopAllNow() {
  for (const cluster of live) cluster.stopNow();
}
process.on("exit", stopAllNow);
// SIGINT/SIGTERM skip 'exit': stop the clusters, then die of the same signal, unless the
// program handles the signal itself (then it decides when to exit, and 'exit' follows).
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    stopAllNow();
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
}

/**
 * One private cluster, started and answering. `settings` go into postgresql.conf as
 * `name = value` (e.g. `{ max_connections: 200 }`); everything else is the server's default.
 * Loopback connections are trusted (the server listens on 127.0.0.1 only), as the `postgres`
 * superuser.
 *
 * @param {{ port?: number, settings?: Record<string, string | number | boolean> }} [options]
 */
export async function startPostgres({ port, settings = {} } = {}) {
  const { bindir, psql } = findBinaries();
  if (typeof settings !== "object" || settings === null) throw new TypeError("settings: an object of name: value");
  for (const name of Object.keys(settings))
    if (!/^[a-z_][a-z0-9_.]*$/i.test(name))
      throw new TypeError(`settings: ${JSON.stringify(name)} is not a setting name`);
  port ??= await freePort();
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new TypeError(`port: an integer 1..65535, got ${port}`);
  const dir = mkdtempSync(join(tmpdir(), "tarry-pg-"));
  const data = join(dir, "data");
  const sock = join(dir, "sock");
  const logFile = join(dir, "server.log");
  mkdirSync(sock);
  chmodSync(dir, 0o755);
  if (root) {
    const id = (flag) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }));
    const [uid, gid] = [id("-u"), id("-g")];
    chownSync(dir, uid, gid);
    chownSync(sock, uid, gid);
  }
  const pgctl = join(bindir, "pg_ctl");
  const options = `-p ${port} -k ${sock} -c listen_addresses=127.0.0.1`;
  const owner = async (program, args, timeout = 60_000) => {
    const [file, argv] = asOwner(program, args);
    try {
      return (await run(file, argv, { timeout, encoding: "utf8", cwd: dir })).stdout;
    } catch (e) {
      const log = existsSync(logFile)
        ? (await run("tail", ["-n", "20", logFile]).catch(() => ({ stdout: "" }))).stdout
        : "";
      throw new Error(
        `${program.split("/").pop()} ${args[0]} failed: ${(e.stderr || e.message).trim()}${log ? `\n${log}` : ""}`,
      );
    }
  };
  let watchdog = null;
  const cluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    /** Runs `sql` with psql (ON_ERROR_STOP); resolves with its unaligned, tuples-only output, trimmed. */
    async query(sql) {
      const args = [
        "-X",
        "-A",
        "-t",
        "-q",
        "-v",
        "ON_ERROR_STOP=1",
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        "postgres",
        "-d",
        "postgres",
        "-c",
        sql,
      ];
      try {
        return (await run(psql, args, { timeout: 60_000, encoding: "utf8" })).stdout.trim();
      } catch (e) {
        throw new Error(`psql on port ${port}: ${(e.stderr || e.message).trim()}`);
      }
    },
    /** pg_ctl restart: `immediate: true` is a crash (no checkpoint; WAL replay at start). */
    async restart({ immediate = false } = {}) {
      await owner(pgctl, [
        "restart",
        "-D",
        data,
        "-w",
        "-t",
        "60",
        "-m",
        immediate ? "immediate" : "fast",
        "-l",
        logFile,
        "-o",
        options,
      ]);
    },
    /** Stops the server (immediately: nothing of it is kept) and removes its directory. */
    async stop() {
      if (!live.has(cluster)) return;
      live.delete(cluster);
      await owner(pgctl, ["stop", "-D", data, "-m", "immediate", "-w", "-t", "30"]).catch(() => {});
      watchdog?.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
    /** The same, synchronously: for this process's 'exit'. */
    stopNow() {
      live.delete(cluster);
      const [file, argv] = asOwner(pgctl, ["stop", "-D", data, "-m", "immediate", "-w", "-t", "30"]);
      try {
        execFileSync(file, argv, { stdio: "ignore", timeout: 30_000 });
      } catch {}
      watchdog?.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await owner(join(bindir, "initdb"), [
      "-D",
      data,
      "--auth=trust",
      "--username=postgres",
      "--encoding=UTF8",
      "--no-instructions",
    ]);
    const lines = Object.entries(settings).map(([k, v]) => `${k} = '${String(v).replaceAll("'", "''")}'`);
    if (lines.length) {
      const conf = join(data, "postgresql.auto.conf");
      writeFileSync(conf, `${lines.join("\n")}\n`, { flag: "a" });
    }
    live.add(cluster);
    await owner(pgctl, ["start", "-D", data, "-w", "-t", "60", "-l", logFile, "-o", options]);
    // If this process dies without running 'exit' (SIGKILL), the watchdog stops the cluster.
    // It runs as this process's user (kill -0 needs that), and pg_ctl as the cluster's owner.
    const stopCommand = `${root ? "runuser -u postgres -- " : ""}"${pgctl}" stop -D "${data}" -m immediate`;
    const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 2; done; ${stopCommand} >/dev/null 2>&1; rm -rf "${dir}"`;
    watchdog = spawn("/bin/sh", ["-c", script], { detached: true, stdio: "ignore" });
    watchdog.unref();
  } catch (e) {
    live.delete(cluster);
    cluster.stopNow();
    throw e;
  }
  return cluster;
}
