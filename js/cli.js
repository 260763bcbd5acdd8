#!/usr/bin/env node
// The `tarry-queue` command (package.json `bin`), for Redis and Postgres queues:
//
//   tarry-queue inspect --redis URL --name NAME [--json]   what the queue holds, once
//   tarry-queue dashboard --redis URL --name NAME [--port P] [--token T]   the web dashboard
//   (--postgres URL [--schema S] instead of --redis: a PostgresDelayQueue)
//
// It opens the queues with RedisDelayQueue (ioredis must be installed beside tarry-queue), on
// one Redis (--redis) or a Cluster (--cluster, an ioredis Cluster), or with
// PostgresDelayQueue (pg beside it) on --postgres, and only reads them, but for what the
// dashboard's changes do with a token. `inspect` first checks that the queue was ever used
// (one of its keys exists; on Postgres, one of its rows), before any statement of the queue
// runs. The dashboard
// is tarry-queue/dashboard served by Node's http, on 127.0.0.1 unless --host says otherwise,
// answering only the names it listens on. Every message it prints goes through redact(): a
// URL's password never reaches the terminal.

import http from "node:http";
import os from "node:os";
import { parseArgs } from "node:util";
import { scheduleReport } from "./dashboard/schedules.js";
import { redact } from "./engine/redact.js";

const USAGE = `Usage:
  tarry-queue inspect   (--redis URL | --cluster HOST:PORT,...) --name NAME [--prefix P] [--shards K]
                        [--limit N] [--json]
  tarry-queue inspect   --postgres URL --name NAME [--schema S] [--limit N] [--json]
  tarry-queue dashboard (--redis URL | --cluster HOST:PORT,...) --name NAME [--name NAME2 ...]
                        [--prefix P] [--shards K] [--port P] [--host H] [--allowed-host NAME ...]
                        [--token T] [--values]
  tarry-queue dashboard --postgres URL --name NAME [--name NAME2 ...] [--schema S] [--port P]
                        [--host H] [--allowed-host NAME ...] [--token T] [--values]

  --redis   the Redis URL (default: $REDIS_URL, else redis://127.0.0.1:6379)
  --cluster a Redis Cluster: some of its nodes, host:port,host:port (an ioredis Cluster)
  --postgres a Postgres queue's database: a postgres:// URL (a PostgresDelayQueue)
  --schema  Postgres: the schema of the queues' tables (default "tarry")
  --name    the queue's name (dashboard: one --name per queue)
  --prefix  the queues' key prefix (default "tarry:")
  --shards  the number of shards the queues were created with (default 1)
  --limit   inspect: how many of the next deadlines and dead letters to show (default 10, at most 1000)
  --json    inspect: one JSON object on stdout, for scripts
  --port    dashboard: the port (default 8080; 0 picks a free one)
  --host    dashboard: the address to listen on (default 127.0.0.1, this machine only)
  --allowed-host  dashboard: a name besides the address listened on that browsers may use
            to reach it (a Host header), e.g. a DNS name of this machine; others get 403
  --token   dashboard: allow changes (retry, delete, purge, pause, resume) to who has it;
            without it the dashboard is read-only
  --values  dashboard: show the items' values (hidden by default: they may hold personal data)
`;

const OPTIONS = /** @type {const} */ ({
  redis: { type: "string" },
  cluster: { type: "string" },
  postgres: { type: "string" },
  schema: { type: "string" },
  "allowed-host": { type: "string", multiple: true },
  name: { type: "string", multiple: true },
  prefix: { type: "string" },
  shards: { type: "string" },
  limit: { type: "string" },
  json: { type: "boolean" },
  port: { type: "string" },
  host: { type: "string" },
  token: { type: "string" },
  values: { type: "boolean" },
  help: { type: "boolean", short: "h" },
});

class Usage extends Error {}

