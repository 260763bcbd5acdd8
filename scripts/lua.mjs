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
// and shares code through lines `--- @include "<include>"`, which stand for
// js/redis/lua/includes/<include>.lua. An include may include others. Each include is put in
// place once, at its first mention (its own includes before it), so a script gets each shared
// function once, defined before the code that calls it.
//
// The scripts are built into js/redis/lua.js (their sources, SHA-1s, and which replies start
// with the time), so that the Redis entry reads no file at run time and bundles like any
// module. The files are the source; lua.js is what `node scripts/lua.mjs` writes, and
// tests/redis/lua.test.mjs fails when it is stale.
//
//   node scripts/lua.mjs            writes js/redis/lua.js
//   node scripts/lua.mjs --check    fails if js/redis/lua.js is stale, then runs luacheck on
//                                   every script as Redis runs it (scripts/lint.sh)

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("..", import.meta.url));
export const luaDir = join(root, "js/redis/lua");
export const generated = join(root, "js/redis/lua.js");

const INCLUDE = /^--- @include "([\w-]+)"\s*$/;
const HEADER = /^--\[\[ ([\w-]+): ([\s\S]*?)\n\]\]\n/;

/**
 * The source of `file` with its includes in place (each once), read through `read(path)`.
 * Throws an Error naming the file and line of an include that is missing or that includes
 * itself, directly or not.
 * @param {string} file a path below `dir`
 * @param {string} dir where `includes/` is
 * @param {(path: string) => string} [read]
 */
export function assemble(file, dir, read = (p) => readFileSync(p, "utf8")) {
  return assembleText(read(join(dir, file)), join(dir, file), dir, read);
}

/**
 * `text` (read from `path`, for messages) with its includes in place, as assemble() does.
 * @param {string} text
 * @param {string} path
 * @param {string} [dir]
 * @param {(path: string) => string} [read]
 */
export function assembleText(text, path, dir = luaDir, read = (p) => readFileSync(p, "utf8")) {
  const done = new Set();
  const out = [];
  /** @param {string} path @param {string[]} chain the includes being expanded, outermost first */
  const expand = (path, chain, text = read(path)) => {
    const lines = text.split("\n");
    lines.forEach((line, i) => {
      const m = INCLUDE.exec(line);
      if (!m) {
        out.push(line);
        return;
      }
      const name = m[1];
      const where = `${relative(dir, path)}:${i + 1}`;
      if (chain.includes(name))
        throw new Error(`${where}: "${name}" includes itself (${[...chain, name].join(" → ")})`);
      if (done.has(name)) return;
      const target = join(dir, "includes", `${name}.lua`);
      try {
        read(target);
      } catch (e) {
        throw new Error(`${where}: no include "${name}" (${relative(dir, target)})`, { cause: e });
      }
      done.add(name);
      out.push(`-- ${name} (includes/${name}.lua)`);
      expand(target, [...chain, name]);
      out.push(`-- end of ${name}`);
    });
  };
  expand(path, [], text);
  return out.join("\n");
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
 * Every script in `dir` by name: { source (includes in place), sha (SHA-1 of the source, as
 * EVALSHA names it), timed (the reply starts with the server's time), header }.
 * @param {string} [dir]
 */
export function loadScripts(dir = luaDir) {
  const scripts = {};
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith(".lua")) continue;
    const name = file.slice(0, -4);
    const source = assemble(file, dir);
    const h = header(name, source);
    scripts[name] = { source, sha: createHash("sha1").update(source).digest("hex"), timed: h.timed, header: h };
  }
  return scripts;
}

/** The text of js/redis/lua.js for the scripts in `dir`. */
export function generate(dir = luaDir) {
  const lines = [
    "// Generated by `node scripts/lua.mjs` from js/redis/lua/: edit the .lua files, not this.",
    "// Each script as Redis runs it (its includes in place), its SHA-1 (what EVALSHA names it by),",
    "// and whether its reply starts with the server's time. js/redis/scripts.js gives each one its",
    "// arguments and reads its reply.",
    "",
    "export const LUA = {",
  ];
  for (const [name, s] of Object.entries(loadScripts(dir))) {
    lines.push(
      `  ${name}: {`,
      `    sha: "${s.sha}",`,
      `    timed: ${s.timed},`,
      "    source:", // laid out as Biome formats it, so that `npm run lint` agrees
      `      ${JSON.stringify(s.source)},`,
      "  },",
    );
  }
  lines.push("};", "");
  return lines.join("\n");
}

/** luacheck over every script as Redis runs it; throws (with luacheck's report) if it finds anything. */
export function lint(dir = luaDir) {
  const out = join(root, "target/lua");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const files = [];
  for (const [name, s] of Object.entries(loadScripts(dir))) {
    files.push(join(out, `${name}.lua`));
    writeFileSync(files.at(-1), `${s.source}\n`);
  }
  // Lua 5.1 as Redis embeds it, with the globals Redis gives a script.
  const args = [
    "--no-color",
    "--codes",
    "--std",
    "lua51",
    "--read-globals",
    "redis",
    "KEYS",
    "ARGV",
    "cjson",
    "--",
    ...files,
  ];
  execFileSync("luacheck", args, { stdio: "inherit" });
  return files.length;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!process.argv.includes("--check")) writeFileSync(generated, generate());
  else {
    if (readFileSync(generated, "utf8") !== generate()) {
      console.error("js/redis/lua.js is stale: `node scripts/lua.mjs` builds it from js/redis/lua/");
      process.exit(1);
    }
    try {
      lint();
    } catch {
      process.exit(1); // luacheck has printed what it found
    }
  }
}
