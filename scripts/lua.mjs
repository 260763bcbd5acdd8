// The Lua scripts of tarry-queue/redis, from their files to what Redis runs.
//
// Each script is a file js/redis/lua/<name>.lua that opens with its header:
//
//   --[[ <name>: what it does.
//     KEYS: ...
//     ARGV: ...
//     Reply: ...            ("Reply: now, ..." when the reply starts with the server's time)
//   ]]
//
// then lines `--- @include "<include>"`, each standing for js/redis/lua/includes/<include>.lua,
// then its code. An include may include others the same way (after its doc comment, before
// its code). A script runs with each include it needs put in once, where its first include
// line stands, an include's own includes before it (js/redis/assemble.js), so every shared
// function is defined once, before the code that calls it.
//
// The scripts are built into js/redis/lua.js (each include once, each script's parts, and
// which replies start with the time), so that the Redis entry reads no file at run time and
// bundles like any module. Redis runs them as one library (js/redis/assemble.js), each script
// a function called by name, by the library's SHA-1. The files are the source; lua.js is what
// `node scripts/lua.mjs` (`npm run lua`) writes, and tests/redis/lua.test.mjs and
// `npm run lint` fail when it is stale.
//
//   node scripts/lua.mjs            writes js/redis/lua.js
//   node scripts/lua.mjs --check    fails if js/redis/lua.js is stale, then runs luacheck on
//                                   every script as Redis runs it (scripts/lint.sh)

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { assemble, library } from "../js/redis/assemble.js";

export const root = fileURLToPath(new URL("..", import.meta.url));
export const luaDir = join(root, "js/redis/lua");
export const generated = join(root, "js/redis/lua.js");

const INCLUDE = /^--- @include "([\w-]+)"\s*$/;
const HEADER = /^--\[\[ ([\w-]+): ([\s\S]*?)\n\]\]\n/;
const read = (/** @type {string} */ p) => readFileSync(p, "utf8");

/**
 * A file split at its include lines: the lines before the first (`head`), the includes it
 * names with their line numbers, and the lines after them (`rest`). Include lines must all
 * stand before the file's code.
 * @param {string} text
 * @param {string} where the file, for messages
 */
function split(text, where) {
  const lines = text.split("\n");
  const first = lines.findIndex((l) => INCLUDE.test(l));
  if (first < 0) return { head: text, names: [], rest: "" };
  /** @type {{ name: string, line: number }[]} */
  const names = [];
  const rest = [];
  let code = false;
  lines.slice(first).forEach((line, i) => {
    const m = INCLUDE.exec(line);
    if (!m) {
      code ||= line.trim() !== "" && !line.trim().startsWith("--");
      rest.push(line);
    } else if (code) throw new Error(`${where}:${first + i + 1}: an include must come before the code`);
    else names.push({ name: m[1], line: first + i + 1 });
  });
  return { head: lines.slice(0, first).join("\n"), names, rest: rest.join("\n") };
}

/**
 * The parts of the script `file` in `dir`: { head, parts (include names in order), includes
 * (name → code), rest }. Throws an Error naming the file and line of an include that is
 * missing or that includes itself, directly or not.
 * @param {string} file a path below `dir`
 * @param {string} dir where `includes/` is
 * @param {string} [text] the script's text (default: read from the file)
 */
export function partsOf(file, dir, text = read(join(dir, file))) {
  /** @type {Record<string, string>} */
  const includes = {};
  const parts = [];
  /** @param {{ name: string, line: number }[]} names @param {string} from @param {string[]} chain */
  const resolve = (names, from, chain) => {
    for (const { name, line } of names) {
      const where = `${from}:${line}`;
      if (chain.includes(name))
        throw new Error(`${where}: "${name}" includes itself (${[...chain, name].join(" → ")})`);
      if (name in includes) continue;
      const path = join(dir, "includes", `${name}.lua`);
      let own;
      try {
        own = read(path);
      } catch (e) {
        throw new Error(`${where}: no include "${name}" (${relative(dir, path)})`, { cause: e });
      }
      const s = split(own, relative(dir, path));
      includes[name] = !s.names.length ? s.head : s.head ? `${s.head}\n${s.rest}` : s.rest;
      resolve(s.names, relative(dir, path), [...chain, name]);
      parts.push(name);
    }
  };
  const s = split(text, file);
  resolve(s.names, file, []);
  return { head: s.head, parts, includes, rest: s.rest };
}

/**
 * The source of the script `file` as Redis runs it: its includes in place (js/redis/assemble.js).
 * @param {string} file
 * @param {string} dir
 * @param {string} [text]
 */
export function sourceOf(file, dir, text) {
  const { head, parts, includes, rest } = partsOf(file, dir, text);
  return parts.length ? assemble(head, parts, includes, rest) : head;
}

/**
 * A script's header: { name, summary, keys, argv, reply, timed }. Throws when it is missing,
 * names another script, or lacks one of KEYS, ARGV and Reply.
 * @param {string} name
 * @param {string} source
 */