async function main(argv) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw new Usage(e.message);
  }
  const o =
    /** @type {{ redis?: string, cluster?: string, postgres?: string, schema?: string, "allowed-host"?: string[], name?: string[], prefix?: string, shards?: string, limit?: string, json?: boolean, port?: string, host?: string, token?: string, values?: boolean, help?: boolean }} */ (
      parsed.values
    );
  const positionals = parsed.positionals;
  const [command, ...extra] = positionals;
  if (o.help || command === "help" || command === undefined) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (extra.length > 0) throw new Usage(`unexpected argument: ${extra[0]}`);
  if (command !== "inspect" && command !== "dashboard") throw new Usage(`unknown command: ${command}`);
  const names = o.name ?? [];
  if (names.length === 0) throw new Usage("--name is required");
  if (command === "inspect" && names.length > 1) throw new Usage("inspect takes one --name");
  const only = { inspect: ["limit", "json"], dashboard: ["port", "host", "allowed-host", "token", "values"] };
  for (const k of only[command === "inspect" ? "dashboard" : "inspect"]) {
    if (o[k] !== undefined) throw new Usage(`--${k} is not an option of ${command}`);
  }
  if (o.redis !== undefined && o.cluster !== undefined) throw new Usage("give --redis or --cluster, not both");
  if (o.postgres !== undefined) return postgres(command, o, names);
  if (o.schema !== undefined) throw new Usage("--schema is an option of a Postgres queue (--postgres)");
  const seeds = o.cluster === undefined ? null : seedsOf(o.cluster);
  const shards = numberOf(o.shards ?? "1", "--shards", 1, 64);
  const limit = command === "inspect" ? numberOf(o.limit ?? "10", "--limit", 1, 1000) : 0;
  const { RedisDelayQueue } = await import("./redis.js");
  const ioredis = await import("ioredis");
  const url = o.redis ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const where = seeds === null ? redact(url) : `the Cluster at ${o.cluster}`;
  // A Cluster is one ioredis client the queues share (closed here); a URL, the queues' own.
  const cluster =
    seeds === null
      ? null
      : new ioredis.Cluster(seeds, {
          redisOptions: { connectTimeout: TIMEOUT_MS },
          clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
        });
  const prefix = o.prefix ?? "tarry:";
  const quiet = () => {};
  const loud = (e) => process.stderr.write(`tarry-queue: ${redact(String(e?.message ?? e))}\n`);
  const queues = names.map(
    (name) =>
      new RedisDelayQueue({
        redis: cluster ?? url,
        name,
        shards,
        prefix,
        onerror: command === "inspect" ? quiet : loud,
      }),
  );
  if (command === "inspect") {
    // The existence check, on its own connection for a URL (the queue has not connected yet).
    const probe =
      cluster ??
      new ioredis.Redis(url, {
        lazyConnect: true,
        connectTimeout: TIMEOUT_MS,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
    let refused = "";
    probe.on("error", (e) => {
      refused = String(e?.message ?? e);
    });
    try {
      const ever = await within(used(probe, queues[0]), where).catch((e) => {
        throw new Error(`no connection to ${where}: ${refused || e.message}`);
      });
      if (!ever) {
        const known = await within(queueNames(probe, prefix), where);
        process.stderr.write(
          `tarry-queue: no queue named ${JSON.stringify(names[0])} was ever used on ${where} (prefix ${JSON.stringify(prefix)}): none of its keys exist\n` +
            (known.names.length === 0
              ? `  no queue of that prefix is there${known.complete ? "" : ` among the first ${known.scanned} keys`}\n`
              : `  the queues there${known.complete ? "" : ` (among the first ${known.scanned} keys)`}: ${known.names.join(", ")}\n`),
        );
        return 1;
      }
      const report = await inspect(queues[0], limit);
      process.stdout.write(o.json ? `${JSON.stringify(report, null, 2)}\n` : text(report, where));
      return 0;
    } finally {
      await queues[0].close();
      probe.disconnect();
    }
  }
  return serve(o, names, queues, loud, () => cluster?.disconnect());
}

/**
 * Serves the dashboard for `queues` (any engine's: it works over the engine contract) until
 * SIGINT or SIGTERM, then closes them and calls `disconnect`.
 */
async function serve(o, names, queues, loud, disconnect) {
  const port = numberOf(o.port ?? "8080", "--port", 0, 65535);
  const host = o.host ?? "127.0.0.1";
  if (o.token !== undefined && o.token.length < 8) throw new Usage("--token must be at least 8 characters");
  const { dashboard, nodeListener } = await import("./dashboard.js");
  const server = http.createServer();
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(undefined));
  });
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  const allowedHosts = [...hostsOf(host, address.port), ...(o["allowed-host"] ?? [])];
  const handler = dashboard(queues, {
    token: o.token,
    values: o.values ?? false,
    allowedHosts,
    onerror: (error, id) => loud(`internal error ${id}: ${error instanceof Error ? error.stack : error}`),
  });
  server.on("request", nodeListener(handler));
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const page = `http://${shown}:${address.port}/`;
  process.stdout.write(
    o.token === undefined
      ? `tarry dashboard (read-only) for ${names.join(", ")}: ${page}\n`
      : `tarry dashboard for ${names.join(", ")}: ${page}#token=${encodeURIComponent(o.token)}\n`,
  );
  if (!["127.0.0.1", "::1", "localhost"].includes(host)) {
    process.stderr.write(`warning: listening on ${host}: anyone who can reach it can read the queues\n`);
  }
  const stop = async () => {
    server.close();
    await Promise.all(queues.map((q) => q.close()));
    disconnect();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return undefined; // serving until stopped
}

