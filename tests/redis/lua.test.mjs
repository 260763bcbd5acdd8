// The Redis scripts' build (scripts/lua.mjs), without a server: the include loader against
// fixtures (tests/redis/lua-fixtures/), the headers, and js/redis/lua.js against the .lua
// files it is built from. `npm run test:quick` runs this file; tests/redis/ runs it again
// with the rest.

import { test } from "node:test";
import { createHash } from "node:crypto";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generate, generated, header, libraryOf, loadScripts, luaDir, sourceOf } from "../../scripts/lua.mjs";
import { SCRIPTS } from "../../js/redis/scripts.js";
import { LIBRARY } from "../../js/redis/lua.js";

const fixtures = fileURLToPath(new URL("lua-fixtures/", import.meta.url));

test("an include is put in once, where the first include line stands, its own includes before it", () => {
  const expected = readFileSync(join(fixtures, "main.expected.lua"), "utf8");
  assert.equal(sourceOf("main.lua", fixtures), expected);
});

test("an include that includes itself, does not exist or comes after code is an error naming the file and line", () => {
  assert.throws(() => sourceOf("cycle.lua", fixtures), {
    message: 'includes/pong.lua:1: "ping" includes itself (ping → pong → ping)',
  });
  assert.throws(() => sourceOf("missing.lua", fixtures), {
    message: 'missing.lua:2: no include "nowhere" (includes/nowhere.lua)',
  });
  assert.throws(() => sourceOf("late.lua", fixtures), { message: "late.lua:3: an include must come before the code" });
});

test("a header names its script, its KEYS, ARGV and reply, and whether the reply starts with the time", () => {
  const source = readFileSync(join(fixtures, "main.lua"), "utf8");
  assert.deepEqual(header("main", source), {
    name: "main",
    summary: "a script that includes two includes, one of which includes the other.",
    keys: "none",
    argv: "none",
    reply: "now, then what it read",
    timed: true,
  });
  assert.equal(header("x", source.replace("main:", "x:").replace("Reply: now,", "Reply: the time,")).timed, false);
  assert.throws(() => header("main", "return 1"), /main\.lua must open with its header/);
  assert.throws(() => header("other", source), /other\.lua: its header names "main"/);
  assert.throws(() => header("main", source.replace(/\n {2}Reply:.*/, "")), /main\.lua: its header has no Reply: line/);
});

test("every script has a header naming it, runs with its includes in place, and is called from js/redis/scripts.js, alone by its own SHA, in a batch by the library's", () => {
  const files = readdirSync(luaDir)
    .filter((f) => f.endsWith(".lua"))
    .map((f) => f.slice(0, -4))
    .sort();
  const scripts = loadScripts();
  assert.deepEqual(Object.keys(scripts).sort(), files);
  assert.deepEqual(Object.keys(SCRIPTS).sort(), files, "js/redis/scripts.js gives each script its arguments");
  for (const [name, s] of Object.entries(scripts)) {
    assert.doesNotMatch(s.source, /^--- @include/m, `${name}: an include left in place`);
    for (const [, fn] of s.source.matchAll(/^local function (\w+)/gm)) {
      assert.equal(s.source.split(`local function ${fn}(`).length, 2, `${name}: ${fn} defined twice`);
    }
    assert.equal(SCRIPTS[name].timed, s.timed, `${name}: whether its reply starts with the server's time`);
    // Alone, a call runs its own source: only the includes it names, not every script's.
    assert.equal(SCRIPTS[name].source, s.source, `${name}: its own source`);
    assert.equal(SCRIPTS[name].sha, createHash("sha1").update(s.source).digest("hex"), `${name}: by its SHA`);
    assert.doesNotMatch(s.source, /^scripts\[/m, `${name}: its source defines other scripts`);
  }
  const lib = libraryOf(scripts);
  assert.equal(LIBRARY.sha, lib.sha);
  assert.equal(LIBRARY.source, lib.source);
  for (const name of files) {
    assert.ok(lib.source.includes(`scripts["${name}"] = function(ARGV)`), `${name}: not in the library`);
  }
  for (const [, fn] of lib.source.matchAll(/^local function (\w+)/gm)) {
    assert.equal(lib.source.split(`local function ${fn}(`).length, 2, `the library defines ${fn} twice`);
  }
});

test("a script's source defines only the functions of its includes that it calls, directly or through another", () => {
  const scripts = loadScripts();
  const defined = (/** @type {string} */ source) => [...source.matchAll(/^local function (\w+)\(/gm)].map((m) => m[1]);
  // delayOf calls parse, fmt and clock; not seqs or save (record.lua), nor bind (keys.lua).
  assert.deepEqual(defined(scripts.delayOf.source).sort(), ["clock", "fmt", "parse"]);
  // offer calls head, publish and unlink (queue.lua), hex, seqs and save (record.lua); none of
  // announce, enqueue or bury (queue.lua).
  const offer = defined(scripts.offer.source);
  for (const fn of ["head", "publish", "seqs", "save", "hex", "unlink"])
    assert.ok(offer.includes(fn), `offer: ${fn} left out`);
  for (const fn of ["announce", "enqueue", "bury"]) assert.ok(!offer.includes(fn), `offer: ${fn} defined`);
  assert.deepEqual(scripts.delayOf.unused.sort(), ["bind", "hex", "save", "seqs", "start", "up"]);
  // The library defines every include's functions, for every script it holds.
  const lib = defined(libraryOf(scripts).source);
  for (const s of Object.values(scripts)) for (const fn of defined(s.source)) assert.ok(lib.includes(fn), fn);
});

test("js/redis/lua.js is what scripts/lua.mjs builds from js/redis/lua/ (run `npm run lua` after editing a script)", () => {
  assert.equal(readFileSync(generated, "utf8"), generate());
});
