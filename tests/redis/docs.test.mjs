// Every ```js redis block of README.md and docs/, run as written with REDIS_URL naming a
// private redis-server of its own (tests/engines/docs.mjs: it must exit 0 and print its
// output block).
import { startRedis } from "../../tools/redis-server.mjs";
import { runDocBlocks } from "../engines/docs.mjs";

runDocBlocks("redis", { least: 2, start: () => startRedis(), variable: "REDIS_URL" });
