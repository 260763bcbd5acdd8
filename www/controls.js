// The form that places one order, the window presets, and the bulk and "Cancel all" buttons.
import { randomCustomer, randomItem } from "./customers.js";
import { euros, seconds } from "./format.js";

/**
 * @param {import("./orders.js").Orders} orders
 * @param {(kind: string, order: object | null, text: string) => void} log
 */
export function wireControls(orders, log) {
  const $ = (selector) => document.querySelector(selector);
  const form = $("#order-form");
  const input = { customer: $("#customer"), amount: $("#amount"), window: $("#window") };

  const refillForm = () => {
    input.customer.value = randomCustomer();
    input.amount.value = randomItem()[1].toFixed(2);
  };
  const highlightPreset = () => {
    for (const b of document.querySelectorAll("[data-window]"))
      b.classList.toggle("on", Number(b.dataset.window) === Number(input.window.value));
  };

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const windowMs = Number(input.window.value) * 1000;
    const amount = Number(input.amount.value);
    if (!(windowMs > 0) || !(amount > 0)) return;
    const order = orders.place(input.customer.value.trim() || randomCustomer(), randomItem()[0], amount, windowMs);
    order.fresh = true;
    log("placed", order, `placed, ${euros(amount)}, ${seconds(windowMs)} to pay`);
    refillForm();
  });

  input.window.addEventListener("input", highlightPreset);
  for (const b of document.querySelectorAll("[data-window]")) {
    b.addEventListener("click", () => {
      input.window.value = b.dataset.window;
      highlightPreset();
    });
  }

  for (const b of document.querySelectorAll("[data-bulk]")) {
    b.addEventListener("click", () => {
      const n = Number(b.dataset.bulk);
      const t0 = performance.now();
      for (let i = 0; i < n; i++) {
        const [item, price] = randomItem();
        orders.place(randomCustomer(), item, price, 2000 + Math.random() * 118_000);
      }
      const ms = performance.now() - t0;
      log("placed", null, `placed ${n.toLocaleString("en")} random orders in ${ms.toFixed(1)} ms`);
    });
  }

  $("#clear").addEventListener("click", () => orders.clear());

  refillForm();
  highlightPreset();
}
