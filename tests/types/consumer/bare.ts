// tarry-queue in a project with `lib: ["es2022"]` only: no DOM, no @types/node. The package's
// types must compile there (Symbol.dispose, AbortSignal, URL and WebAssembly are not
// declared), and `using` must work.
import { DelayQueue, Scheduler, type Handle, init } from "tarry-queue";

await init();
declare const bytes: ArrayBuffer;
await init(bytes);
await init("/tarry_bg.wasm");

{
  using q = new DelayQueue<string>();
  const h: Handle = q.offer("a", 1);
  q.cancel(h);
  q.offer("b", 2);
  const b: string | undefined = await q.take({ timeout: 100 });
  void b;
}
{
  using s = new Scheduler();
  s.schedule((n: number) => n + 1, 1, 1);
}
// @ts-expect-error a signal needs an AbortSignal type, which this project does not have
new DelayQueue().take({ signal: {} });
