// How a Lua script's source is put together from its parts: the script's head (its header,
// up to its first `--- @include` line), each include it needs, in the order scripts/lua.mjs
// resolved (an include's own includes before it, each once), then the rest of the script.
// And the library: every script in one source, each as a function called by its name, which
// is what Redis runs for a batch, the calls of several queues in one run (js/redis/gather.js);
// a lone call runs its script's own source, which defines only what that script uses. The one
// place that does it: scripts/lua.mjs (to build and lint) and js/redis/lua.js (at import, so
// that the package holds each include once) both call it.

/**
 * A script's source as Redis runs it: each include without the functions the script never
 * calls (`unused`), so that a call defines only what it runs.
 * @param {string} head the script's lines before its first include, header included
 * @param {string[]} parts the names of its includes, in order
 * @param {Record<string, string>} includes each include's code (its own include lines removed)
 * @param {string} rest the script's lines after its includes
 * @param {string[]} [unused] the includes' functions to leave out (scripts/lua.mjs finds them)
 */
export function assemble(head, parts, includes, rest, unused = []) {
  const out = [head];
  for (const name of parts)
    out.push(`-- ${name} (includes/${name}.lua)`, without(includes[name], unused), `-- end of ${name}`);
  out.push(rest);
  return out.join("\n");
}

/** An include's function: `local function <name>(` at the start of a line. */
const FUNCTION = /^local function (\w+)\(/;
/** A function on one line: it ends on the line it starts (a comment may follow). */
const ONE_LINE = /\send(\s*--.*)?$/;

/**
 * The functions an include defines at its top level, each with its lines [from, to): from
 * `local function <name>(` to the line that closes it (the same line, or the next line that
 * starts with `end`), with the comment lines just above it.
 * @param {string} code
 * @returns {{ name: string, from: number, to: number }[]}
 */
export function functionsOf(code) {
  const lines = code.split("\n");
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const m = FUNCTION.exec(lines[i]);
    if (!m) continue;
    let from = i;
    while (from > 0 && lines[from - 1].startsWith("--")) from--;
    let to = i;
    if (!ONE_LINE.test(lines[i])) while (to < lines.length && !/^end\b/.test(lines[to])) to++;
    found.push({ name: m[1], from, to: to + 1 });
    i = to;
  }
  return found;
}

/**
 * `code` without the functions named in `unused`.
 * @param {string} code
 * @param {string[]} unused
 */
function without(code, unused) {
  if (unused.length === 0) return code;
  const lines = code.split("\n");
  for (const { name, from, to } of functionsOf(code).reverse())
    if (unused.includes(name)) lines.splice(from, to - from);
  return lines.join("\n");
}

/** The library's batch: each call on its own queue's keys (includes/keys.lua: bind), under pcall. */
const BATCH = [
  "-- the batch",
  "local out, i, k = {}, 1, 0",
  "while i <= #ARGV do",
  "  local name, n = ARGV[i], tonumber(ARGV[i + 1])",
  "  local args = {}",
  "  for j = 1, n do args[j] = ARGV[i + 1 + j] end",
  "  i = i + 2 + n",
  "  bind(k)",
  "  k = k + 1",
  "  local ok, reply = pcall(scripts[name], args)",
  "  if ok then",
  "    if reply == nil then reply = false end",
  "    out[#out + 1] = reply",
  "  else",
  "    out[#out + 1] = { err = type(reply) == 'table' and reply.err or tostring(reply) }",
  "  end",
  "end",
  "return out",
];

/**
 * The library's source: every include once (each after the ones it needs), then each script's
 * code as the function `scripts[name]` of its ARGV, then the batch that calls them.
 * @param {Record<string, { parts: string[], head: string, rest: string }>} scripts by name (a script with no includes is all head)
 * @param {Record<string, string>} includes each include's code
 */
export function library(scripts, includes) {
  /** @type {string[]} */
  const order = [];
  for (const { parts } of Object.values(scripts)) for (const p of parts) if (!order.includes(p)) order.push(p);
  const out = [
    "--[[ library: every script of tarry-queue/redis, each a function of its ARGV, called by name",
    "  in a batch, the calls of several queues in one run.",
    "  KEYS: each call's queue keys in turn (includes/keys.lua)",
    "  ARGV: per call: its script's name (js/redis/lua/<name>.lua), its argument count, its arguments",
    "  Reply: per call, its script's reply, or its error (one call's error stops none of the others)",
    "]]",
  ];
  for (const name of order) out.push(`-- ${name} (includes/${name}.lua)`, includes[name], `-- end of ${name}`);
  out.push("local scripts = {}");
  for (const [name, { parts, head, rest }] of Object.entries(scripts)) {
    out.push(
      `-- ${name}.lua`,
      `scripts[${JSON.stringify(name)}] = function(ARGV) -- luacheck: ignore 212`,
      parts.length ? rest : head,
      "end",
    );
  }
  out.push(...BATCH);
  return out.join("\n");
}
