// The Worker that runs the contract's cases (cases.mjs) inside real Durable Objects, in
// workerd: each case in an object of its own (its own storage and alarm), whose alarm() is the
// host's (durable-engine.mjs). tests/contract/workerd.test.mjs starts it through miniflare and
// asks for each case by name: GET /?case=<name> → { ok } or { ok: false, error }.
import { DurableDelayQueue } from "../../js/workerd.js";
import { cases } from "./cases.mjs";
import { DurableHost } from "./durable-engine.mjs";

export class ContractCase {
  constructor(ctx) {
    const storage = ctx.storage;
    this.host = new DurableHost(DurableDelayQueue, storage, async () => ({
      entries: [...(await storage.list())],
      alarm: await storage.getAlarm(),
    }));
  }

  async alarm() {
    await this.host.alarm();
  }

  async fetch(request) {
    const name = new URL(request.url).searchParams.get("case");
    const c = cases.find((x) => x.name === name);
    if (c === undefined) return Response.json({ ok: false, error: `no case is named ${name}` });
    try {
      await c.run(this.host.engine("DurableDelayQueue (workerd)"));
      return Response.json({ ok: true });
    } catch (e) {
      return Response.json({ ok: false, error: String(e?.stack ?? e) });
    } finally {
      await this.host.close();
    }
  }
}

export default {
  fetch(request, env) {
    const name = new URL(request.url).searchParams.get("case") ?? "";
    return env.CASES.get(env.CASES.idFromName(name)).fetch(request);
  },
};
