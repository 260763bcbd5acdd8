// The engine contract against one RedisDelayQueue spread over three hash tags (shards: 3) on a
// private redis-server (redis-runner.mjs): every case holds across shards as for one queue.
import { runRedis } from "./redis-runner.mjs";

runRedis({ shards: 3 });
