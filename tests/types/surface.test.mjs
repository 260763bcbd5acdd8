// The hand-written types against the JS, mechanically: for each entry that package.json's
// `exports` names (one per runtime condition), the values it exports must be the values its
// types declare (as TypeScript resolves "tarry-queue" under that condition), and each
// exported class must have the same members, instance and static, in both. So the types
// cannot drift from the JS: adding, renaming or removing a method, a getter, a field or an
// export on one side only fails here.
//
// The JS side is read from the modules themselves (the entry's exports by TypeScript's
// reading of the JS, each class by importing the module that defines it: prototype members,
// statics, and the public fields its class body declares). The types side is TypeScript's
// view of the declarations.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { root } from "../packed.mjs";

const ts = createRequire(import.meta.url)("typescript");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

// Load the wasm once, so that classes can be imported (not constructed) in any entry's module.
await import(pathToFileURL(join(root, "js/node.js")).href);

const wellKnown = new Map(
  Object.getOwnPropertyNames(Symbol)
    .filter((k) => typeof Symbol[k] === "symbol")
    .map((k) => [Symbol[k], `Symbol.${k}`]),
);

function memberName(key) {
  if (typeof key === "string") return key;
  const name = wellKnown.get(key);
  assert.ok(name, `a member named by a symbol that is not well known: ${String(key)}`);
  return name;
}

/** TypeScript's name for a member (`__@dispose@12` for [Symbol.dispose]) as memberName gives it. */
function tsMemberName(symbol) {
  const m = /^__@(\w+)@\d+$/.exec(symbol.escapedName);
  return m ? `Symbol.${m[1]}` : symbol.name;
}

const sorted = (names) => [...new Set(names)].sort();

