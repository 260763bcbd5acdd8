// Markdown as the docs tools read it (scripts/docs/check.mjs, the runners of the docs' code
// blocks): fenced code blocks with their info strings, headings with the anchors GitHub
// gives them, links, and the prose with code, link targets, URLs and HTML set apart, so
// that a lint of the prose never reads code.
//
// Not a full CommonMark parser: fences (``` or ~~~, any indent), ATX headings, inline links,
// images, reference definitions and HTML anchors are what these pages use. Linear in the
// text's length.

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading) {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // links and images: their text
    .replace(/<[^>]+>/g, "") // inline HTML
    .replace(/\\([!-/:-@[-`{-~])/g, "$1") // backslash escapes
    .replace(/[*`]/g, ""); // emphasis and code marks
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The words of a fence's info string: language, runner, then `key=value` attributes or flags. */
function infoWords(info) {
  return info.trim().split(/\s+/).filter(Boolean);
}

/** Replaces inline code spans of `line` by spaces of the same length; calls `onCode` with each. */
function maskCode(line, onCode = () => {}) {
  return line.replace(/(`+)([\s\S]*?[^`])\1(?!`)|(`+)([^`])\3(?!`)/g, (m, _a, code, _b, one) => {
    onCode(code ?? one);
    return " ".repeat(m.length);
  });
}

/**
 * Parses `text`. Returns:
 * - `blocks`: fenced code blocks `{ line, info, lang, words, code, comment }` (`line` 1-based,
 *   of the opening fence; `comment`: the text of an HTML comment on the line just before it);
 * - `headings`: `{ line, level, text, anchor }`, anchors deduplicated as GitHub does (-1, -2…);
 * - `anchors`: every anchor of the page (headings', and `id`/`name` attributes of HTML);
 * - `links`: `{ line, target }` of inline links, images, reference definitions and `href`s;
 * - `prose`: `{ line, text }`, each line outside code blocks with inline code, link targets,
 *   URLs, HTML comments and tags blanked out;
 * - `code`: `{ line, text }`, the text of code blocks and inline code spans.
 */
export function parse(text) {
  const lines = text.split("\n");
  const blocks = [];
  const headings = [];
  const anchors = new Set();
  const links = [];
  const prose = [];
  const code = [];
  const seen = new Map();
  let fence = null;
  let inComment = false;
  let lastComment = null; // { line, text } of an HTML comment that ended on the previous non-blank line

  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const raw = lines[i];
    if (fence) {
      const close = raw.match(/^\s*(`{3,}|~{3,})\s*$/);
      if (close && close[1][0] === fence.char && close[1].length >= fence.length) {
        fence.block.code = fence.body.join("\n") + (fence.body.length ? "\n" : "");
        blocks.push(fence.block);
        fence = null;
      } else {
        const body = raw.startsWith(fence.indent) ? raw.slice(fence.indent.length) : raw.trimStart();
        fence.body.push(body);
        code.push({ line: n, text: body });
      }
      continue;
    }
    const open = !inComment && raw.match(/^(\s*)(`{3,}|~{3,})(.*)$/);
    if (open && !(open[2][0] === "`" && open[3].includes("`"))) {
      const words = infoWords(open[3]);
      const comment = lastComment && lastComment.line === n - 1 ? lastComment.text : null;
      fence = {
        char: open[2][0],
        length: open[2].length,
        indent: open[1],
        body: [],
        block: { line: n, info: open[3].trim(), lang: words[0] ?? "", words, code: "", comment },
      };
      lastComment = null;
      continue;
    }

    // Prose: HTML comments (which may span lines) first.
    let line = raw;
    let rest = "";
    for (;;) {
      if (inComment) {
        const end = line.indexOf("-->");
        if (end < 0) {
          rest += " ".repeat(line.length);
          line = "";
          break;
        }
        rest += " ".repeat(end + 3);
        line = line.slice(end + 3);
        inComment = false;
      }
      const start = line.indexOf("<!--");
      if (start < 0) break;
      const end = line.indexOf("-->", start + 4);
      const body = end < 0 ? line.slice(start + 4) : line.slice(start + 4, end);
      if (end >= 0 && line.slice(0, start).trim() === "" && line.slice(end + 3).trim() === "") {
        lastComment = { line: n, text: body.trim() };
      }
      rest += line.slice(0, start) + " ".repeat(end < 0 ? line.length - start : end + 3 - start);
      line = end < 0 ? "" : line.slice(end + 3);
      if (end < 0) inComment = true;
    }
    line = rest + line;
    if (raw.trim() !== "" && !(lastComment && lastComment.line === n)) lastComment = null;

    const masked = maskCode(line, (c) => code.push({ line: n, text: c }));

    const heading = masked.match(/^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/);
    if (heading) {
      // The anchor comes from the heading's text as written, code spans included.
      const source = line.match(/^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/)[1];
      const base = slug(source);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      const anchor = count ? `${base}-${count}` : base;
      headings.push({ line: n, level: heading[1].length, text: source, anchor });
      anchors.add(anchor);
    }
    for (const m of masked.matchAll(/<[a-z][^>]*?\s(?:id|name)="([^"]+)"[^>]*>/gi)) anchors.add(m[1]);
    for (const m of masked.matchAll(/<a\s[^>]*href="([^"]+)"/gi)) links.push({ line: n, target: m[1] });

    // Links: inline ones and images, then reference definitions.
    let text = masked.replace(
      /(!?\[)((?:[^\]\\]|\\.)*)\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+"[^"]*")?\s*\)/g,
      (m, open, label, target) => {
        links.push({ line: n, target: target.replace(/^<|>$/g, "") });
        return `${" ".repeat(open.length)}${label} ${" ".repeat(m.length - open.length - label.length - 1)}`;
      },
    );
    const def = text.match(/^\s*\[[^\]]+\]:\s*(\S+)/);
    if (def) {
      links.push({ line: n, target: def[1].replace(/^<|>$/g, "") });
      text = " ".repeat(text.length);
    }
    text = text
      .replace(/<https?:[^>]*>/g, (m) => " ".repeat(m.length))
      .replace(/\bhttps?:\/\/\S+/g, (m) => " ".repeat(m.length))
      .replace(/<\/?[a-z][^>]*>/gi, (m) => " ".repeat(m.length));
    prose.push({ line: n, text });
  }
  if (fence) throw new Error(`line ${fence.block.line}: a code block that is never closed`);
  return { blocks, headings, anchors, links, prose, code };
}
