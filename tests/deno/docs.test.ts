// Every ```ts deno block of README.md and docs/ (scripts/docs/blocks.mjs, which Deno runs
// through its node: modules), run as a user's project would: `deno run --allow-read` in a
// folder whose node_modules/tarry-queue is this package (Deno's "bring your own
// node_modules"), so that `npm:tarry-queue` resolves through the package's exports. A ts
// block must pass `deno check`; every block must exit 0 and, when an output block follows it,
// print exactly that.
//
//   deno test --allow-read --allow-write --allow-run tests/deno/
import { assert, assertEquals } from "./assert.ts";
import { blocksFor } from "../../scripts/docs/blocks.mjs";

const root = new URL("../../", import.meta.url);
const blocks: { where: string; lang: string; code: string; output?: string }[] = blocksFor("deno");

Deno.test("the docs have deno blocks", () => {
  assert(blocks.length >= 2, `${blocks.length} deno blocks`);
});

/** Runs `code` as `file` of a fresh project: `deno check` first for TypeScript, then `deno run`. */
async function runInProject(file: string, code: string) {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/node_modules`);
    await Deno.symlink(new URL(".", root).pathname, `${dir}/node_modules/tarry-queue`);
    await Deno.writeTextFile(
      `${dir}/package.json`,
      JSON.stringify({ type: "module", dependencies: { "tarry-queue": "*" } }),
    );
    await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify({ nodeModulesDir: "manual" }));
    await Deno.writeTextFile(`${dir}/${file}`, code);
    const text = (b: Uint8Array) => new TextDecoder().decode(b);
    const deno = async (...args: string[]) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args,
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
      }).output();
      return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
    };
    if (file.endsWith(".ts")) {
      const check = await deno("check", file);
      if (check.code !== 0) return { ...check, stderr: `deno check: ${check.stderr}` };
    }
    return await deno("run", "--allow-read", file);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

for (const b of blocks) {
  Deno.test(`${b.where}: runs as written${b.output === undefined ? "" : " and prints its output block"}`, async () => {
    const r = await runInProject(b.lang === "ts" ? "main.ts" : "main.js", b.code);
    assertEquals(r.code, 0, `${b.where}:\n${r.stderr}`);
    if (b.output !== undefined) assertEquals(r.stdout, b.output, `${b.where}: stdout`);
  });
}
