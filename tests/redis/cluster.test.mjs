// The correctness run against a real Redis Cluster: three masters (`redis-server
// --cluster-enabled yes` x3, joined by `redis-cli --cluster create`), two queues whose hash
// tags live on different shards, three worker processes consuming both, a producer offering
// 5000 items to each (with cancels, reschedules and replacements by id).

import { test } from "node:test";
import assert from "node:assert/strict";
import { Cluster } from "ioredis";
import { startCluster } from "../../tools/redis-server.mjs";
import { correctnessRun } from "./fleet.mjs";

/** Two queue names whose keys ({name}) hash to slots served by different masters. */
async function namesOnTwoShards(seeds) {
  const c = new Cluster(seeds);
  try {
    const slots = await c.cluster("SLOTS");
    const owner = async (name) => {
      const slot = await c.cluster("KEYSLOT", `{${name}}`);
      return slots.find(([from, to]) => slot >= from && slot <= to)[2][1];
    };
    const first = "orders-0";
    const port = await owner(first);
    for (let i = 1; ; i++) {
      const other = await owner(`orders-${i}`);
      if (other !== port) return { names: [first, `orders-${i}`], ports: [port, other] };
    }
  } finally {
    c.disconnect();
  }
}

test("Redis Cluster (3 masters): two queues on different shards, 3 workers, 1 producer", async () => {
  const cluster = await startCluster(3);
  const workers = [];
  try {
    const { names, ports } = await namesOnTwoShards(cluster.seeds);
    assert.notEqual(ports[0], ports[1]);
    const figures = await correctnessRun({ cluster: cluster.seeds, names, concurrency: 8 }, 4700, workers);
    console.log(
      `# cluster: queues ${names.join(" and ")} on the masters at ports ${ports.join(" and ")};`,
      `${figures.delivered} delivered; lateness p50 ${figures.p50} ms, p99 ${figures.p99} ms, max ${figures.max} ms`,
    );
    for (const [i, name] of names.entries()) {
      const node = cluster.nodes.find((n) => n.port === ports[i]);
      assert.equal(await node.cli("zcard", `tarry:{${name}}:pending`), "0");
      assert.equal(await node.cli("hlen", `tarry:{${name}}:items`), "0");
    }
  } finally {
    for (const w of workers) w.child.kill("SIGKILL");
    await cluster.stop();
  }
});
