// The `tarry-queue` command (js/cli.js) as the engines' CLI tests run it: `run()` for a
// command that exits, `startDashboard()` for `dashboard`, and the one check that a credential
// in an unreachable engine's URL reaches neither the terminal nor a viewer.
// tests/redis/cli.test.mjs, tests/redis/cli-cluster.test.mjs and tests/postgres/cli.test.mjs
// use it.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const cli = fileURLToPath(new URL("../../js/cli.js", import.meta.url));
const exec = promisify(execFile);

/** Runs `tarry-queue ...args`; resolves with { stdout, stderr }, rejects with its exit `code` and output. */
export const run = (...args) => exec(process.execPath, [cli, ...args]);

/**
 * Starts `tarry-queue dashboard --port 0 ...args`; resolves once it printed its address with
 * the child, the line, the address (`base`), its `port` and its stderr so far (`err.text`).
 * The child is killed after test `t`.
 */
export async function startDashboard(t, args) {
  const child = spawn(process.execPath, [cli, "dashboard", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.after(() => child.kill("SIGKILL"));
  const err = { text: "" };
  child.stderr.on("data", (d) => {
    err.text += d;
  });
  const line = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("\n")) resolve(out.trim());
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code}: ${err.text}`)));
  });
  const base = /(http:\/\/[^\s#]+\/)/.exec(line)[1];
  return { child, line, base, port: Number(new URL(base).port), err };
}

/** Stops a dashboard started by startDashboard() as a user would (SIGTERM), and waits for it to exit. */
export async function stopDashboard({ child }) {
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
}

/**
 * The engine at `url` cannot be reached and its URL holds `secret`: `inspect` (with
 * `engineArgs` naming it and queue `name`) exits 1 within seconds, its output without the
 * secret and its stderr matching `shown` (the URL redacted); `dashboard` answers a stats
 * request with a 500 that names neither the secret nor the host, and logs the error's id
 * without the secret.
 */
export async function assertUnreachableRedacted(t, { engineArgs, name, secret, shown }) {
  const started = Date.now();
  await assert.rejects(run("inspect", ...engineArgs, "--name", name), (e) => {
    assert.equal(e.code, 1);
    assert.ok(!e.stderr.includes(secret) && !e.stdout.includes(secret), e.stderr);
    assert.match(e.stderr, shown);
    return true;
  });
  assert.ok(Date.now() - started < 20_000, "it fails within seconds");
  const { base, err } = await startDashboard(t, [...engineArgs, "--name", name]);
  const r = await fetch(`${base}api/queues/${name}/stats`);
  const body = await r.text();
  assert.equal(r.status, 500);
  assert.ok(!body.includes(secret) && !body.includes("127.0.0.1"), body);
  const { id } = JSON.parse(body);
  const end = Date.now() + 10_000;
  while (!err.text.includes(id) && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(err.text.includes(id), "the log names the error's id");
  assert.ok(!err.text.includes(secret), err.text);
}
