// Where the Postgres benchmark, tests and example find pg, pg-boss and graphile-worker: the repository's node_modules
// (they are devDependencies), or, when TARRY_PG_DEPS names another node_modules directory, there
// (a private install, e.g. `npm install pg pg-boss graphile-worker --prefix DIR`, then
// TARRY_PG_DEPS=DIR/node_modules).

import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const dir = process.env.TARRY_PG_DEPS;
const from = dir ? createRequire(join(dir, "resolve.js")) : null;

/** The module `name`, imported from TARRY_PG_DEPS when it is set. */
export const load = (name) => (from ? import(pathToFileURL(from.resolve(name)).href) : import(name));
