// The hand-written types against the JS, mechanically, for every key of package.json's
// `exports` that has code ("." under each runtime condition, "./redis", "./cron"): the values an entry
// exports must be the values its types declare (as TypeScript resolves them), each exported
// class must have the same members, instance and static, in both, and each member the same
// signature: a method on both sides or a property on both, the same parameters (the JS takes
// every parameter the types declare, the types declare every parameter the JS requires, a rest
// parameter on both or neither), a Promise on both sides or on neither, and where the JS says
// a parameter's type (JSDoc), every type the declaration lets a caller pass is one the JS
// takes; where it says its result's type, that result is what the declaration promises. So
// the types cannot drift from the JS: adding, renaming or removing a method, a getter, a
// field, a parameter or an export on one side only fails here, and so does a method that
// becomes async.
//
// The JS side of the names is read from the modules themselves (the entry's exports by
// TypeScript's reading of the JS, each class by importing the module that defines it:
// prototype members, statics, and the public fields its class body declares); the JS side of
// the signatures is TypeScript's reading of the JS (with its JSDoc). The types side is
// TypeScript's view of the declarations. The JS itself is type-checked by tsconfig.json
// (scripts/types.sh).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
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

/** Every entry with code: { key, condition, entry, specifier (what a user imports) }. */
const checked = [
  ...entries.map(([condition, entry]) => ({ key: ".", condition, entry, specifier: "tarry-queue" })),
  ...Object.entries(pkg.exports)
    .filter(([key, e]) => key !== "." && typeof e === "object" && e.default?.endsWith(".js"))
    .map(([key, e]) => ({ key, condition: "default", entry: e.default, specifier: `tarry-queue/${key.slice(2)}` })),
];

