// A delay counts from the call, also for a fresh process's first call: the call is stamped
// when it is made, on the server's clock as the connection's probe learned it, not when
// Redis runs its script after the connection is made and probed. Here the connection takes
// seconds to come up (a proxy that holds it), so a stamp taken when the script runs would
// come out seconds late; the deadline must still be the call's time + delay, never earlier.

import { test } from "node:test";
import assert from "node:assert/strict";
import { connect, createServer } from "node:net";
import { RedisDelayQueue } from "tarry-queue/redis";
import { privateRedis } from "./fixture.mjs";

const fx = privateRedis("fc");

/** A loopback proxy to `port` that holds each connection `holdMs` before passing it on. */
async function slowProxy(port, holdMs) {
  const sockets = new Set();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    setTimeout(() => {
      const up = connect(port, "127.0.0.1");
      sockets.add(up);
      up.on("error", () => socket.destroy());
      socket.pipe(up);
      up.pipe(socket);
    }, holdMs);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `redis://127.0.0.1:${server.address().port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

test("a fresh process's first offer(v, 1000) is due 1000 ms after the call, not after the connection came up", async () => {
  const HOLD = 3000;
  const proxy = await slowProxy(fx.server.port, HOLD);
  const q = new RedisDelayQueue({
    redis: proxy.url,
    name: fx.name(),
    clockTolerance: 30_000,
    commandTimeout: 20_000,
    onerror: () => {},
  });
  try {
    const calledAt = Date.now();
    const id = await q.offer("first", 1000);
    const settledAt = Date.now();
    assert.ok(settledAt - calledAt >= HOLD - 50, "the proxy did not hold the connection");
    const { deadline } = await q.get(id);
    assert.ok(deadline >= calledAt + 1000, `early: due ${deadline - calledAt} ms after the call`);
    // Stamped when the script ran, it would be due about HOLD ms later than this.
    assert.ok(deadline < calledAt + 1000 + HOLD / 2, `late: due ${deadline - calledAt} ms after the call`);
  } finally {
    await q.close();
    await proxy.close();
  }
});
