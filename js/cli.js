#!/usr/bin/env node
// The `tarry-queue` command (package.json `bin`), for Redis queues:
//
//   tarry-queue inspect --redis URL --name NAME [--json]   what the queue holds, once
//   tarry-queue dashboard --redis URL --name NAME [--port P] [--token T]   the web dashboard
//
// It opens the queues with RedisDelayQueue (ioredis must be installed beside tarry-queue) and
// only reads them, but for what the dashboard's changes do with a token. The dashboard is
// tarry-queue/dashboard served by Node's http, on 127.0.0.1 unless --host says otherwise.

import http from "node:http";
import { parseArgs } from "node:util";

const USAGE = `Usage:
  tarry-queue inspect   --redis URL --name NAME [--prefix P] [--shards K] [--limit N] [--json]
  tarry-queue dashboard --redis URL --name NAME [--name NAME2 ...] [--prefix P] [--shards K]
                        [--port P] [--host H] [--token T] [--values]

  --redis   the Redis URL (default: $REDIS_URL, else redis://127.0.0.1:6379)
  --name    the queue's name (dashboard: one --name per queue)
  --prefix  the queues' key prefix (default "tarry:")
  --shards  the number of shards the queues were created with (default 1)
  --limit   inspect: how many of the next deadlines and dead letters to show (default 10, at most 1000)
  --json    inspect: one JSON object on stdout, for scripts
  --port    dashboard: the port (default 8080; 0 picks a free one)
  --host    dashboard: the address to listen on (default 127.0.0.1, this machine only)
  --token   dashboard: allow changes (retry, delete, purge, pause, resume) to who has it;
            without it the dashboard is read-only
  --values  dashboard: show the items' values (hidden by default: they may hold personal data)
`;

const OPTIONS = /** @type {const} */ ({
  redis: { type: "string" },
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
    /** @type {{ redis?: string, name?: string[], prefix?: string, shards?: string, limit?: string, json?: boolean, port?: string, host?: string, token?: string, values?: boolean, help?: boolean }} */ (
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
  const only = { inspect: ["limit", "json"], dashboard: ["port", "host", "token", "values"] };
  for (const k of only[command === "inspect" ? "dashboard" : "inspect"]) {
    if (o[k] !== undefined) throw new Usage(`--${k} is not an option of ${command}`);
  }
  const { RedisDelayQueue } = await import("./redis.js");
  const redis = o.redis ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const shards = numberOf(o.shards ?? "1", "--shards", 1, 64);
  const queues = names.map(
    (name) =>
      new RedisDelayQueue({
        redis,
        name,
        shards,
        ...(o.prefix !== undefined && { prefix: o.prefix }),
        onerror: () => {},
      }),
  );
  if (command === "inspect") {
    try {
      const limit = numberOf(o.limit ?? "10", "--limit", 1, 1000);
      const report = await inspect(queues[0], limit);
      process.stdout.write(o.json ? `${JSON.stringify(report, null, 2)}\n` : text(report, redis));
      return 0;
    } finally {
      await queues[0].close();
    }
  }
  const port = numberOf(o.port ?? "8080", "--port", 0, 65535);
  const host = o.host ?? "127.0.0.1";
  if (o.token !== undefined && o.token.length < 8) throw new Usage("--token must be at least 8 characters");
  const { dashboard, nodeListener } = await import("./dashboard.js");
  const handler = dashboard(queues, { token: o.token, values: o.values ?? false });
  const server = http.createServer(nodeListener(handler));
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(undefined));
  });
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${shown}:${address.port}/`;
  process.stdout.write(
    o.token === undefined
      ? `tarry dashboard (read-only) for ${names.join(", ")}: ${url}\n`
      : `tarry dashboard for ${names.join(", ")}: ${url}#token=${encodeURIComponent(o.token)}\n`,
  );
  if (!["127.0.0.1", "::1", "localhost"].includes(host)) {
    process.stderr.write(`warning: listening on ${host}: anyone who can reach it can read the queues\n`);
  }
  const stop = async () => {
    server.close();
    await Promise.all(queues.map((q) => q.close()));
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return undefined; // serving until stopped
}

function numberOf(raw, name, min, max) {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Usage(`${name} must be a whole number from ${min} to ${max}, got ${raw}`);
  return n;
}

/** What `inspect` reports: stats, the next deadlines, the items in flight, the dead letters. */
async function inspect(queue, limit) {
  const [stats, pending, inFlight, dead] = await Promise.all([
    queue.stats(),
    queue.pending({ limit }),
    queue.inFlight({ limit }),
    queue.deadLetters({ limit }),
  ]);
  const strip = ({ value, ...rest }) => rest;
  const letters = Array.isArray(dead) ? dead : dead.items;
  return {
    name: queue.name,
    now: Date.now(),
    paused: stats.paused,
    counts: { pending: stats.pending, inFlight: stats.inFlight, dead: stats.dead },
    headDelay: stats.headDelay ?? null,
    all: stats.all,
    next: pending.items.map(strip),
    inFlight: inFlight.items.map(strip),
    deadLetters: letters.map(strip),
  };
}

function text(r, redis) {
  const rel = (t) => (t >= r.now ? `in ${duration(t - r.now)}` : `${duration(r.now - t)} ago`);
  const iso = (t) => new Date(t).toISOString();
  const a = r.all;
  const lines = [
    `queue ${r.name} on ${redis.replace(/\/\/[^@/]*@/, "//")}: ${r.paused ? "paused" : "running"}`,
    `  pending ${r.counts.pending}, in flight ${r.counts.inFlight}, dead ${r.counts.dead}; head ${r.headDelay === null ? "none" : r.headDelay >= 0 ? `due in ${duration(r.headDelay)}` : `overdue by ${duration(-r.headDelay)}`}`,
    `  every process: delivered ${a.delivered}, acked ${a.acked}, nacked ${a.nacked}, redelivered ${a.redelivered}, dead ${a.dead}; lateness p50 ${duration(a.latenessP50)}, p99 ${duration(a.latenessP99)}, max ${duration(a.latenessMax)}`,
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
      process.stderr.write(`tarry-queue: ${e.message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`tarry-queue: ${e?.message ?? e}\n`);
      process.exitCode = 1;
    }
  },
);