// One program reads every entry's JS.
const jsProgram = ts.createProgram(
  checked.map(({ entry }) => join(root, entry)),
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
    if (!(target.flags & ts.SymbolFlags.Value)) continue; // a JSDoc @typedef
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

/**
 * A program of `roots` and a file `from` (at the package's root, so that "tarry-queue"
 * resolves to this package by its own name) that holds `source` and exists only here.
 */
function programWith(from, source, options, roots = []) {
  const host = ts.createCompilerHost(options);
  const read = host.readFile;
  host.readFile = (f) => (f === from ? source : read(f));
  host.fileExists = (
    (exists) => (f) =>
      f === from || exists(f)
  )(host.fileExists);
  return ts.createProgram([from, ...roots], options, host);
}

const typesSurfaces = new Map();

/** The engine contract's interfaces (js/tarry.d.ts): DurableEngine, which every durable engine's class implements, and DurableEngineConsumer, which those whose consumers take add. */
const ENGINE = "DurableEngine";
const CONTRACT = [ENGINE, "DurableEngineConsumer"];

/** The types side: what TypeScript sees for `specifier` under `condition`, in the same shape. */
function typesSurface(condition, specifier = "tarry-queue") {
  const key = `${specifier} ${condition}`;
  if (!typesSurfaces.has(key)) typesSurfaces.set(key, readTypes([condition], specifier));
  return typesSurfaces.get(key);
}

/** A user's file `source`, importing the package under `conditions`, in a strict program: it and its errors. */
function userProgram(from, source, conditions) {
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
  const program = programWith(from, source, options);
  const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  return { program, errors };
}

function readTypes(conditions, specifier) {
  // At the root, so that the nearest package.json is this package's (self-reference by name).
  const from = join(root, "__surface__.ts");
  const { program, errors } = userProgram(from, `export * from "${specifier}";\n`, conditions);
  assert.deepEqual(errors, [], `the types for conditions ${conditions} do not compile`);
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(from));
  const out = {};
  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    if (!(symbol.flags & ts.SymbolFlags.Value)) continue; // interfaces and type aliases
    const valueType = checker.getTypeOfSymbol(symbol);
    if (valueType.getConstructSignatures().length > 0) {
      // Members declared by the class (or interface) itself, as on the JS side: not Error's, nor
      // the EventTarget's (QueueEvents: the JS inherits them from js/engine/events.js); and those of the
      // engine contract (DurableEngine), which an engine's class implements itself.
      const own = (member) =>
        member.declarations?.some(
          (d) =>
            symbol.declarations.includes(d.parent) ||
            (ts.isInterfaceDeclaration(d.parent) && CONTRACT.includes(d.parent.name.text)),
        );
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

for (const { key, condition, entry, specifier } of checked) {
  const which = key === "." ? `the "${condition}" entry` : `the "${key}" entry`;
  test(`${which} (${entry}) exports what its types declare, member for member`, async () => {
    const js = await jsSurface(join(root, entry));
    const types = typesSurface(condition, specifier);
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

// ---- signatures ----------------------------------------------------------------------------

/** Each entry's declaration file, as TypeScript picks it: a .d.ts beside the entry, else `types`. */
const declarationOf = ({ key, entry }) => {
  const beside = join(root, entry.replace(/\.js$/, ".d.ts"));
  return existsSync(beside) ? beside : join(root, pkg.exports[key].types);
};

/**
 * One program with every entry's JS (read with its JSDoc) and every declaration file, and a
 * file that names each declared class at its default type arguments (so that `T` is what a
 * user who writes no type arguments gets).
 */
function signatureProgram(surfaces) {
  const from = join(root, "__signatures__.ts");
  const declarations = [...new Set(checked.map(declarationOf))];
  const lines = declarations.map(
    (d, i) => `import type * as d${i} from "./${relative(root, d).replace(/\.d\.ts$/, ".js")}";`,
  );
  checked.forEach((c, i) => {
    const d = declarations.indexOf(declarationOf(c));
    for (const [name, t] of Object.entries(surfaces[i]))
      if (t.kind === "class") lines.push(`export type d${d}_${name} = d${d}.${name};`);
  });
  const options = {
    allowJs: true,
    checkJs: false,
    noEmit: true,
    strict: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2024.d.ts", "lib.esnext.disposable.d.ts"],
    types: ["node"],
    typeRoots: [join(root, "node_modules/@types")],
  };
  const program = programWith(
    from,
    `${lines.join("\n")}\n`,
    options,
    checked.map(({ entry }) => join(root, entry)),
  );
  return { program, from, declarations };
}

/** Results the JS leaves untyped: nothing to compare but the parameters. */
const untyped = ts.TypeFlags.Any | ts.TypeFlags.Unknown;
const isAny = (t) => (t.flags & ts.TypeFlags.Any) !== 0;

/** How one member looks: { kind: "method" | "property", signatures }. */
function shapeOf(symbol, type) {
  const callable = type.getCallSignatures();
  const method = (symbol.flags & ts.SymbolFlags.Method) !== 0;
  const kind = method || (callable.length > 0 && !(symbol.flags & ts.SymbolFlags.Accessor)) ? "method" : "property";
  return { kind, signatures: callable };
}

function parameters(checker, signature) {
  return signature.parameters.map((p) => {
    const decl = p.valueDeclaration;
    return {
      name: p.name,
      type: checker.getTypeOfSymbol(p),
      optional: decl !== undefined && ts.isParameter(decl) && checker.isOptionalParameter(decl),
      rest: decl !== undefined && ts.isParameter(decl) && decl.dotDotDotToken !== undefined,
      // A type the JS states (JSDoc, a default value), not one inferred as any.
      stated:
        decl !== undefined && ts.isParameter(decl) && (ts.getJSDocType(decl) !== undefined || decl.type !== undefined),
    };
  });
}

const isPromise = (checker, t) => {
  if (t.isUnion()) return t.types.some((u) => isPromise(checker, u));
  return t.getSymbol()?.name === "Promise" || t.getSymbol()?.name === "PromiseLike";
};

/**
 * What differs between the JS signatures of `what` and its declared ones: a list of messages.
 * `js`, `types`: arrays of signatures; `isConstructor`: compare their parameters only.
 */
function compareSignatures(checker, what, js, types, isConstructor = false) {
  const problems = [];
  if (js.length !== 1) {
    problems.push(`${what}: the JS has ${js.length} signatures`);
    return problems;
  }
  const [jsSig] = js;
  const jsParams = parameters(checker, jsSig);
  // A declared rest parameter of a computed tuple type (`...options: UnlessThenable<T, [options?: O]>`,
  // which refuses a thenable item type) stands for that tuple's parameters: compare it as those.
  const declared = types.map((sig) => {
    const ps = parameters(checker, sig);
    const last = ps.at(-1);
    if (last?.rest && (last.type.flags & ts.TypeFlags.Conditional) !== 0)
      return [...ps.slice(0, -1), { ...last, rest: false, optional: true, computed: true }];
    return ps;
  });
  const most = Math.max(...declared.map((p) => p.length));
  const required = jsParams.filter((p) => !p.optional && !p.rest).length;
  const names = (ps) => `(${ps.map((p) => (p.rest ? `...${p.name}` : p.name)).join(", ")})`;
  if (jsParams.length < most)
    problems.push(
      `${what}: the JS takes ${names(jsParams)}, the types declare ${names(declared.find((p) => p.length === most))}`,
    );
  if (required > most)
    problems.push(`${what}: the JS requires ${names(jsParams.slice(0, required))}, the types declare ${most}`);
  if (jsParams.some((p) => p.rest) !== declared.some((ps) => ps.some((p) => p.rest)))
    problems.push(`${what}: a rest parameter on one side only`);
  for (const ps of declared) {
    ps.forEach((p, i) => {
      const j = jsParams[i];
      if (!j?.stated || j.rest || p.rest || p.computed || isAny(j.type) || isAny(p.type)) return;
      // A caller may leave an optional parameter out, which the JS must take too.
      const given = p.optional ? checker.getNonNullableType(p.type) : p.type;
      if (!checker.isTypeAssignableTo(given, j.type))
        problems.push(
          `${what}: parameter ${i + 1} (${p.name}) may be ${checker.typeToString(given)}, which the JS's ${j.name}: ${checker.typeToString(j.type)} does not take`,
        );
    });
  }
  // Constructors are compared as calls: their instances are compared member by member.
  const jsReturn = isConstructor ? undefined : jsSig.getReturnType();
  const returns = isConstructor ? [] : types.map((sig) => sig.getReturnType());
  if (jsReturn !== undefined && !(jsReturn.flags & untyped)) {
    // The result's type where the JS states it (JSDoc @returns); inferred ones only as Promise or not.
    const stated = jsSig.declaration !== undefined && ts.getJSDocReturnType(jsSig.declaration) !== undefined;
    if (isPromise(checker, jsReturn) !== returns.some((r) => isPromise(checker, r)))
      problems.push(
        `${what}: the JS returns ${checker.typeToString(jsReturn)}, the types ${returns.map((r) => checker.typeToString(r)).join(" | ")}`,
      );
    else if (stated && !returns.some((r) => checker.isTypeAssignableTo(jsReturn, r)))
      problems.push(
        `${what}: the JS returns ${checker.typeToString(jsReturn)}, which is not the declared ${returns.map((r) => checker.typeToString(r)).join(" | ")}`,
      );
  }
  return problems;
}

test("every member of every entry has the signature its types declare", async () => {
  const surfaces = checked.map(({ condition, specifier }) => typesSurface(condition, specifier));
  const { program, from, declarations } = signatureProgram(surfaces);
  const checker = program.getTypeChecker();
  const exportsOf = (file) => {
    const out = new Map();
    for (const e of checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)))) {
      out.set(e.name, e.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(e) : e);
    }
    return out;
  };
  const instances = exportsOf(from);
  const problems = [];
  let compared = 0;
  checked.forEach((c, i) => {
    const d = declarations.indexOf(declarationOf(c));
    const jsExports = exportsOf(join(root, c.entry));
    const typeExports = exportsOf(declarations[d]);
    for (const [name, t] of Object.entries(surfaces[i])) {
      const where = `${c.entry} ${name}`;
      const jsSymbol = jsExports.get(name);
      const typeSymbol = typeExports.get(name);
      const jsValue = checker.getTypeOfSymbol(jsSymbol);
      const typeValue = checker.getTypeOfSymbol(typeSymbol);
      if (t.kind === "function") {
        problems.push(
          ...compareSignatures(checker, `${where}()`, jsValue.getCallSignatures(), typeValue.getCallSignatures()),
        );
        compared++;
        continue;
      }
      if (t.kind !== "class") continue;
      // The constructor, unless the types keep it private (DurableDelayQueue.open() builds one).
      const privateConstructor = typeSymbol.declarations.some((decl) =>
        decl.members?.some(
          (m) => ts.isConstructorDeclaration(m) && (ts.getCombinedModifierFlags(m) & ts.ModifierFlags.Private) !== 0,
        ),
      );
      if (!privateConstructor) {
        const news = (type) => type.getConstructSignatures();
        problems.push(...compareSignatures(checker, `new ${where}()`, news(jsValue), news(typeValue), true));
      }
      const sides = [
        [
          "",
          checker.getDeclaredTypeOfSymbol(jsSymbol),
          checker.getDeclaredTypeOfSymbol(instances.get(`d${d}_${name}`)),
          t.instance,
        ],
        ["static ", jsValue, typeValue, t.statics],
      ];
      for (const [prefix, jsType, typesType, members] of sides) {
        for (const member of members) {
          const key = member.startsWith("Symbol.") ? `__@${member.slice(7)}` : member;
          const find = (type) =>
            checker.getPropertiesOfType(type).find((p) => p.name === member || p.escapedName.startsWith(`${key}@`));
          const jm = find(jsType);
          const tm = find(typesType);
          // A method the JS names by a computed key (`[dispose]`, for runtimes without Symbol.dispose)
          // is not one TypeScript can name; the names test above found it at run time.
          if (!jm && tm && member.startsWith("Symbol.")) continue;
          if (!jm || !tm) {
            problems.push(`${prefix}${where}#${member}: not found (JS ${!!jm}, types ${!!tm})`);
            continue;
          }
          const js = shapeOf(jm, checker.getTypeOfSymbol(jm));
          const types = shapeOf(tm, checker.getTypeOfSymbol(tm));
          compared++;
          if (js.kind !== types.kind) {
            problems.push(`${prefix}${where}#${member}: a ${js.kind} in the JS, a ${types.kind} in the types`);
          } else if (js.kind === "method") {
            problems.push(
              ...compareSignatures(checker, `${prefix}${where}#${member}()`, js.signatures, types.signatures),
            );
          }
        }
      }
    }
  });
  assert.ok(compared > 80, `only ${compared} members compared`);
  assert.deepEqual(problems, [], `signatures that differ:\n${problems.join("\n")}`);
});

// ---- the engine contract -------------------------------------------------------------------

/**
 * The durable engines: each class that keeps the contract, where its JS defines it, and the
 * entry whose types declare it (for a class no entry exports, the class whose prototype it
 * takes: the sharded Redis queue, which `new RedisDelayQueue({ shards })` returns).
 */
const engines = [
  { name: "RedisDelayQueue", file: "js/redis.js", specifier: "tarry-queue/redis", condition: "default" },
  { name: "ShardedDelayQueue", file: "js/redis/shards.js", declaredAs: "RedisDelayQueue" },
  { name: "DurableDelayQueue", file: "js/durable/queue.js", specifier: "tarry-queue", condition: "workerd" },
  { name: "PostgresDelayQueue", file: "js/postgres.js", specifier: "tarry-queue/postgres", condition: "default" },
].filter((e) => existsSync(join(root, e.file)));

/** The contract's members, as TypeScript reads js/tarry.d.ts: [name, method or property]. */
function contractMembers() {
  const file = join(root, "js/tarry.d.ts");
  const program = ts.createProgram([file], {
    noEmit: true,
    strict: true,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2022.d.ts", "lib.esnext.disposable.d.ts"],
    types: [],
  });
  const checker = program.getTypeChecker();
  const symbol = checker
    .getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)))
    .find((e) => e.name === ENGINE);
  assert.ok(symbol, `js/tarry.d.ts exports no ${ENGINE}`);
  const own = checker
    .getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))
    .filter((m) => m.declarations.some((d) => d.parent.name?.text === ENGINE));
  return own.map((m) => [tsMemberName(m), (m.flags & ts.SymbolFlags.Method) !== 0 ? "method" : "property"]);
}