/**
 * `inspect` or `dashboard` on Postgres queues (--postgres URL, --schema S): PostgresDelayQueue
 * on one pool for the URL. `inspect` first checks, on a connection of its own, that the
 * schema was migrated and that the queue has a row there (an item, a schedule or its paused
 * state), before any statement of the queue runs, so that it creates nothing.
 */
async function postgres(command, o, names) {
  for (const k of ["redis", "cluster", "prefix", "shards"]) {
    if (o[k] !== undefined) throw new Usage(`--${k} is not an option of a Postgres queue (--postgres)`);
  }
  const limit = command === "inspect" ? numberOf(o.limit ?? "10", "--limit", 1, 1000) : 0;
  const { PostgresDelayQueue } = await import("./postgres.js");
  const { statementsOf } = await import("./postgres/statements.js");
  const url = o.postgres;
  const schema = o.schema ?? "tarry";
  const where = redact(url);
  const quiet = () => {};
  const loud = (e) => process.stderr.write(`tarry-queue: ${redact(String(e?.message ?? e))}\n`);
  const open = (/** @type {string} */ name) => {
    try {
      return new PostgresDelayQueue({
        pg: url,
        name,
        schema,
        commandTimeout: TIMEOUT_MS,
        onerror: command === "inspect" ? quiet : loud,
      });
    } catch (e) {
      // A URL that is not postgres://, a schema or name out of range: the queue's own check.
      throw new Usage(`--postgres, --schema or --name: ${e.message}`);
    }
  };
  const queues = names.map(open);
  if (command === "dashboard") return serve(o, names, queues, loud, () => {});
  const st = statementsOf(schema);
  try {
    const pg = await import(PG).catch((e) => {
      throw new Error('tarry-queue inspect --postgres needs the package "pg" (npm install pg)', { cause: e });
    });
    const probe = new (pg.default ?? pg).Client({
      connectionString: url,
      connectionTimeoutMillis: TIMEOUT_MS,
      query_timeout: TIMEOUT_MS,
    });
    probe.on("error", () => {});
    const ask = async (text, values) => (await within(probe.query(text, values), where)).rows[0];
    try {
      await within(probe.connect(), where).catch((e) => {
        throw new Error(`no connection to ${where}: ${e.message}`);
      });
      const named = `${JSON.stringify(names[0])} (schema ${JSON.stringify(schema)})`;
      if (!(await ask(st.migrated)).migrated) {
        process.stderr.write(
          `tarry-queue: no queue named ${named} was ever used on ${where}: the schema has no tarry-queue tables (migrate() never ran there)\n`,
        );
        return 1;
      }
      if (!(await ask(st.used, [names[0]])).used) {
        const { rows } = await within(probe.query(st.queueNames, [QUEUE_NAMES]), where);
        const known = rows.slice(0, QUEUE_NAMES).map((r) => r.name);
        const more = rows.length > QUEUE_NAMES ? ", ..." : "";
        process.stderr.write(
          `tarry-queue: no queue named ${named} was ever used on ${where}: it has no row there\n` +
            (known.length === 0
              ? "  no queue of that schema is there\n"
              : `  the queues there: ${known.join(", ")}${more}\n`),
        );
        return 1;
      }
    } finally {
      await probe.end().catch(() => {});
    }
    const report = await inspect(queues[0], limit);
    process.stdout.write(o.json ? `${JSON.stringify(report, null, 2)}\n` : text(report, where));
    return 0;
  } finally {
    await queues[0].close();
  }
}

