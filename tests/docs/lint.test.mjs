// The docs' own lint (scripts/docs/check.mjs), on samples: what it must catch and what it
// must let through (code, URLs, #colours, hex data, English words made of hex letters), the
// anchors it gives headings, the block tags it refuses, the links it follows, and the code
// map's check (scripts/docs/map.mjs) on a small repository's files. Then the repository's
// pages themselves.
import { test } from "node:test";
import { execFileSync } from "node:child_process";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tagProblems } from "../../scripts/docs/blocks.mjs";
import { check, commitsOfThisRepo, linkProblems, lintProse } from "../../scripts/docs/check.mjs";
import { inScope, isPath, mapProblems } from "../../scripts/docs/map.mjs";
import { parse, slug } from "../../scripts/docs/markdown.mjs";

/** What lintProse finds in `text`, as "rule: match" strings; `commits` are the hashes that name commits. */
function lint(text, commits = []) {
  return lintProse(text, { isCommit: (w) => commits.includes(w) }).map((p) => `${p.rule}: ${p.match}`);
}

test("first person is caught in prose", () => {
  assert.deepEqual(lint("What I tried: one ZRANGE fewer."), ["first person: I"]);
  assert.deepEqual(lint("We recommend a lease of 5 s."), ["first person: We"]);
  assert.deepEqual(lint("On our machine, and on my laptop."), ["first person: our", "first person: my"]);
  assert.deepEqual(lint("Let's see; it gives us the head. I'm sure we've seen it."), [
    "first person: Let's",
    "first person: us",
    "first person: I'm",
    "first person: we've",
  ]);
  assert.deepEqual(lint("| a table cell we wrote |"), ["first person: we"]);
});

test("first person is not caught in code, URLs, link targets, or words that merely contain the letters", () => {
  const text = [
    "I/O bound work, Iceland, Idempotent, myriad users, usage, ourselves-free, the US, Western.",
    "The variable `we` and `const my = 1`, [a page](docs/we/our.md), https://example.com/our/my.",
    "<!-- we wrote this comment -->",
    "```js node",
    "const we = 1; // I think our code runs",
    "```",
  ].join("\n");
  assert.deepEqual(lint(text), []);
});

test("issue and pull-request numbers are caught", () => {
  assert.deepEqual(lint("Status against the targets of issue 11."), ["issue number: issue 11"]);
  assert.deepEqual(lint("Issues 10 and 12 asked for it (#12), see PR 7 and GH-5."), [
    "issue number: Issues 10",
    "issue number: #12",
    "issue number: PR 7",
    "issue number: GH-5",
  ]);
  assert.deepEqual(lint("Fixed in #3."), ["issue number: #3"]);
});

test("issue numbers are not caught in colours, entities, anchors, code or plain prose about issues", () => {
  const text = [
    "The CSS colours #fff, #0a0b0c and #ffaa0088; the entity &#123;.",
    "An issue with timers; [the section](#1-introduction); `#12` in code.",
    "```sh no-run",
    "git log --grep 'issue 12' # see #12",
    "```",
  ].join("\n");
  assert.deepEqual(lint(text), []);
});

test("commit hashes are caught in prose, and in code when they name a commit", () => {
  assert.deepEqual(lint("Measured at d946a31, on a quiet machine."), ["commit hash: d946a31"]);
  assert.deepEqual(lint("The full run of 2026-12-01 at 4781973.", ["4781973"]), ["commit hash: 4781973"]);
  assert.deepEqual(lint("A 40-digit one: 4781973c1d94fae54bd22a5ca17c55c66bcddf74."), [
    "commit hash: 4781973c1d94fae54bd22a5ca17c55c66bcddf74",
  ]);
  assert.deepEqual(lint("tarry at commit `e83a77d`", ["e83a77d"]), ["commit hash: e83a77d"]);
  assert.deepEqual(lint("```sh no-run\ngit checkout 2407f5d\n```", ["2407f5d"]), ["commit hash: 2407f5d"]);
});

test("hex that is no commit is not caught: data in code, numbers, UUIDs, words, colours, 0x literals", () => {
  const text = [
    "1,095,552 inputs; 10000000 items; 67108864 slots; a UUID 123e4567-e89b-12d3-a456-426614174000.",
    "English made of hex letters: defaced, effaced, accede. A colour #ffaa0088, a literal 0x1f2e3d4c.",
    "A member `000000000000002a` of the sorted set.",
    "```js node",
    'const key = "deadbeef12"; // 0000000000000001',
    "```",
  ].join("\n");
  assert.deepEqual(lint(text), []);
});

