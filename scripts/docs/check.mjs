#!/usr/bin/env node
// The docs' own lint: `npm run docs:check`, and scripts/lint.sh (so the first step of `npm
// test`). Fails, naming file and line, on:
// - a relative link or #anchor that leads nowhere (README.md, docs/, ARCHITECTURE.md,
//   CHANGELOG.md and the generated benchmark pages; external URLs are not fetched);
// - prose written to the project rather than to users, in README.md, docs/ and CHANGELOG.md:
//   first person (I, we, my, our, us…), issue and pull-request numbers ("issue 12", "#12"),
//   and commit hashes (see `lintProse`); the benchmark pages get the first two rules (they
//   name the commit they measured, in code);
// - a code block with no runner, or an unknown one (scripts/docs/blocks.mjs);
// - a README.md longer than 300 lines;
// - an ARCHITECTURE.md whose code map misses a source file, or that names a path that does
//   not exist (scripts/docs/map.mjs).

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { docFiles, root, tagProblems } from "./blocks.mjs";
import { mapProblems } from "./map.mjs";
import { parse } from "./markdown.mjs";

const README_LINES = 300;

/** Pages whose links are checked. */
export function linkedFiles() {
  const extra = [
    "ARCHITECTURE.md",
    "CHANGELOG.md",
    "bench/results.md",
    "bench/redis/results.md",
    "bench/loading/results.md",
  ];
  return [...docFiles(), ...extra.filter((f) => existsSync(join(root, f)))];
}

/** Pages whose prose is linted, and with which rules. */
export function lintedFiles() {
  const all = ["firstPerson", "issueRef", "commitHash"];
  const files = docFiles().map((file) => ({ file, rules: all }));
  if (existsSync(join(root, "CHANGELOG.md"))) files.push({ file: "CHANGELOG.md", rules: all });
  for (const file of ["bench/results.md", "bench/redis/results.md", "bench/loading/results.md"])
    if (existsSync(join(root, file))) files.push({ file, rules: ["firstPerson", "issueRef"] });
  return files;
}