/** How long the existence check waits for Redis or Postgres before it gives up, as the queue's calls do. */
const TIMEOUT_MS = 5000;
/** `pg`, an optional peer dependency, in a variable: the types check this file without its types. */
const PG = "pg";
/** Queue names `inspect` lists at most when the one asked for was never used on Postgres. */
const QUEUE_NAMES = 100;
/** Keys SCAN reads at most, per node, to list the queue names there. */
const SCAN_KEYS = 10_000;

/** --cluster's nodes: host:port,host:port (an IPv6 host in brackets). */
function seedsOf(raw) {
  return raw.split(",").map((node) => {
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(node.trim());
    if (m === null) throw new Usage(`--cluster must be host:port,host:port,..., got ${JSON.stringify(node)}`);
    return { host: m[1].replace(/^\[|\]$/g, ""), port: numberOf(m[2], "--cluster's port", 1, 65535) };
  });
}

/** The promise, or a rejection saying Redis did not answer within TIMEOUT_MS. */
function within(promise, where) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from ${where} within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Whether the queue was ever used: any of its keys exists (on any of its shards). One EXISTS
 * per shard, whose keys share one hash tag (one slot, so one Cluster node).
 */
async function used(client, queue) {
  const keysOf = (k) => Object.entries(k).flatMap(([n, v]) => (n === "channel" || n === "shards" ? [] : [v]));
  const sets = queue.keys.shards === undefined ? [queue.keys] : queue.keys.shards;
  const counts = await Promise.all(sets.map((k) => client.exists(...keysOf(k))));
  return counts.some((n) => n > 0);
}

/**
 * The names of the queues under `prefix`, from a SCAN of at most SCAN_KEYS keys per node
 * (every primary of a Cluster), never KEYS; `complete` false when the SCAN stopped there.
 */
async function queueNames(client, prefix) {
  const glob = `${prefix.replace(/[*?[\]\\]/g, "\\$&")}{*}:*`;
  const nodes = typeof client.nodes === "function" ? client.nodes("master") : [client];
  const tags = new Set();
  let complete = true;
  let scanned = 0;
  for (const node of nodes) {
    let cursor = "0";
    let read = 0;
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", glob, "COUNT", 1000);
      cursor = next;
      read += 1000;
      for (const key of keys) {
        const tag = key.slice(prefix.length + 1, key.lastIndexOf("}:"));
        if (tag !== "") tags.add(tag);
      }
    } while (cursor !== "0" && read < SCAN_KEYS);
    if (cursor !== "0") complete = false;
    scanned += read;
  }
  // A sharded queue's other shards are tagged "<name>~<n>" beside the name itself.
  const names = [...tags].filter((t) => !/~\d+$/.test(t) || !tags.has(t.replace(/~\d+$/, ""))).sort();
  return { names, complete, scanned };
}

/**
 * The Host names the dashboard answers, with their port: the loopback ones are always
 * answered (js/dashboard/hosts.js); listening on another address adds it, and on every
 * address (0.0.0.0, ::) adds this machine's name and addresses.
 */
function hostsOf(host, port) {
  if (host === "0.0.0.0" || host === "::") {
    const addresses = Object.values(os.networkInterfaces())
      .flat()
      .flatMap((a) => (a === undefined ? [] : [a.family === "IPv6" ? `[${a.address}]` : a.address]));
    return [os.hostname(), ...addresses].map((h) => `${h}:${port}`);
  }
  return [`${host.includes(":") ? `[${host}]` : host}:${port}`];
}

function numberOf(raw, name, min, max) {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Usage(`${name} must be a whole number from ${min} to ${max}, got ${raw}`);
  return n;
}

