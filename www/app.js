// Orders that cancel themselves: every pending order sits in one DelayQueue, due when its
// payment window closes. Paying cancels it by handle, "+30 s" reschedules it, and a
// `for await` loop cancels whatever comes out of the queue: the orders nobody paid.
// One host timer serves them all, however many there are.

import { DelayQueue, init } from "../js/web.js";
import { LatenessPlot } from "./plot.js";

const SHOWN = 200; // timeline rows drawn; with 10,000 pending the rest are only counted
const LOGGED = 150; // log lines kept in the page
const EXTEND_MS = 30_000;

await init();
const queue = new DelayQueue();
/** Pending orders by id; the queue holds the same objects, by deadline. */
const pending = new Map();
const counts = { timeout: 0, paid: 0, rescheduled: 0 };
let nextId = 1001;

const $ = (selector) => document.querySelector(selector);
const form = $("#order-form");
const input = { customer: $("#customer"), amount: $("#amount"), window: $("#window") };
const timeline = $("#timeline");
const logList = $("#log");
const plot = new LatenessPlot($("#lateness"));

// For the console, and for the browser tests.
globalThis.demo = { queue, pending, counts };

// ---- orders -------------------------------------------------------------------------

const names = [
  "Ada",
  "Grace",
  "Linus",
  "Barbara",
  "Ken",
  "Margaret",
  "Dennis",
  "Frances",
  "Edsger",
  "Radia",
  "Donald",
  "Hedy",
  "Alan",
  "Katherine",
  "Tony",
  "Sophie",
  "Niklaus",
  "Annie",
  "John",
  "Shafi",
];
const surnames = [
  "Lovelace",
  "Hopper",
  "Torvalds",
  "Liskov",
  "Thompson",
  "Hamilton",
  "Ritchie",
  "Allen",
  "Dijkstra",
  "Perlman",
  "Knuth",
  "Lamarr",
  "Turing",
  "Johnson",
  "Hoare",
  "Wilson",
  "Wirth",
  "Easley",
  "Backus",
  "Goldwasser",
];
const items = [
  ["Espresso beans", 14.5],
  ["Desk lamp", 39],
  ["Mechanical keyboard", 129],
  ["Notebook", 6.9],
  ["Headphones", 89],
  ["Plant pot", 12],
  ["Teapot", 27.5],
  ["Bike light", 19.9],
  ["Backpack", 64],
  ["Board game", 34.99],
];
const pick = (list) => list[Math.floor(Math.random() * list.length)];
const randomCustomer = () => `${pick(names)} ${pick(surnames)}`;

/** Places an order whose payment window closes `windowMs` from now. */
function place(customer, item, amount, windowMs) {
  const order = { id: nextId++, customer, item, amount, windowMs, deadline: 0, handle: 0 };
  // The clock is read before the offer, so the queue's own deadline is never earlier
  // than this one: lateness measured against it is never understated.
  order.deadline = performance.now() + windowMs;
  order.handle = queue.add(order, windowMs);
  pending.set(order.id, order);
  listChanged = true;
  return order;
}

function pay(order) {
  // undefined: it timed out (or was paid) in the meantime.
  if (queue.cancel(order.handle) === undefined) return;
  pending.delete(order.id);
  counts.paid++;
  listChanged = true;
  log("paid", order, `paid ${euros(order.amount)} with ${seconds(order.deadline - performance.now())} to spare`);
}

function extend(order) {
  const now = performance.now();
  if (!queue.reschedule(order.handle, order.deadline - now + EXTEND_MS)) return;
  order.deadline += EXTEND_MS;
  order.windowMs += EXTEND_MS;
  counts.rescheduled++;
  listChanged = true;
  log("rescheduled", order, `window extended by 30 s, now closes in ${seconds(order.deadline - now)}`);
}

/** The consumer: every order that comes out of the queue was not paid in time. */
async function cancelUnpaid() {
  for await (const order of queue) {
    const late = performance.now() - order.deadline;
    pending.delete(order.id);
    counts.timeout++;
    listChanged = true;
    plot.add(late);
    log("timeout", order, `not paid within ${seconds(order.windowMs)}: cancelled`, late);
  }
}

// ---- the form and the buttons ---------------------------------------------------------

function refillForm() {
  input.customer.value = randomCustomer();
  input.amount.value = pick(items)[1].toFixed(2);
}

function choosePreset(value) {
  input.window.value = value;
  highlightPreset();
}

