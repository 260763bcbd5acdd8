// Private Redis servers for the tests, the benchmark and the example of tarry-queue/redis:
// Debian's redis-server (scripts/setup-redis.sh installs it) on free loopback ports, each in
// its own temporary directory, stopped (and the directory removed) by stop() or when this
// process exits. Nothing here touches a Redis that it did not start.

import { spawn, execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";

const run = promisify(execFile);
const live = new Set();
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

function portFree(port) {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

/** A loopback port that is free, and so is port + 10000 (a cluster node's bus port). */
async function freePort() {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 35000);
    if ((await portFree(port)) && (await portFree(port + 10000))) return port;
  }
}

/** The server's answer to one inline command (e.g. "PING"), or null if it cannot be reached. */
function ask(port, command) {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: "127.0.0.1" });
    let reply = "";
    socket.setTimeout(1000, () => socket.destroy());
    socket.on("error", () => resolve(null));
    socket.on("close", () => resolve(reply || null));
    socket.on("connect", () => socket.write(`${command}\r\nQUIT\r\n`));
    socket.on("data", (d) => (reply += d));
  });
}

/**
 * One redis-server. `aof: true` turns on the append-only file with `appendfsync always`
 * (every acknowledged write is on disk); otherwise nothing is persisted.
 *
 * @param {{ aof?: boolean, args?: string[] }} [options]
 */
export async function startRedis({ aof = false, args = [] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "tarry-redis-"));
  const port = await freePort();
  const argv = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--daemonize",
    "no",
    "--logfile",
    "",
    "--loglevel",
    "warning",
    ...(aof ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]),
    ...args,
  ];
  const server = {
    port,
    dir,
    url: `redis://127.0.0.1:${port}`,
    child: null,
    /** Starts the process (again, on the same port and directory after kill()). */
    async start() {
      const child = spawn("redis-server", argv, { stdio: ["ignore", "ignore", "inherit"] });
      live.add(child);
      child.once("exit", () => live.delete(child));
      this.child = child;
      const until = Date.now() + 15_000;
      while (Date.now() < until) {
        if (child.exitCode !== null) throw new Error(`redis-server on port ${port} exited with ${child.exitCode}`);
        const reply = await ask(port, "PING");
        // A server still loading its append-only file answers -LOADING.
        if (reply?.startsWith("+PONG")) return this;
        await sleep(20);
      }
      throw new Error(`redis-server on port ${port} did not answer PING within 15 s`);
    },
    /** Sends a signal to the server process (SIGKILL: a crash; SIGSTOP/SIGCONT: a pause). */
    async kill(signal = "SIGKILL") {
      const child = this.child;
      if (!child || child.exitCode !== null || child.signalCode !== null) return; // it has exited
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill(signal);
      if (signal === "SIGKILL" || signal === "SIGTERM") await exited;
    },
    /** redis-cli against this server; resolves with its output. */
    async cli(...command) {
      const { stdout } = await run("redis-cli", ["-p", String(port), ...command]);
      return stdout.trim();
    },
    /** Stops the server and removes its directory. */
    async stop() {
      if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
        this.child.kill("SIGCONT");
        await this.kill("SIGKILL");
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    return await server.start();
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/**
 * A Redis Cluster of `masters` masters and no replicas, built with `redis-cli --cluster create`.
 * Resolves once every node reports `cluster_state:ok`.
 */
export async function startCluster(masters = 3) {
  const nodes = [];
  try {
    for (let i = 0; i < masters; i++) {
      nodes.push(
        await startRedis({
          args: ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000"],
        }),
      );
    }
    await run("redis-cli", [
      "--cluster",
      "create",
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    ]);
    const until = Date.now() + 20_000;
    for (const node of nodes) {
      while (!(await node.cli("cluster", "info")).includes("cluster_state:ok")) {
        if (Date.now() > until) throw new Error("the cluster did not reach cluster_state:ok within 20 s");
        await sleep(50);
      }
    }
  } catch (e) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw e;
  }
  return {
    nodes,
    /** Seed nodes for ioredis' Cluster. */
    seeds: nodes.map((n) => ({ host: "127.0.0.1", port: n.port })),
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
}

/**
 * One Redis Sentinel (redis-server in sentinel mode: the program Debian's redis-sentinel
 * package links to) on a free loopback port, monitoring `primary` under the name `name` with
 * a quorum of 1, a primary taken for down after `downAfter` ms and failovers retried after
 * `failoverTimeout` ms. Its config file lives in its own temporary directory (Sentinel
 * rewrites it), removed by stop().
 */
export async function startSentinel(primary, { name = "mymaster", downAfter = 500, failoverTimeout = 2000 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "tarry-sentinel-"));
  const port = await freePort();
  const conf = join(dir, "sentinel.conf");
  writeFileSync(
    conf,
    [
      `port ${port}`,
      "bind 127.0.0.1",
      `dir ${dir}`,
      'logfile ""',
      "loglevel warning",
      `sentinel monitor ${name} 127.0.0.1 ${primary.port} 1`,
      `sentinel down-after-milliseconds ${name} ${downAfter}`,
      `sentinel failover-timeout ${name} ${failoverTimeout}`,
      `sentinel parallel-syncs ${name} 1`,
      "",
    ].join("\n"),
  );
  const child = spawn("redis-server", [conf, "--sentinel"], { stdio: ["ignore", "ignore", "inherit"] });
  live.add(child);
  child.once("exit", () => live.delete(child));
  const cli = async (...command) => (await run("redis-cli", ["-p", String(port), ...command])).stdout.trim();
  const sentinel = {
    port,
    name,
    /** For ioredis: `new Redis({ sentinels, name })`. */
    sentinels: [{ host: "127.0.0.1", port }],
    cli,
    /** The port of the primary Sentinel names now. */
    async primaryPort() {
      return Number((await cli("sentinel", "get-master-addr-by-name", name)).split("\n")[1]);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const until = Date.now() + 15_000;
  while (!(await ask(port, "PING"))?.startsWith("+PONG")) {
    if (child.exitCode !== null || Date.now() > until) {
      await sentinel.stop();
      throw new Error(`redis-server --sentinel on port ${port} did not answer PING within 15 s`);
    }
    await sleep(20);
  }
  return sentinel;
}
