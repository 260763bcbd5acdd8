// The package as users get it: `npm pack` of this repository, installed by path into fresh
// projects. The type tests (tests/types/) and the bundler matrix (tests/bundlers/) build on
// it, so that what they check is the tarball, with its `files` and `exports`, not the tree.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("..", import.meta.url));

const npm = (args, cwd) =>
  execFileSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });

/**
 * Packs the repository (its `prepack` builds dist/ when stale) into a fresh folder. Returns
 * the tarball's path and `cleanup()`, which removes the folder and every project made in it.
 */
export function pack() {
  const dir = mkdtempSync(join(tmpdir(), "tarry-packed-"));
  const out = JSON.parse(npm(["pack", "--json", "--pack-destination", dir], root));
  return {
    dir,
    tarball: join(dir, out[0].filename),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A new project `name` next to the tarball with it installed by path (`npm install
 * <tarball>`), and `files` written into it ({ relative path: contents }). Returns the
 * project's folder. Its one dependency (croner) comes from npm's cache when the cache has
 * its metadata, else from the registry: `--offline` fails on a fresh machine, whose cache
 * holds croner's tarball (the repository's `npm ci`) but not the metadata an install by
 * path resolves it with.
 */
export function project({ dir, tarball }, name, files = {}) {
  const at = join(dir, name);
  mkdirSync(at, { recursive: true });
  writeFileSync(join(at, "package.json"), `${JSON.stringify({ name, private: true, type: "module" }, null, 2)}\n`);
  npm(["install", "--prefer-offline", tarball], at);
  for (const [path, contents] of Object.entries(files)) {
    mkdirSync(join(at, path, ".."), { recursive: true });
    writeFileSync(join(at, path), contents);
  }
  return at;
}
