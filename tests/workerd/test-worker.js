// The worker the workerd test runs: README.md's Cloudflare Workers example (module
// "example.js", written out by the test with `tarry-queue` resolved as a bundler would), plus a
// few routes only the test needs: evict the object, count its constructions, and carry a
// DelayQueue snapshot through Durable Object storage.
import example, { Reminders } from "./example.js";
import { DelayQueue } from "./js/workerd.js";

export class TestReminders extends Reminders {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      await ctx.storage.put("boots", ((await ctx.storage.get("boots")) ?? 0) + 1);
    });
  }

  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (path === "/evict") {
      // Reset the object as an eviction would: the next event constructs a new instance.
      this.ctx.abort(new Error("evicted by the test"));
    }
    if (path === "/state") {
      return Response.json({
        boots: await this.ctx.storage.get("boots"),
        alarm: await this.ctx.storage.getAlarm(),
        pending: this.queue.toArray(),
        sent: (await this.ctx.storage.get("sent")) ?? [],
      });
    }
    if (path === "/snapshot/save") {
      const q = new DelayQueue();
      const items = await request.json(); // [[value, delayMs], …]
      for (const [value, delayMs] of items) q.offer(value, delayMs);
      const expected = q.toArray();
      await this.ctx.storage.put("snapshot", q.snapshot()); // structured clone, not JSON
      q.close();
      return Response.json({ expected, savedAt: Date.now() });
    }
    if (path === "/snapshot/restore") {
      const snap = await this.ctx.storage.get("snapshot");
      const q = DelayQueue.restore(snap);
      const got = [];
      while (q.size) got.push({ value: await q.take(), at: Date.now() });
      q.close();
      return Response.json({ got, deadlines: snap.items.map((i) => i.deadline) });
    }
    return super.fetch(request);
  }
}

export default example;
