// README.md's examples, for the tests that run them as written.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

/** The code block of README.md whose info string is `lang tag` (each tag is used once). */
export function readmeExample(lang, tag) {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const m = readme.match(new RegExp(`\`\`\`${lang} ${tag}\\n([\\s\\S]*?)\`\`\``));
  assert.ok(m, `README.md has no \`\`\`${lang} ${tag} block`);
  return m[1];
}