export function header(name, source) {
  const m = HEADER.exec(source);
  if (!m) throw new Error(`${name}.lua must open with its header: --[[ ${name}: ... ]]`);
  if (m[1] !== name) throw new Error(`${name}.lua: its header names "${m[1]}"`);
  /** @type {Record<string, string>} */
  const fields = {};
  let summary = "";
  let last = null;
  for (const line of m[2].split("\n")) {
    const f = /^\s*(KEYS|ARGV|Reply):\s*(.*)$/.exec(line);
    if (f) fields[(last = f[1])] = f[2];
    else if (last) fields[last] += ` ${line.trim()}`;
    else summary += `${summary ? " " : ""}${line.trim()}`;
  }
  for (const field of ["KEYS", "ARGV", "Reply"]) {
    if (fields[field] === undefined) throw new Error(`${name}.lua: its header has no ${field}: line`);
  }
  return {
    name,
    summary,
    keys: fields.KEYS,
    argv: fields.ARGV,
    reply: fields.Reply,
    timed: /^now\b/.test(fields.Reply),
  };
}

/**
 * Every script in `dir` by name: its parts, its source (includes in place), sha (SHA-1 of the
 * source, as EVALSHA names it), timed (the reply starts with the server's time), header.
 * @param {string} [dir]
 */
export function loadScripts(dir = luaDir) {
  /** @type {Record<string, ReturnType<typeof partsOf> & { source: string, sha: string, timed: boolean, header: ReturnType<typeof header> }>} */
  const scripts = {};
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith(".lua")) continue;
    const name = file.slice(0, -4);
    const parts = partsOf(file, dir);
    const source = parts.parts.length ? assemble(parts.head, parts.parts, parts.includes, parts.rest) : parts.head;
    const h = header(name, source);
    const sha = createHash("sha1").update(source).digest("hex");
    scripts[name] = { ...parts, source, sha, timed: h.timed, header: h };
  }
  return scripts;
}

/**
 * The library of the scripts in `dir` (what Redis runs): { source, sha }.
 * @param {ReturnType<typeof loadScripts>} scripts
 */
export function libraryOf(scripts) {
  /** @type {Record<string, string>} */
  const includes = {};
  for (const s of Object.values(scripts)) Object.assign(includes, s.includes);
  const source = library(scripts, includes);
  return { source, sha: createHash("sha1").update(source).digest("hex") };
}

/** The text of js/redis/lua.js for the scripts in `dir`, formatted as Biome formats it. */
export function generate(dir = luaDir) {
  const scripts = loadScripts(dir);
  /** @type {Record<string, string>} */
  const includes = {};
  for (const s of Object.values(scripts)) Object.assign(includes, s.includes);
  const sorted = Object.fromEntries(Object.entries(includes).sort(([a], [b]) => a.localeCompare(b)));
  const parts = Object.fromEntries(
    Object.entries(scripts).map(([name, s]) => [name, { timed: s.timed, parts: s.parts, head: s.head, rest: s.rest }]),
  );
  const text = `// Generated by \`npm run lua\` (scripts/lua.mjs) from js/redis/lua/: edit the .lua files, not this.
// Each include once; each script's parts and whether its reply starts with the server's time;
// put together at import (js/redis/assemble.js): each script's own source (what it is on its
// own), and the library Redis runs, every script a function of it, with its SHA-1 (what
// EVALSHA names it by). js/redis/scripts.js gives each script its arguments and reads its reply.

import { assemble, library } from "./assemble.js";

const INCLUDES = ${JSON.stringify(sorted, null, 2)};

const PARTS = ${JSON.stringify(parts, null, 2)};

/** @type {Record<keyof typeof PARTS, { timed: boolean, source: string }>} */
export const LUA = /** @type {any} */ (
  Object.fromEntries(
    Object.entries(PARTS).map(([name, { timed, parts, head, rest }]) => [
      name,
      { timed, source: parts.length ? assemble(head, parts, INCLUDES, rest) : head },
    ]),
  )
);

/** Every script in one source, each a function called by name: what Redis runs. */
export const LIBRARY = { source: library(PARTS, INCLUDES), sha: ${JSON.stringify(libraryOf(scripts).sha)} };
`;
  const biome = join(root, "node_modules/.bin/biome");
  return execFileSync(biome, ["format", `--stdin-file-path=${generated}`], { input: text, encoding: "utf8" });
}

/** luacheck over every script as Redis runs it; throws (luacheck has printed its report) if it finds anything. */
export function lint(dir = luaDir) {
  const out = join(root, "target/lua");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const files = [];
  const scripts = loadScripts(dir);
  for (const [name, s] of Object.entries(scripts)) {
    files.push(join(out, `${name}.lua`));
    writeFileSync(join(out, `${name}.lua`), `${s.source}\n`);
  }
  files.push(join(out, "library.lua"));
  writeFileSync(join(out, "library.lua"), `${libraryOf(scripts).source}\n`);
  // Lua 5.1 as Redis embeds it, with the globals Redis gives a script.
  const args = ["--no-color", "--codes", "--std", "lua51", "--read-globals", "redis", "KEYS", "ARGV", "cjson", "--"];
  execFileSync("luacheck", [...args, ...files], { stdio: "inherit" });
  return files.length;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!process.argv.includes("--check")) writeFileSync(generated, generate());
  else {
    if (read(generated) !== generate()) {
      console.error("js/redis/lua.js is stale: `npm run lua` builds it from js/redis/lua/");
      process.exit(1);
    }
    try {
      lint();
    } catch {
      process.exit(1);
    }
  }
}
