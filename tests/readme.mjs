// README.md's examples, for the tests that run them as written.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

/** The code block of README.md's `## Runtimes` whose info string is `lang tag`. */
export function readmeExample(lang, tag) {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const section = readme.slice(readme.indexOf("\n## Runtimes"));
  const m = section.match(new RegExp(`\`\`\`${lang} ${tag}\\n([\\s\\S]*?)\`\`\``));
  assert.ok(m, `README.md has no \`\`\`${lang} ${tag} block under ## Runtimes`);
  return m[1];
}
