import { startRedis } from "../../scripts/redis-server.mjs";
import { Redis } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
const r = await startRedis();
const now = () => performance.now();
try {
  const c = new Redis({ port: r.port, enableAutoPipelining: true });
  const q = new RedisDelayQueue({ redis: { port: r.port }, name: "p" });
  await q.offer(1, 3600000);
  const sha = await c.script("load", "return 1");
  const time = async (label, f, n = 3000) => { for (let i = 0; i < 300; i++) await f(i); const t = now(); for (let i = 0; i < n; i++) await f(i); console.log(label, ((now() - t) / n * 1000).toFixed(1), "us"); };
  for (let k = 0; k < 2; k++) {
    await time("ping", () => c.ping());
    await time("evalsha return 1", () => c.evalsha(sha, 0));
    await time("evalsha 6 keys 7 args", () => c.evalsha(sha, 6, "a{x}", "b{x}", "c{x}", "d{x}", "e{x}", "f{x}", "ch", "123.456", 1000, "id", "d", 3600000, '{"n":1}'));
    await time("offer", (i) => q.offer({ n: i }, 3600000));
  }
  console.log(await c.info("commandstats"));
  c.disconnect(); await q.close();
} finally { await r.stop(); }
