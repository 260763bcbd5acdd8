// The package as miniflare loads it: every .js file of js/ and dist/ as an ES module and the
// wasm as a compiled WebAssembly module, at their paths under the repository root (the
// modulesRoot of each test), so that imports between them resolve as in the package.
// With `croner`, also the module js/schedule/cron.js imports as "croner": workerd resolves
// a bare import next to the importer, where a bundler would have put its resolution.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../..", import.meta.url));

/**
 * @param {{ croner?: boolean }} [opts]
 * @returns {{ type: string, path: string, contents?: string }[]}
 */
export function packageModules({ croner = false } = {}) {
  const mods = [];
  for (const dir of ["js", "dist"])
    for (const e of readdirSync(join(root, dir), { recursive: true, withFileTypes: true })) {
      if (!e.isFile()) continue;
      const path = join(e.parentPath ?? e.path, e.name);
      if (e.name.endsWith(".js")) mods.push({ type: "ESModule", path });
      else if (e.name.endsWith(".wasm")) mods.push({ type: "CompiledWasm", path });
    }
  if (croner) {
    const contents = readFileSync(join(root, "node_modules/croner/dist/croner.js"), "utf8");
    mods.push({ type: "ESModule", path: join(root, "js/schedule/croner"), contents });
  }
  return mods;
}
