// The schema: the versioned migrations of sql/ (NNN_name.sql, each with a header saying what it
// does), applied in order by migrate(), which any number of processes may run at once: it
// takes a transaction-scoped advisory lock named after the schema, reads the versions the
// schema's `migrations` table records, and applies the missing ones in the same transaction,
// so a failed migration leaves nothing half done and a second run changes nothing. The files
// are plain SQL for psql (`psql -v schema=tarry -f sql/001_queue.sql`): `:"schema"` is the
// one placeholder, put in here as the quoted schema name.

import { readFile, readdir } from "node:fs/promises";

const DIR = new URL("../../sql/", import.meta.url);

/** The migrations shipped, in order: [{ version, name, text }]. */
export async function migrations() {
  const names = (await readdir(DIR)).filter((n) => /^\d{3}_[a-z0-9_]+\.sql$/.test(n)).sort();
  return Promise.all(
    names.map(async (name) => ({
      version: Number(name.slice(0, 3)),
      name,
      text: await readFile(new URL(name, DIR), "utf8"),
    })),
  );
}

/**
 * Brings `schema` up to the latest migration, on a client of `pool` (or the caller's client).
 * Resolves with the versions it applied (none when the schema was current).
 * @param {any} client a connected pg client, not in a transaction
 * @param {string} schema a checked schema name
 * @returns {Promise<number[]>}
 */
export async function migrate(client, schema) {
  const all = await migrations();
  await client.query("BEGIN");
  try {
    // Two processes migrating at once: the second waits here, then finds the work done.
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`tarry-queue/postgres migrate ${schema}`]);
    const { rows } = await client.query("SELECT to_regclass($1) AS t", [`"${schema}".migrations`]);
    const done = new Set();
    if (rows[0].t !== null) {
      for (const r of (await client.query(`SELECT version FROM "${schema}".migrations`)).rows) done.add(r.version);
    }
    const applied = [];
    for (const m of all) {
      if (done.has(m.version)) continue;
      await client.query(m.text.replaceAll(':"schema"', `"${schema}"`));
      applied.push(m.version);
    }
    await client.query("COMMIT");
    return applied;
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {});
    throw e;
  }
}