test("commitsOfThisRepo knows this repository's commits from other hex", () => {
  const isCommit = commitsOfThisRepo();
  const head = execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8" }).trim();
  assert.equal(isCommit(head.slice(0, 7)), true);
  assert.equal(isCommit(head), true);
  assert.equal(isCommit("0000000"), false);
  assert.equal(isCommit("deadbee"), false);
});

test("headings get GitHub's anchors", () => {
  assert.equal(slug("WebAssembly component (WASI 0.2)"), "webassembly-component-wasi-02");
  assert.equal(slug("In memory: `DelayQueue` and `Scheduler`"), "in-memory-delayqueue-and-scheduler");
  assert.equal(slug("\\[toStringTag\\]()"), "tostringtag");
  assert.equal(slug("[Unreleased]"), "unreleased");
  assert.equal(slug("Node, Deno and Bun"), "node-deno-and-bun");
  assert.equal(slug("stack?"), "stack");
  const { anchors } = parse('# A\n\n## Twice\n\n## Twice\n\n<a id="custom"></a>\n\n```md\n## Not a heading\n```\n');
  assert.deepEqual([...anchors].sort(), ["a", "custom", "twice", "twice-1"]);
});

test("code blocks: a runner is required, no-run only for what is not code, output must follow a block that runs", () => {
  const blocks = (md) =>
    parse(md).blocks.map((b) => {
      const words = b.comment?.startsWith("runner:") ? [b.lang, ...b.comment.slice(7).trim().split(/\s+/)] : b.words;
      return { file: "x.md", line: b.line, lang: b.lang, runner: words[1], orphan: false };
    });
  const problems = (md) => tagProblems(blocks(md)).map((p) => p.replace(/:.*?: /, ": "));
  assert.deepEqual(problems("```js node\nx\n```\n\n```sh no-run\nls\n```\n\n```toml no-run\na = 1\n```\n"), []);
  assert.deepEqual(problems("<!-- runner: node -->\n```js\nx\n```\n"), []);
  assert.match(problems("```js\nx\n```\n")[0], /with no runner/);
  assert.match(problems("```\nx\n```\n")[0], /with no runner/);
  assert.match(problems("```js no-run\nx\n```\n")[0], /`no-run` is for/);
  assert.match(problems("```js nodejs\nx\n```\n")[0], /unknown runner "nodejs"/);
  assert.match(tagProblems([{ file: "x.md", line: 1, runner: "output", orphan: true }])[0], /must follow a block/);
});

