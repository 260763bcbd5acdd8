// offerMany of N items on a private redis-server, default options, timed:
//   node bench/redis/offer-many.mjs N
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "../../tools/redis-server.mjs";
const n = Number(process.argv[2]);
const s = await startRedis();
const q = new RedisDelayQueue({ redis: s.url, name: "m", onerror: () => {} });
await q.size();
const items = Array.from({ length: n }, (_, i) => ({ value: { i }, delayMs: 60_000 + i }));
const t = performance.now();
let out;
try {
  await q.offerMany(items);
  out = "ok";
} catch (e) {
  out = `failed: ${e.message.slice(0, 140)}`;
}
const ms = performance.now() - t;
console.log(`offerMany ${n}: ${Math.round(ms)} ms, ${out}; size ${await q.size().catch(() => "?")}`);
await q.close();
await s.stop();
