// Values cross processes as JSON text, so a value must be JSON data: what JSON.stringify would
// silently change (undefined, NaN, a Date, a Map, a class instance) or refuse (a bigint, a
// cycle) is refused here, before anything is sent, with the path of the offending part.

/**
 * The JSON text of `value`, or a TypeError naming `path` (e.g. "items[3].value.when").
 * @param {unknown} value
 * @param {string} path
 */
export function jsonOf(value, path) {
  check(value, path, []);
  return JSON.stringify(value);
}

function check(x, path, parents) {
  switch (typeof x) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(x)) fail(path, `is ${x}, which JSON cannot hold`);
      return;
    case "undefined":
      fail(path, "is undefined, which JSON cannot hold");
      return;
    case "object":
      break;
    default:
      fail(path, `is a ${typeof x}, which JSON cannot hold`);
  }
  if (x === null) return;
  if (parents.includes(x)) fail(path, "refers back to itself (a cycle), which JSON cannot hold");
  parents.push(x);
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      if (!(i in x)) fail(`${path}[${i}]`, "is a hole in a sparse array, which JSON cannot hold");
      check(x[i], `${path}[${i}]`, parents);
    }
  } else {
    const proto = Object.getPrototypeOf(x);
    if (proto !== Object.prototype && proto !== null) {
      const kind = proto?.constructor?.name ?? "object";
      fail(path, `is a ${kind}, not plain JSON data (convert it, e.g. to a string or a plain object)`);
    }
    for (const key of Object.keys(x)) check(x[key], `${path}${propertyPath(key)}`, parents);
  }
  parents.pop();
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const propertyPath = (key) => (IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`);

function fail(path, what) {
  throw new TypeError(`${path} ${what}`);
}
