// A loopback port nothing listens on: where a test points a client that must fail to connect
// (within seconds, with its credentials redacted).
import { createServer } from "node:net";

/** A free loopback port, listened on once and closed again. */
export async function deadPort() {
  const s = createServer();
  await new Promise((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address();
  await new Promise((resolve) => s.close(resolve));
  return port;
}
