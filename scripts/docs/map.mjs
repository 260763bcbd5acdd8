// ARCHITECTURE.md's code map kept honest (scripts/docs/check.mjs runs it): every source file
// in the map's scope is named in the "Code map" section, and every path written in backticks
// anywhere in ARCHITECTURE.md names a tracked file or folder.
//
// The scope (`inScope`): the tracked files of js/ (but the Lua scripts of js/redis/lua/, which
// the map names by a pattern), src/, scripts/ and tools/ that are code (not the config of
// scripts/docs/), the root shims' package.json files (redis/, cron/, dashboard/), and each
// top-level entry of tests/: a helper file there, or a folder of tests as one unit.
//
// The map writes short names: `queue.rs` under "### `src/`", `store.js` in the item that names
// `durable/`. A name resolves against, nearest first: the folders the names of its list item
// give (a folder named, or a named file's folder), then those of the items it sits in, the
// folder its section's heading names, the map's section folders, and the root; the first
// that exists is what it names. `*` matches within one path segment (`redis/lua/*.lua`).

/** What a backticked word must look like to be read as a path. */
const PATH = /^[\w*-][\w.*-]*(?:\/[\w.*-]+)*\/?$/;
const EXTENSION = /\.(?:js|mjs|cjs|ts|rs|lua|md|json|toml|sh|py|wit|html|css|txt|svg|png)$/;
/** Made by the build or the tests, so not tracked: named in the map, never checked. */
const UNTRACKED = ["dist/", "target/", "tests/artifacts/"];
/** Code, by extension, in the folders whose every such file the map names. */
const CODE = /\.(?:js|mjs|ts|rs|lua|sh|py)$/;

/** Whether a backticked word is a path (not a package name, a command, a type or a placeholder). */
export const isPath = (word) =>
  PATH.test(word) && !word.startsWith("tarry-queue") && (word.includes("/") || EXTENSION.test(word));

/** The units of `files` (tracked paths) that the code map must name: files, and tests' folders. */
export function inScope(files) {
  const units = new Set();
  for (const f of files) {
    if (/^(?:js|src|scripts|tools)\//.test(f) && CODE.test(f) && !/^js\/redis\/lua\/[^/]+\.lua$/.test(f)) units.add(f);
    else if (/^[^/]+\/package\.json$/.test(f) && !/^(?:bench|tests|scripts|examples|www)\//.test(f)) units.add(f);
    else if (f.startsWith("tests/")) {
      const [, top, rest] = f.match(/^tests\/([^/]+)(\/.*)?$/);
      units.add(rest ? `tests/${top}/` : f);
    }
  }
  return [...units].sort();
}

/**
 * The list items of ARCHITECTURE.md (and its paragraphs, as items of their own), each with
 * its backticked words `{ word, line }`, the item it sits in (`parent`) and its `section`
 * (`base`: the folder its heading names, or ""; `inMap`: under "## Code map"). Code blocks
 * are skipped.
 */
function items(text) {
  const out = [];
  let fenced = false;
  let section = { base: "", inMap: false };
  let inMap = false;
  let blank = true;
  const open = []; // the items the current line sits in, outermost first
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced || /^\s*(```|~~~)/.test(line)) continue;
    const heading = line.match(/^(#{2,3}) (.*)$/);
    if (heading) {
      if (heading[1] === "##") inMap = heading[2].trim() === "Code map";
      const named = heading[2].match(/^`([^`]+\/)`/);
      section = { base: named ? named[1] : "", inMap };
      open.length = 0;
      continue;
    }
    if (!line.trim()) {
      blank = true;
      continue;
    }
    const start = line.match(/^(\s*)(?:[-*]|\d+\.) /);
    if (start || (blank && !/^\s/.test(line)) || !open.length) {
      const indent = start ? start[1].length : -1;
      while (open.length && (indent < 0 || open.at(-1).indent >= indent)) open.pop();
      const item = { indent, parent: open.at(-1) ?? null, words: [], section };
      open.push(item);
      out.push(item);
    }
    blank = false;
    for (const m of line.matchAll(/`([^`]+)`/g)) open.at(-1).words.push({ word: m[1], line: i + 1 });
  }
  return out;
}

/** A lookup of tracked paths: files, and the folders they are in (with a trailing "/"). */
function tree(files) {
  const known = new Set(files);
  for (const f of files) for (let i = f.indexOf("/"); i >= 0; i = f.indexOf("/", i + 1)) known.add(f.slice(0, i + 1));
  return known;
}

const globRe = (glob) => new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}$`);

/**
 * The problems of ARCHITECTURE.md's `text` against the repository's tracked `files`, as
 * messages "ARCHITECTURE.md:LINE: …" (a path that names nothing) and "ARCHITECTURE.md: …"
 * (a file of the scope the code map does not name).
 */
export function mapProblems(text, files) {
  const known = tree(files);
  const list = items(text);
  const sectionBases = [...new Set(list.map((it) => it.section?.base).filter(Boolean))];
  /** What `word` names from `bases`: the paths it matches at the first base where it matches any. */
  const resolve = (word, bases) => {
    for (const base of bases) {
      const path = base + word;
      if (path.includes("*")) {
        const re = globRe(path);
        const hits = files.filter((f) => re.test(f));
        if (hits.length) return hits;
      } else if (known.has(path)) return [path];
    }
    return [];
  };
  const basesOf = new Map();
  const bases = (item) => {
    if (!item) return [];
    if (basesOf.has(item)) return basesOf.get(item);
    const outer = item.parent
      ? bases(item.parent)
      : [...new Set([item.section?.base, ...sectionBases, ""].filter((b) => b != null))];
    const own = new Set();
    for (const { word } of item.words) {
      if (!isPath(word) || word.includes("*")) continue;
      for (const p of resolve(word, outer)) own.add(p.endsWith("/") ? p : p.slice(0, p.lastIndexOf("/") + 1));
    }
    const ordered = [...own].filter(Boolean).sort((a, b) => b.split("/").length - a.split("/").length);
    const all = [...new Set([...ordered, ...outer])];
    basesOf.set(item, all);
    return all;
  };
  const problems = [];
  const named = new Set();
  for (const item of list) {
    for (const { word, line } of item.words) {
      if (!isPath(word)) continue;
      if (UNTRACKED.some((u) => word.startsWith(u))) continue;
      const hits = resolve(word, bases(item));
      if (!hits.length) problems.push(`ARCHITECTURE.md:${line}: \`${word}\` names no tracked file or folder`);
      if (item.section?.inMap) for (const h of hits) named.add(h);
    }
  }
  for (const unit of inScope(files))
    if (!named.has(unit)) problems.push(`ARCHITECTURE.md: the code map does not name ${unit}`);
  return problems;
}