test("links: relative files and #anchors are followed; URLs and code are not", () => {
  const dir = mkdtempSync(join(tmpdir(), "tarry-links-"));
  try {
    mkdirSync(join(dir, "docs"));
    writeFileSync(join(dir, "docs", "b.md"), "# B\n\n## There\n");
    writeFileSync(
      join(dir, "a.md"),
      [
        "[fine](docs/b.md#there), [fine too](docs/b.md), [here](#a), [web](https://example.com/x.md#y).",
        "[gone](docs/c.md), [no anchor](docs/b.md#nowhere), [no local anchor](#nope), `[code](docs/d.md)`.",
        "[out](../elsewhere.md)",
        "# A",
      ].join("\n"),
    );
    assert.deepEqual(linkProblems(["a.md"], dir), [
      "a.md:2: docs/c.md: no such file docs/c.md",
      'a.md:2: docs/b.md#nowhere: no heading or id "nowhere" in docs/b.md',
      'a.md:2: #nope: no heading or id "nope" in a.md',
      "a.md:3: ../elsewhere.md: leads out of the repository",
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A small repository's tracked files, and a code map of it that names them all. */
const FILES = [
  "js/memory/queue.js",
  "js/redis.js",
  "js/redis/keys.js",
  "js/redis/lua/offer.lua",
  "js/redis/lua/take.lua",
  "js/redis/lua/includes/record.lua",
  "js/durable/store.js",
  "js/durable/queue.js",
  "src/lib.rs",
  "scripts/build.sh",
  "scripts/docs/package.json",
  "tools/serve.mjs",
  "redis/package.json",
  "tests/bad-input.mjs",
  "tests/js/queue.test.mjs",
  "tests/js/fixtures/a.json",
  "bench/run.mjs",
  "docs/redis.md",
];
const MAP = [
  "# Architecture",
  "",
  "## Code map",
  "",
  "### `src/`: the core",
  "",
  "- `lib.rs`: the crate.",
  "",
  "### `js/`: the face",
  "",
  "- `memory/queue.js`: the queue.",
  "- `durable/`: a file per role: `queue.js` (the class), `store.js`.",
  "- `redis.js`, `redis/`: the Redis entry.",
  "  - `redis/keys.js`: the keys; `redis/lua/*.lua` the scripts, `lua/includes/record.lua`.",
  "",
  "### Elsewhere",
  "",
  "- `tests/js/` and `tests/bad-input.mjs`; `tools/serve.mjs`; `scripts/build.sh`; `redis/package.json`.",
  "- `tarry-queue/redis` is a package name, `npm run bench` a command, `<name>.lua` a placeholder.",
  "",
  "## Invariants",
  "",
  "- `redis/keys.js` alone names keys; the build writes `dist/tarry.js`.",
  "",
].join("\n");

test("code map: its scope is the source of js/ (Lua scripts by pattern), src/, scripts/, tools/, the shims and tests' top level", () => {
  assert.deepEqual(inScope(FILES), [
    "js/durable/queue.js",
    "js/durable/store.js",
    "js/memory/queue.js",
    "js/redis.js",
    "js/redis/keys.js",
    "js/redis/lua/includes/record.lua",
    "redis/package.json",
    "scripts/build.sh",
    "src/lib.rs",
    "tests/bad-input.mjs",
    "tests/js/",
    "tools/serve.mjs",
  ]);
  for (const word of ["queue.js", "redis/", "lua/includes/record.lua", "redis/lua/*.lua", "package.json"])
    assert.ok(isPath(word), word);
  for (const word of ["tarry-queue/redis", "npm run bench", "<name>.lua", ".d.ts", "Deadlines#wakeAt", "DelayQueue"])
    assert.ok(!isPath(word), word);
});

test("code map: a map that names every file of its scope, by short names under its folders, passes", () => {
  assert.deepEqual(mapProblems(MAP, FILES), []);
});

test("code map: a file of the scope it does not name fails, naming the file", () => {
  assert.deepEqual(mapProblems(MAP, [...FILES, "js/engine/ids.js", "tests/schedule/weight.mjs", "cron/package.json"]), [
    "ARCHITECTURE.md: the code map does not name cron/package.json",
    "ARCHITECTURE.md: the code map does not name js/engine/ids.js",
    "ARCHITECTURE.md: the code map does not name tests/schedule/",
  ]);
  // Named outside the code map's section does not count.
  const outside = MAP.replace("- `memory/queue.js`: the queue.\n", "").replace(
    "## Invariants\n",
    "## Invariants\n\n- `js/memory/queue.js`.\n",
  );
  assert.deepEqual(mapProblems(outside, FILES), ["ARCHITECTURE.md: the code map does not name js/memory/queue.js"]);
  // A short name resolves to the nearest folder first: `store.js` outside the durable/ item is js/store.js.
  const moved = MAP.replace(", `store.js`.", ".").replace(
    "- `memory/queue.js`: the queue.",
    "- `memory/queue.js`: the queue; `store.js`.",
  );
  assert.deepEqual(mapProblems(moved, FILES), [
    "ARCHITECTURE.md:11: `store.js` names no tracked file or folder",
    "ARCHITECTURE.md: the code map does not name js/durable/store.js",
  ]);
});

test("code map: a backticked path that names nothing fails, anywhere in ARCHITECTURE.md, with its line", () => {
  const text = `${MAP}- \`redis/gone.js\`, \`tests/nowhere/\`, \`js/redis/lua/*.py\`; \`scheduleAdvance.lua\` outside its folder.\n`;
  assert.deepEqual(mapProblems(text, FILES), [
    "ARCHITECTURE.md:24: `redis/gone.js` names no tracked file or folder",
    "ARCHITECTURE.md:24: `tests/nowhere/` names no tracked file or folder",
    "ARCHITECTURE.md:24: `js/redis/lua/*.py` names no tracked file or folder",
    "ARCHITECTURE.md:24: `scheduleAdvance.lua` names no tracked file or folder",
  ]);
  // Paths in code blocks are not read.
  assert.deepEqual(mapProblems(`${MAP}\n\`\`\`\n\`js/gone.js\`\n\`\`\`\n`, FILES), []);
});

test("README.md, docs/, ARCHITECTURE.md, CHANGELOG.md and the benchmark pages pass (npm run docs:check)", () => {
  assert.deepEqual(check(), []);
});
