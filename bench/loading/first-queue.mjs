// One fresh process's first queue (bench/loading/run.mjs runs it under Node and Deno): imports
// the entry given, creates a DelayQueue, offers an item due now and takes it; prints when the
// import was done and when the item was taken, in ms from the process's start.
const entry = globalThis.Deno ? Deno.args[0] : process.argv[2];
const { DelayQueue } = await import(new URL(`file://${entry}`).href);
const imported = performance.now();
const queue = new DelayQueue();
queue.offer("x", 0);
await queue.take();
const taken = performance.now();
queue.close();
console.log(JSON.stringify({ imported, taken }));