test("every durable engine's JS class has each member of the engine contract, itself", async () => {
  const members = contractMembers();
  assert.ok(members.length >= 20, `the contract has ${members.length} members`);
  assert.ok(engines.length >= 3, `only ${engines.map((e) => e.name)} found`);
  for (const { name, file } of engines) {
    const cls = (await import(pathToFileURL(join(root, file)).href))[name];
    assert.equal(typeof cls, "function", `${file} exports ${name}`);
    const proto = cls.prototype;
    for (const [member, kind] of members) {
      const key = member.startsWith("Symbol.") ? Symbol[member.slice(7)] : member;
      // Its own: a sharded queue that took RedisDelayQueue's method by its prototype would run
      // it on the wrong private fields.
      const d = Object.getOwnPropertyDescriptor(proto, key);
      assert.ok(d, `${name} (${file}) has no ${member} of its own: the contract (js/tarry.d.ts ${ENGINE}) has it`);
      if (kind === "method") assert.equal(typeof d.value, "function", `${name}#${member} is a method`);
      else assert.ok(d.get !== undefined, `${name}#${member} is a getter`);
    }
  }
});

test("every durable engine's declared class is a DurableEngine", () => {
  for (const { name, specifier, condition } of engines.filter((e) => e.specifier !== undefined)) {
    const from = join(root, "__contract__.ts");
    const source = [
      `import type { DurableEngine } from "tarry-queue";`,
      `import type { ${name} } from "${specifier}";`,
      `const engine = (q: ${name}): DurableEngine<any, any, any, any> => q;`,
      `// @ts-expect-error: the contract's members are the class's`,
      `const wrong = (q: ${name}): { offer(value: unknown): Promise<number> } => q;`,
      "export { engine, wrong };",
    ].join("\n");
    const { errors } = userProgram(from, source, [condition]);
    assert.deepEqual(errors, [], `${name} (${specifier}) as a DurableEngine`);
  }
});