function highlightPreset() {
  for (const b of document.querySelectorAll("[data-window]"))
    b.classList.toggle("on", Number(b.dataset.window) === Number(input.window.value));
}

form.addEventListener("submit", (e) => {
  e.preventDefault();
  const windowMs = Number(input.window.value) * 1000;
  const amount = Number(input.amount.value);
  if (!(windowMs > 0) || !(amount > 0)) return;
  const order = place(input.customer.value.trim() || randomCustomer(), pick(items)[0], amount, windowMs);
  order.fresh = true;
  log("placed", order, `placed, ${euros(amount)}, ${seconds(windowMs)} to pay`);
  refillForm();
});

input.window.addEventListener("input", highlightPreset);
for (const b of document.querySelectorAll("[data-window]"))
  b.addEventListener("click", () => choosePreset(b.dataset.window));

for (const b of document.querySelectorAll("[data-bulk]")) {
  b.addEventListener("click", () => {
    const n = Number(b.dataset.bulk);
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const [item, price] = pick(items);
      place(randomCustomer(), item, price, 2000 + Math.random() * 118_000);
    }
    const ms = performance.now() - t0;
    log("placed", null, `placed ${n.toLocaleString("en")} random orders in ${ms.toFixed(1)} ms`);
  });
}

$("#clear").addEventListener("click", () => {
  const n = queue.size;
  queue.clear();
  pending.clear();
  listChanged = true;
  log("placed", null, `cleared ${n.toLocaleString("en")} pending orders`);
});

timeline.addEventListener("click", (e) => {
  const button = e.target.closest("button[data-action]");
  const order = button && pending.get(Number(button.closest("li").dataset.id));
  if (!order) return;
  if (button.dataset.action === "pay") pay(order);
  else extend(order);
});

// ---- the log ----------------------------------------------------------------------------

/** Log lines not yet in the page; they are added once per frame, newest first. */
let unlogged = [];

function log(kind, order, text, late) {
  unlogged.push({ kind, order, text, late, at: new Date() });
}

function flushLog() {
  if (unlogged.length === 0) return;
  const lines = unlogged.length > LOGGED ? unlogged.slice(-LOGGED) : unlogged;
  unlogged = [];
  const fragment = document.createDocumentFragment();
  for (let i = lines.length - 1; i >= 0; i--) fragment.append(logLine(lines[i]));
  logList.prepend(fragment);
  while (logList.childElementCount > LOGGED) logList.lastElementChild.remove();
}

function logLine({ kind, order, text, late, at }) {
  const li = document.createElement("li");
  li.className = kind;
  const time = document.createElement("time");
  time.dateTime = at.toISOString();
  time.textContent = at.toLocaleTimeString("en-GB");
  const what = document.createElement("span");
  if (order) {
    li.dataset.order = order.id;
    const b = document.createElement("b");
    b.textContent = `#${order.id}`;
    what.append(b, ` ${order.customer}: ${text}`);
  } else {
    what.textContent = text[0].toUpperCase() + text.slice(1);
  }
  if (late !== undefined) {
    const span = document.createElement("span");
    span.className = "late";
    span.dataset.late = late.toFixed(3);
    span.textContent = ` · ${ms(late)} ms late`;
    what.append(span);
  }
  li.append(time, what);
  return li;
}

// ---- the timeline -----------------------------------------------------------------------

/** Whether orders were added or removed since the timeline was last listed. */
let listChanged = true;
let listedAt = -Infinity;
/** The orders drawn, in deadline order, and their rows. */
let shown = [];
const rows = new Map();

function listTimeline(now) {
  const all = queue.toArray(); // by deadline; O(n log n) in wasm: ~1 ms at 10,000, 20 times a second at most
  shown = all.length > SHOWN ? all.slice(0, SHOWN) : all;
  listChanged = false;
  listedAt = now;
  const note = $("#pending-note");
  note.textContent =
    all.length === 0
      ? "nothing pending"
      : all.length > SHOWN
        ? `the first ${SHOWN} of ${all.length.toLocaleString("en")}`
        : `${all.length} order${all.length === 1 ? "" : "s"}`;

  // Drop the rows of orders no longer shown, then move rows only where the order changed,
  // so that a row under the pointer stays put.
  const keep = new Set();
  for (const order of shown) keep.add(order.id);
  for (const [id, row] of rows) {
    if (keep.has(id)) continue;
    row.li.remove();
    rows.delete(id);
  }
  let cursor = timeline.firstElementChild;
  for (const order of shown) {
    let row = rows.get(order.id);
    if (!row) {
      row = makeRow(order);
      rows.set(order.id, row);
    }
    if (row.li === cursor) cursor = cursor.nextElementSibling;
    else timeline.insertBefore(row.li, cursor);
  }
}