// First person: "I" (capital, and not I/O), its contractions, and we, our, us, my.
const FIRST_PERSON = [
  /(?<![\w'’/-])I(?:['’](?:m|ve|d|ll))?(?![\w'’/-])/g,
  /(?<![\w'’-])(?:[Ww]e(?:['’](?:re|ve|d|ll))?|[Oo]urs?|[Oo]urselves|[Mm]y|[Mm]yself|us|[Ll]et['’]s)(?![\w'’-])/g,
];
// Issue and pull-request numbers: "issue 12", "issues 10 and 12", "PR #3", "#12", "GH-12".
const ISSUE_REF = [/\b(?:issues?|PRs?|pull requests?|tickets?)\s+#?\d+/gi, /(?<![\w&#/])#\d+\b/g, /\bGH-\d+\b/gi];
// A lower-case hex word of 7 to 40 characters, not part of a longer word, a #colour, a
// 0x literal or a hyphenated id.
const HEX_WORD = /(?<![\w#-])[0-9a-f]{7,40}(?![\w-])/g;

/**
 * The problems of one page's prose, as `{ line, column, rule, match, text }`, in page order. `isCommit(hex)` says
 * whether a hex word names a commit of this repository. Rules:
 * - firstPerson, issueRef: in prose (code blocks, inline code, link targets and URLs are
 *   not prose);
 * - commitHash: in prose, any hex word of 7–40 characters with a letter and a digit (how a
 *   hash looks), or one of digits alone that names a commit; in code, a hex word that names
 *   a commit of this repository (so hex data in code is fine).
 */
export function lintProse(text, { rules = ["firstPerson", "issueRef", "commitHash"], isCommit = () => false } = {}) {
  const { prose, code } = parse(text);
  const problems = [];
  const scan = (lines, regexes, rule, keep = () => true) => {
    for (const { line, text } of lines)
      for (const re of regexes)
        for (const m of text.matchAll(re))
          if (keep(m[0])) problems.push({ line, column: m.index + 1, rule, match: m[0], text: text.trim() });
  };
  if (rules.includes("firstPerson")) scan(prose, FIRST_PERSON, "first person");
  if (rules.includes("issueRef")) scan(prose, ISSUE_REF, "issue number");
  if (rules.includes("commitHash")) {
    scan(prose, [HEX_WORD], "commit hash", (w) => (/\d/.test(w) && /[a-f]/.test(w)) || isCommit(w));
    scan(code, [HEX_WORD], "commit hash", isCommit);
  }
  return problems.sort((a, b) => a.line - b.line || a.column - b.column);
}

/** `isCommit` for lintProse: asks git, once per word, whether it names a commit here. */
export function commitsOfThisRepo() {
  const known = new Map();
  return (word) => {
    if (!known.has(word)) {
      let type = "";
      try {
        type = execFileSync("git", ["cat-file", "-t", word], {
          cwd: root,
          encoding: "utf8",
          stdio: ["ignore", "pipe", "ignore"],
        }).trim();
      } catch {}
      known.set(word, type === "commit");
    }
    return known.get(word);
  };
}

/** Broken relative links and anchors of the pages (paths relative to `base`), as messages. */
export function linkProblems(files = linkedFiles(), base = root) {
  const pages = new Map();
  const page = (file) => {
    if (!pages.has(file)) pages.set(file, parse(readFileSync(join(base, file), "utf8")));
    return pages.get(file);
  };
  const problems = [];
  for (const file of files) {
    for (const { line, target } of page(file).links) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue; // https:, mailto:
      const [path, anchor] = target.split("#");
      const to = path ? normalize(join(dirname(file), decodeURI(path))) : file;
      const at = `${file}:${line}: ${target}`;
      if (to.startsWith("..")) {
        problems.push(`${at}: leads out of the repository`);
        continue;
      }
      if (!existsSync(join(base, to))) {
        problems.push(`${at}: no such file ${to}`);
        continue;
      }
      if (anchor === undefined || anchor === "") continue;
      if (!to.endsWith(".md") || statSync(join(base, to)).isDirectory()) {
        problems.push(`${at}: an anchor into a file that is not Markdown`);
        continue;
      }
      if (!page(to).anchors.has(decodeURIComponent(anchor)))
        problems.push(`${at}: no heading or id "${anchor}" in ${to}`);
    }
  }
  return problems;
}

/** The repository's tracked files (those deleted in the work tree left out), as paths from its root. */
export function trackedFiles() {
  const list = (args) => execFileSync("git", ["ls-files", "-z", ...args], { cwd: root, encoding: "utf8" }).split("\0");
  const gone = new Set(list(["--deleted"]));
  return list([]).filter((f) => f && !gone.has(f));
}

/** Every problem the docs have, as messages "file:line: ...". */
export function check() {
  const problems = [
    ...linkProblems(),
    ...tagProblems(),
    ...mapProblems(readFileSync(join(root, "ARCHITECTURE.md"), "utf8"), trackedFiles()),
  ];
  const isCommit = commitsOfThisRepo();
  for (const { file, rules } of lintedFiles()) {
    for (const p of lintProse(readFileSync(join(root, file), "utf8"), { rules, isCommit }))
      problems.push(`${file}:${p.line}: ${p.rule} "${p.match}": ${p.text}`);
  }
  const lines = readFileSync(join(root, "README.md"), "utf8").split("\n").length - 1;
  if (lines > README_LINES) problems.push(`README.md: ${lines} lines, more than ${README_LINES}: move detail to docs/`);
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const problems = check();
  for (const p of problems) console.error(p);
  if (problems.length) {
    console.error(`docs: ${problems.length} problem${problems.length > 1 ? "s" : ""}`);
    process.exit(1);
  }
  console.log(
    `docs: links, anchors, prose and code-block runners of ${linkedFiles().length} pages, and the code map, are fine`,
  );
}
