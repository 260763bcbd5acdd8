// How a Lua script's source is put together from its parts: the script's head (its header,
// up to its first `--- @include` line), each include it needs, in the order scripts/lua.mjs
// resolved (an include's own includes before it, each once), then the rest of the script.
// The one place that does it: scripts/lua.mjs (to build and lint) and js/redis/lua.js (at
// import, so that the package holds each include once) both call it.

/**
 * A script's source as Redis runs it.
 * @param {string} head the script's lines before its first include, header included
 * @param {string[]} parts the names of its includes, in order
 * @param {Record<string, string>} includes each include's code (its own include lines removed)
 * @param {string} rest the script's lines after its includes
 */
export function assemble(head, parts, includes, rest) {
  const out = [head];
  for (const name of parts) out.push(`-- ${name} (includes/${name}.lua)`, includes[name], `-- end of ${name}`);
  out.push(rest);
  return out.join("\n");
}