function makeRow(order) {
  const li = document.createElement("li");
  li.className = order.fresh ? "order fresh" : "order";
  li.dataset.id = order.id;
  li.innerHTML = `<span class="id"></span><span class="who"></span><span class="amount"></span><span class="bar"><i></i></span><span class="left"></span><span class="actions"><button type="button" data-action="pay">Pay</button><button type="button" data-action="extend">+30 s</button></span>`;
  li.querySelector(".id").textContent = `#${order.id}`;
  const who = li.querySelector(".who");
  const small = document.createElement("small");
  small.textContent = order.item;
  who.append(order.customer, small);
  li.querySelector(".amount").textContent = euros(order.amount);
  return { li, left: li.querySelector(".left"), bar: li.querySelector(".bar i"), text: "", soon: false };
}

let rowHeight = 0;

/** The timeline's scroll position and height, read before the frame writes to the page. */
function timelineView() {
  if (rowHeight === 0) rowHeight = timeline.firstElementChild?.offsetHeight || 0;
  return { top: timeline.scrollTop, height: timeline.clientHeight };
}

function tickTimeline(now, view) {
  // Only the rows in view tick (rows are all one height): 200 countdowns changing ten
  // times a second would cost more layout and paint than the whole queue costs to run.
  if (shown.length === 0) return;
  const first = rowHeight ? Math.max(0, Math.floor(view.top / rowHeight) - 1) : 0;
  const last = rowHeight ? Math.min(shown.length, Math.ceil((view.top + view.height) / rowHeight) + 1) : shown.length;
  for (let i = first; i < last; i++) {
    const order = shown[i];
    const row = rows.get(order.id);
    const remaining = order.deadline - now;
    const text = pending.has(order.id) ? countdown(remaining) : "—";
    if (text !== row.text) {
      row.text = text;
      row.left.textContent = text;
      row.bar.style.transform = `scaleX(${Math.min(1, Math.max(0, remaining / order.windowMs)).toFixed(3)})`;
    }
    const soon = remaining < 5000;
    if (soon !== row.soon) {
      row.soon = soon;
      row.li.classList.toggle("soon", soon);
    }
  }
}

// ---- the figures ------------------------------------------------------------------------

const figures = [...document.querySelectorAll("[data-stat]")];
const tallies = [...document.querySelectorAll("[data-count]")];
let figuredAt = -Infinity;
let plottedAt = -Infinity;

function showFigures(stats) {
  for (const el of figures) {
    const v = stats[el.dataset.stat];
    el.textContent = el.dataset.stat.startsWith("lateness") ? ms(v) : v.toLocaleString("en");
  }
  for (const el of tallies) el.textContent = counts[el.dataset.count].toLocaleString("en");
}

// ---- the frame loop ---------------------------------------------------------------------

/** When the page was last updated: 20 times a second is smooth enough for countdowns, and
 * leaves the main thread free for the queue's timer (each update costs layout and paint). */
let drawnAt = -Infinity;

function frame(now) {
  requestAnimationFrame(frame);
  if (now - drawnAt < 45) return;
  drawnAt = now;
  const view = timelineView();
  flushLog();
  if (listChanged || now - listedAt >= 1000) listTimeline(now);
  tickTimeline(now, view);
  if (now - figuredAt >= 200) {
    figuredAt = now;
    const stats = queue.stats;
    showFigures(stats);
    if (now - plottedAt >= 500) {
      plottedAt = now;
      plot.draw(now, stats.latenessP50, stats.latenessP99);
    }
  }
}

// ---- formatting -------------------------------------------------------------------------

function euros(amount) {
  return `€${amount.toFixed(2)}`;
}

function ms(x) {
  return x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0);
}

function seconds(x) {
  const s = x / 1000;
  if (s >= 120) return `${Math.round(s / 60)} min`;
  return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
}

function countdown(x) {
  if (x <= 0) return "due";
  if (x >= 60_000) {
    const s = Math.floor(x / 1000);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  }
  return x < 10_000 ? `${(x / 1000).toFixed(1)} s` : `${Math.floor(x / 1000)} s`;
}

refillForm();
highlightPreset();
requestAnimationFrame(frame);
cancelUnpaid();