/** What `inspect` reports: stats, the next deadlines, the items in flight, the dead letters, the schedules. */
async function inspect(queue, limit) {
  const [stats, pending, inFlight, dead, schedules] = await Promise.all([
    queue.stats(),
    queue.pending({ limit }),
    queue.inFlight({ limit }),
    queue.deadLetters({ limit }),
    scheduleReport(queue),
  ]);
  const strip = ({ value, ...rest }) => rest;
  const letters = Array.isArray(dead) ? dead : dead.items;
  return {
    name: queue.name,
    now: Date.now(),
    paused: stats.paused,
    counts: { pending: stats.pending, inFlight: stats.inFlight, dead: stats.dead },
    headDelay: stats.headDelay ?? null,
    all: stats.all ?? null,
    next: pending.items.map(strip),
    inFlight: inFlight.items.map(strip),
    deadLetters: letters.map(strip),
    schedules: schedules?.schedules.slice(0, limit) ?? [],
    scheduleCount: schedules?.total ?? 0,
  };
}

function text(r, where) {
  const rel = (t) => (t >= r.now ? `in ${duration(t - r.now)}` : `${duration(r.now - t)} ago`);
  const iso = (t) => new Date(t).toISOString();
  const a = r.all;
  const lines = [
    `queue ${r.name} on ${where}: ${r.paused ? "paused" : "running"}`,
    `  pending ${r.counts.pending}, in flight ${r.counts.inFlight}, dead ${r.counts.dead}; head ${r.headDelay === null ? "none" : r.headDelay >= 0 ? `due in ${duration(r.headDelay)}` : `overdue by ${duration(-r.headDelay)}`}`,
    // Every process's figures, where the engine keeps them (Postgres keeps each process's own).
    ...(!a
      ? []
      : [
          `  every process: delivered ${a.delivered}, acked ${a.acked}, nacked ${a.nacked}, redelivered ${a.redelivered}, dead ${a.dead}; lateness p50 ${duration(a.latenessP50)}, p99 ${duration(a.latenessP99)}, max ${duration(a.latenessMax)}`,
        ]),
    "",
    `next deadlines (${r.next.length} of ${r.counts.pending}):`,
    ...r.next.map(
      (i) => `  ${iso(i.deadline)}  ${rel(i.deadline).padEnd(14)} ${JSON.stringify(i.id)}  attempt ${i.attempt}`,
    ),
    "",
    `in flight (${r.inFlight.length} of ${r.counts.inFlight}):`,
    ...r.inFlight.map((i) => `  ${JSON.stringify(i.id)}  attempt ${i.attempt}, lease expires ${rel(i.leaseExpiry)}`),
    "",
    `dead letters (${r.deadLetters.length} of ${r.counts.dead}):`,
    ...r.deadLetters.map(
      (d) =>
        `  ${JSON.stringify(d.id)}  died ${rel(d.diedAt)}, attempt ${d.attempt}: ${String(d.reason).split("\n")[0]}`,
    ),
    "",
    `schedules (${r.schedules.length} of ${r.scheduleCount}):`,
    ...r.schedules.map((s) => {
      const last =
        s.lastRun === undefined
          ? "never run"
          : `last ${rel(s.lastRun)}: ${s.lastOutcome}${s.lastReason === undefined ? "" : ` (${String(s.lastReason).split("\n")[0]})`}`;
      const next = s.nextRun === undefined ? "no next run" : `next ${rel(s.nextRun)}`;
      return `  ${JSON.stringify(s.id)}  ${s.rule}; ${next}; ${last}; runs ${s.runs}, skipped ${s.skipped}; catchUp ${s.catchUp}, overlap ${s.overlap ? "yes" : "no"}`;
    }),
  ];
  return `${lines.join("\n")}\n`;
}

/** A duration for a person: the largest unit that does not round up to the next one (59.97 min reads "1.0 h", not "60.0 min"). */
function duration(ms) {
  const a = Math.abs(ms);
  if (Math.round(a * 10) / 10 < 1000) return `${Math.round(a * 10) / 10} ms`;
  for (const [size, unit, next] of UNITS) {
    const n = (a / size).toFixed(1);
    if (next === undefined || Number(n) < next) return `${n} ${unit}`;
  }
  return "";
}

/** Each unit's size in ms, its name, and how many of it make the next unit. */
const UNITS = /** @type {const} */ ([
  [1000, "s", 60],
  [60_000, "min", 60],
  [3_600_000, "h", 24],
  [86_400_000, "d", undefined],
]);

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (e) => {
    if (e instanceof Usage) {
      process.stderr.write(`tarry-queue: ${redact(e.message)}\n\n${USAGE}`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`tarry-queue: ${redact(String(e?.message ?? e))}\n`);
      process.exitCode = 1;
    }
  },
);
