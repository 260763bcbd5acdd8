// Orders that cancel themselves: the demo's entry. It loads tarry, puts every pending order
// in one DelayQueue (orders.js), and draws the page 20 times a second: the log (log.js),
// the pending orders (timeline.js), the queue's figures (figures.js) and the lateness plot
// (plot.js). The form and buttons are in controls.js. One host timer serves every order.
import { DelayQueue, init } from "../js/web.js";
import { wireControls } from "./controls.js";
import { Figures } from "./figures.js";
import { Log } from "./log.js";
import { Orders } from "./orders.js";
import { LatenessPlot } from "./plot.js";
import { Timeline } from "./timeline.js";

await init(); // optional: compiles the inline wasm off the main thread, before the first queue
const $ = (selector) => document.querySelector(selector);
const log = new Log($("#log"));
const add = (kind, order, text, late) => log.add(kind, order, text, late);
const orders = new Orders(new DelayQueue(), add);
const timeline = new Timeline(orders, $("#timeline"), $("#pending-note"));
const figures = new Figures(orders.counts);
const plot = new LatenessPlot($("#lateness"));

// For the console, and for the browser tests.
globalThis.demo = { queue: orders.queue, pending: orders.pending, counts: orders.counts };

wireControls(orders, add);

// 20 times a second is smooth enough for countdowns, and leaves the main thread free for
// the queue's timer (each update costs layout and paint).
let drawnAt = -Infinity;
let figuredAt = -Infinity;
let plottedAt = -Infinity;

function frame(now) {
  requestAnimationFrame(frame);
  if (now - drawnAt < 45) return;
  drawnAt = now;
  const view = timeline.view();
  log.flush();
  timeline.draw(now, view);
  if (now - figuredAt >= 200) {
    figuredAt = now;
    const stats = orders.queue.stats;
    figures.show(stats);
    if (now - plottedAt >= 500) {
      plottedAt = now;
      plot.draw(now, stats.latenessP50, stats.latenessP99);
    }
  }
}

requestAnimationFrame(frame);
orders.cancelUnpaid((late) => plot.add(late));
