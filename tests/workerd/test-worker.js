// The worker the workerd test runs: docs/workers.md's reminders example (module
// "example.js", written out by the test with `tarry-queue` resolved as a bundler would), plus a
// few routes only the test needs: evict the object, count its constructions, carry a
// DelayQueue snapshot through Durable Object storage, offer what workerd refuses, make a
// delivery fail once, run deliveries side by side, and schedule. Every delivery attempt is recorded (in
// memory, in order: { text, attempt, at }) by a wrapper around the example's deliver() handler.
import example, { Reminders } from "./example.js";
import { DelayQueue } from "./js/workerd.js";

export class TestReminders extends Reminders {
  /** Each delivery of a reminder to the example's handler, in order (this instance): { text, attempt, at }. */
  attempts = [];
  /** Texts whose next delivery fails (before the example's callback runs). */
  failOnce = new Set();

  constructor(ctx, env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      await ctx.storage.put("boots", ((await ctx.storage.get("boots")) ?? 0) + 1);
    });
  }

  /** Wraps the example's deliver() handler: records each attempt, fails those asked to. */
  watch() {
    const queue = this.queue;
    if (Object.hasOwn(queue, "deliver")) return;
    const deliver = queue.deliver;
    queue.deliver = (handler, options) =>
      deliver.call(
        queue,
        async (reminder, job) => {
          this.attempts.push({ text: reminder.text, attempt: job.attempt, at: Date.now() });
          await new Promise((r) => setTimeout(r, 5)); // I/O: lets other work interleave
          if (this.failOnce.delete(reminder.text)) throw new Error(`delivery of ${reminder.text} failed (test)`);
          // An occurrence of a schedule: what the example keeps of it says which one it was.
          if (job.schedule !== undefined)
            return handler({ ...reminder, due: job.deadline, schedule: job.schedule }, job);
          return handler(reminder, job);
        },
        options,
      );
  }

  async alarm() {
    this.watch();
    return super.alarm();
  }

  async fetch(request) {
    this.watch();
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
        stored: [...(await this.ctx.storage.list({ prefix: "tarry:item:" })).keys()],
        sent: (await this.ctx.storage.get("sent")) ?? [],
        attempts: this.attempts,
      });
    }
    if (path === "/offer-at") {
      // [{ "text": …, "at": epoch ms, "pad": bytes }, …]: each offered with offerAt, its id or error.
      const results = [];
      for (const { text, at, pad = 0 } of await request.json()) {
        try {
          results.push({ id: await this.queue.offerAt({ text, due: at, pad: "x".repeat(pad) }, at) });
        } catch (e) {
          results.push({ error: `${e.name}: ${e.message}` });
        }
      }
      return Response.json({ results, pending: await this.queue.size(), alarm: await this.ctx.storage.getAlarm() });
    }
    if (path === "/fail-once") {
      for (const text of await request.json()) this.failOnce.add(text);
      return Response.json({ failOnce: [...this.failOnce] });
    }
    if (path === "/deliver-twice") {
      // Offers [{ "text": …, "delayMs": … }, …], then runs two deliveries side by side in this
      // request (the alarm, set by the offers, may run a third meanwhile).
      for (const { text, delayMs } of await request.json()) {
        await this.queue.offer({ text, due: Date.now() + delayMs }, delayMs);
      }
      await Promise.all([this.alarm(), this.alarm()]);
      return Response.json({ pending: await this.queue.size() });
    }
    if (path === "/schedule") {
      // { id, rule, value, options }: schedule(), or with `remove`, unschedule().
      const { id, rule, value, options, remove } = await request.json();
      if (remove) return Response.json({ removed: await this.queue.unschedule(id) });
      return Response.json(await this.queue.schedule(id, rule, value, options));
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
