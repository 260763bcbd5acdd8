// README.md's examples by their info string, for the tests that read one README block by
// name (tests/bundlers/runtimes.test.mjs, tests/types/types.test.mjs). The runners of every
// block of README.md and docs/ use scripts/docs/blocks.mjs instead.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { parse } from "../scripts/docs/markdown.mjs";

/**
 * The code of README.md's first block whose info string is `lang tag` (```js node), or, for
 * a tag `RUNNER-output`, the `output` block that follows README.md's first block run by
 * RUNNER in its info string.
 */
export function readmeExample(lang, tag) {
  const { blocks } = parse(readFileSync(new URL("../README.md", import.meta.url), "utf8"));
  const output = tag.match(/^(.+)-output$/);
  const runner = output ? output[1] : tag;
  const i = blocks.findIndex((b) => b.words[1] === runner && (output || b.lang === lang));
  assert.ok(i >= 0, `README.md has no \`\`\`${output ? "" : `${lang} `}${runner} block`);
  if (!output) return blocks[i].code;
  const next = blocks[i + 1];
  assert.ok(next?.words[1] === "output", `README.md's ${runner} block has no output block after it`);
  return next.code;
}
