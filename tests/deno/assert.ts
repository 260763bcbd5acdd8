// The few assertions the Deno tests need. (Deno's @std/assert lives on JSR, which this
// project's machines cannot reach, and node:assert would need @types/node to type-check.)

export function assert(cond: unknown, message = "assertion failed"): asserts cond {
  if (!cond) throw new Error(message);
}

function same(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

export function assertEquals(actual: unknown, expected: unknown, message?: string) {
  if (!same(actual, expected)) {
    throw new Error(`${message ? `${message}: ` : ""}expected ${Deno.inspect(expected)}, got ${Deno.inspect(actual)}`);
  }
}

export function assertThrows(fn: () => unknown, Kind: new (...a: never[]) => Error, pattern: RegExp) {
  try {
    fn();
  } catch (e) {
    assert(e instanceof Kind, `expected a ${Kind.name}, got ${Deno.inspect(e)}`);
    assert(pattern.test(e.message), `message ${JSON.stringify(e.message)} does not match ${pattern}`);
    return;
  }
  throw new Error(`expected a ${Kind.name}, nothing was thrown`);
}

export async function assertRejects(promise: Promise<unknown>, pattern: RegExp) {
  try {
    await promise;
  } catch (e) {
    assert(
      pattern.test((e as Error).message),
      `message ${JSON.stringify((e as Error).message)} does not match ${pattern}`,
    );
    return;
  }
  throw new Error("expected a rejection, the promise resolved");
}
