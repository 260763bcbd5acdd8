// What the Postgres tests share: one private cluster per test file (tools/postgres-server.mjs), a
// pg.Pool on it, and fresh queue names.
import { after, before } from "node:test";
import pg from "pg";
import { startPostgres } from "../../tools/postgres-server.mjs";

/** Starts a cluster before the file's tests and stops it after; `ctx.url`, `ctx.pool`, `ctx.server`. */
export function privatePostgres() {
  const ctx = /** @type {{ url: string, pool: any, server: any }} */ ({});
  before(async () => {
    ctx.server = await startPostgres();
    ctx.url = ctx.server.url;
    ctx.pool = new pg.Pool({ connectionString: ctx.url, max: 10 });
    ctx.pool.on("error", () => {});
  });
  after(async () => {
    await ctx.pool?.end();
    await ctx.server?.stop();
  });
  return ctx;
}

let serial = 0;
/** A queue name no other test of the run uses. @param {string} what */
export const fresh = (what) => `${what}-${process.pid}-${++serial}`;
