// The pending orders by deadline, each with a countdown, Pay and +30 s. With thousands
// pending only the first SHOWN rows are drawn, and only the rows in view tick.
import { countdown, euros } from "./format.js";

const SHOWN = 200;

export class Timeline {
  #orders;
  #list;
  #note;
  #listedAt = -Infinity;
  /** The orders drawn, in deadline order, and their rows. */
  #shown = [];
  #rows = new Map();
  #rowHeight = 0;

  /**
   * @param {import("./orders.js").Orders} orders
   * @param {HTMLOListElement} list
   * @param {HTMLElement} note says how many are pending
   */
  constructor(orders, list, note) {
    this.#orders = orders;
    this.#list = list;
    this.#note = note;
    list.addEventListener("click", (e) => {
      const button = e.target.closest("button[data-action]");
      const order = button && orders.pending.get(Number(button.closest("li").dataset.id));
      if (!order) return;
      if (button.dataset.action === "pay") orders.pay(order);
      else orders.extend(order);
    });
  }

  /** The list's scroll position and height, read before the frame writes to the page. */
  view() {
    if (this.#rowHeight === 0) this.#rowHeight = this.#list.firstElementChild?.offsetHeight || 0;
    return { top: this.#list.scrollTop, height: this.#list.clientHeight };
  }

  /** Relists the rows when orders came or went (and once a second), then ticks the rows in view. */
  draw(now, view) {
    if (this.#orders.changed || now - this.#listedAt >= 1000) this.#relist(now);
    this.#tick(now, view);
  }

  #relist(now) {
    const all = this.#orders.queue.toArray(); // by deadline; O(n log n) in wasm: ~1 ms at 10,000, 20 times a second at most
    const shown = all.length > SHOWN ? all.slice(0, SHOWN) : all;
    this.#shown = shown;
    this.#orders.changed = false;
    this.#listedAt = now;
    this.#note.textContent =
      all.length === 0
        ? "nothing pending"
        : all.length > SHOWN
          ? `the first ${SHOWN} of ${all.length.toLocaleString("en")}`
          : `${all.length} order${all.length === 1 ? "" : "s"}`;

    // Drop the rows of orders no longer shown, then move rows only where the order changed,
    // so that a row under the pointer stays put.
    const rows = this.#rows;
    const keep = new Set();
    for (const order of shown) keep.add(order.id);
    for (const [id, row] of rows) {
      if (keep.has(id)) continue;
      row.li.remove();
      rows.delete(id);
    }
    let cursor = this.#list.firstElementChild;
    for (const order of shown) {
      let row = rows.get(order.id);
      if (!row) {
        row = makeRow(order);
        rows.set(order.id, row);
      }
      if (row.li === cursor) cursor = cursor.nextElementSibling;
      else this.#list.insertBefore(row.li, cursor);
    }
  }

  #tick(now, view) {
    // Only the rows in view tick (rows are all one height): 200 countdowns changing ten
    // times a second would cost more layout and paint than the whole queue costs to run.
    const shown = this.#shown;
    if (shown.length === 0) return;
    const h = this.#rowHeight;
    const first = h ? Math.max(0, Math.floor(view.top / h) - 1) : 0;
    const last = h ? Math.min(shown.length, Math.ceil((view.top + view.height) / h) + 1) : shown.length;
    for (let i = first; i < last; i++) {
      const order = shown[i];
      const row = this.#rows.get(order.id);
      const remaining = order.deadline - now;
      const text = this.#orders.pending.has(order.id) ? countdown(remaining) : "—";
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
