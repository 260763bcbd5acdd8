// The host timer, as the wasm binding arms it. Imported by src/binding.rs, so it looks up
// the global setTimeout/clearTimeout at call time (window, worker, Node, Deno, workerd).

/** Arms one host timer; with keepAlive false, it does not hold a Node or Deno process open. */
export function armTimer(callback, ms, keepAlive) {
  const id = setTimeout(callback, ms);
  if (!keepAlive) {
    if (typeof id === "object" && id !== null && typeof id.unref === "function") id.unref();
    else if (typeof Deno !== "undefined" && typeof Deno.unrefTimer === "function") Deno.unrefTimer(id);
  }
  return id;
}

export function disarmTimer(id) {
  clearTimeout(id);
}
