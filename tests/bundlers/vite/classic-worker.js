// The classic worker under Vite: its dev server serves a worker's modules as they are, and
// bundles them only in the build, so a classic worker (which cannot have import statements)
// loads the package with import(), which works in both.
Promise.all([import("tarry-queue"), import("./exercise.js")])
  .then(([tarry, { exercise }]) => exercise(tarry))
  .then(
    (r) => postMessage(r),
    (e) => postMessage({ error: String(e?.stack ?? e) }),
  );
