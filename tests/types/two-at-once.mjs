// How the type tests run their compilers: at most two at once, as the machine has two cores
// (tests/types/docs.test.mjs and tests/types/types.test.mjs start one per project or page).

const running = [];

/** Runs `fn` once fewer than two calls of it are running; resolves as it does. */
export async function limited(fn) {
  while (running.length >= 2) await Promise.race(running);
  const p = fn().finally(() => running.splice(running.indexOf(p), 1));
  running.push(p);
  return p;
}
