// The engine contract against RedisDelayQueue on a private redis-server (redis-runner.mjs).
import { runRedis } from "./redis-runner.mjs";

runRedis();
