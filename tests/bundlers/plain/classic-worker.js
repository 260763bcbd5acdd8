// The classic worker, unbundled: no import statements in a classic script, but import()
// loads ES modules there too.
Promise.all([import("./node_modules/tarry-queue/js/web.js"), import("./exercise.js")])
  .then(([tarry, { exercise }]) => exercise(tarry))
  .then(
    (r) => postMessage(r),
    (e) => postMessage({ error: String(e?.stack ?? e) }),
  );
