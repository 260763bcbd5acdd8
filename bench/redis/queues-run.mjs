// The command line of bench/redis/queues.mjs and queues-bullmq.mjs: `[--spread MS] [count ...]`
// (default counts 1000 and 10000). For each count, a private redis-server (30000 clients
// allowed) and a fresh child process of `file` (`--child {port, count, spread}`), whose one
// message is printed as a JSON line.

import { fork } from "node:child_process";
import { startRedis } from "../../tools/redis-server.mjs";

/** @param {string} file the script, run with --child */
export async function runCounts(file) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--spread");
  const spread = at >= 0 ? Number(args.splice(at, 2)[1]) : 0;
  if (!(Number.isInteger(spread) && spread >= 0)) throw new Error("--spread: a whole number of ms");
  const counts = args.map(Number);
  for (const count of counts.length ? counts : [1000, 10_000]) {
    const redis = await startRedis({ args: ["--maxclients", "30000"] });
    try {
      const result = await new Promise((resolve, reject) => {
        const c = fork(file, ["--child", JSON.stringify({ port: redis.port, count, spread })], { stdio: "inherit" });
        c.once("message", resolve);
        c.once("exit", (code) => reject(new Error(`child exited with ${code}`)));
      });
      console.log(JSON.stringify(result));
    } catch (e) {
      console.log(JSON.stringify({ count, spread, failed: String(e.message) }));
    } finally {
      await redis.stop();
    }
  }
}