/** The public fields a JS class declares (`onerror = null`, or `this.name = ...` in its constructor). */
function declaredFields(file, className, isStatic) {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const fields = [];
  const visit = (node) => {
    if (ts.isClassDeclaration(node) && node.name?.text === className) {
      for (const m of node.members) {
        const isStaticMember = (ts.getCombinedModifierFlags(m) & ts.ModifierFlags.Static) !== 0;
        if (ts.isPropertyDeclaration(m) && ts.isIdentifier(m.name) && isStaticMember === isStatic)
          fields.push(m.name.text);
        // `this.name = ...` in the constructor makes an instance property too.
        if (ts.isConstructorDeclaration(m) && !isStatic) {
          const assigned = (n) => {
            if (
              ts.isBinaryExpression(n) &&
              n.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
              ts.isPropertyAccessExpression(n.left) &&
              n.left.expression.kind === ts.SyntaxKind.ThisKeyword &&
              ts.isIdentifier(n.left.name)
            )
              fields.push(n.left.name.text);
            ts.forEachChild(n, assigned);
          };
          assigned(m);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return fields;
}

const entries = Object.entries(pkg.exports["."]).filter(([condition]) => condition !== "types");

// One program reads every entry's JS.
const jsProgram = ts.createProgram(
  entries.map(([, entry]) => join(root, entry)),
  {
    allowJs: true,
    checkJs: false,
    noEmit: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2022.d.ts"],
    types: [],
  },
);

/** The JS side of an entry: { name: { kind, instance?, statics? } } for each exported value. */
async function jsSurface(entryFile) {
  const program = jsProgram;
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(entryFile));
  const out = {};
  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const file = target.declarations[0].getSourceFile().fileName;
    const mod = await import(pathToFileURL(file).href);
    const value = mod[target.name];
    assert.ok(value !== undefined, `${file} does not export ${target.name} at run time`);
    if (typeof value === "function" && /^class\b/.test(Function.prototype.toString.call(value))) {
      const proto = value.prototype;
      out[exported.name] = {
        kind: "class",
        instance: sorted([
          ...Reflect.ownKeys(proto)
            .filter((k) => k !== "constructor")
            .map(memberName),
          ...declaredFields(file, target.name, false),
        ]),
        statics: sorted(
          Reflect.ownKeys(value)
            .filter((k) => !["length", "name", "prototype"].includes(k))
            .map(memberName),
        ),
      };
    } else {
      out[exported.name] = { kind: typeof value };
    }
  }
  return out;
}

const typesSurfaces = new Map();

/** The types side: what TypeScript sees for "tarry-queue" under `condition`, in the same shape. */
function typesSurface(condition) {
  if (!typesSurfaces.has(condition)) typesSurfaces.set(condition, readTypes([condition]));
  return typesSurfaces.get(condition);
}

function readTypes(conditions) {
  // At the root, so that the nearest package.json is this package's (self-reference by name).
  const from = join(root, "__surface__.ts");
  const options = {
    noEmit: true,
    strict: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2022.d.ts"], // the types need no DOM and no @types/node
    types: [],
    customConditions: conditions,
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile;
  host.readFile = (f) => (f === from ? 'export * from "tarry-queue";\n' : read(f));
  host.fileExists = (
    (exists) => (f) =>
      f === from || exists(f)
  )(host.fileExists);
  // "tarry-queue" resolves to this package by its own name (package.json's `exports`).
  const program = ts.createProgram([from], options, host);
  const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  assert.deepEqual(errors, [], `the types for conditions ${conditions} do not compile`);
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(from));
  const out = {};
  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    if (!(symbol.flags & ts.SymbolFlags.Value)) continue; // interfaces and type aliases
    const valueType = checker.getTypeOfSymbol(symbol);
    if (valueType.getConstructSignatures().length > 0) {
      // Members declared by the class (or interface) itself, as on the JS side: not Error's.
      const own = (member) => member.declarations?.some((d) => symbol.declarations.includes(d.parent));
      const isClass = (symbol.flags & ts.SymbolFlags.Class) !== 0;
      const instance = checker.getDeclaredTypeOfSymbol(symbol);
      out[exported.name] = {
        kind: "class",
        instance: sorted(checker.getPropertiesOfType(instance).filter(own).map(tsMemberName)),
        statics: sorted(
          checker
            .getPropertiesOfType(valueType)
            .filter((m) => (isClass ? own(m) : m.name !== "prototype"))
            .map(tsMemberName),
        ),
      };
    } else {
      out[exported.name] = { kind: valueType.getCallSignatures().length > 0 ? "function" : "value" };
    }
  }
  return out;
}

test("package.json names an entry for every runtime, and `types` for TypeScript", () => {
  assert.deepEqual(
    entries.map(([c]) => c),
    ["workerd", "deno", "node", "browser", "default"],
  );
  assert.equal(pkg.exports["."].types, "./js/tarry.d.ts");
  assert.equal(pkg.types, "./js/tarry.d.ts", "for tools that read only `types`");
  assert.equal(pkg.main, "./js/node.js", "for tools that ignore `exports`");
});

for (const [condition, entry] of entries) {
  test(`the "${condition}" entry (${entry}) exports what its types declare, member for member`, async () => {
    const js = await jsSurface(join(root, entry));
    const types = typesSurface(condition);
    assert.deepEqual(
      Object.keys(types).sort(),
      Object.keys(js).sort(),
      `exports of ${entry} (actual) against its types (expected)`,
    );
    for (const [name, t] of Object.entries(types)) {
      if (t.kind === "class") {
        assert.equal(js[name].kind, "class", `${name} is a class in the types`);
        assert.deepEqual(
          js[name].instance,
          t.instance,
          `${name}'s instance members: the JS (actual), the types (expected)`,
        );
        assert.deepEqual(
          js[name].statics,
          t.statics,
          `${name}'s static members: the JS (actual), the types (expected)`,
        );
      } else {
        assert.equal(js[name].kind, t.kind, `${name}: the JS (actual), the types (expected)`);
      }
    }
  });
}

test("DurableDelayQueue's types are the workerd entry's alone", () => {
  assert.ok("DurableDelayQueue" in typesSurface("workerd"));
  for (const condition of ["deno", "node", "browser"]) {
    assert.ok(!("DurableDelayQueue" in typesSurface(condition)), condition);
  }
});
