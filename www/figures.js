// The queue's figures, from `queue.stats`, and the tallies of what happened to the orders.
import { ms } from "./format.js";

export class Figures {
  #figures = [...document.querySelectorAll("[data-stat]")];
  #tallies = [...document.querySelectorAll("[data-count]")];

  /** @param {Record<string, number>} counts the orders' tallies (timeout, paid, rescheduled) */
  constructor(counts) {
    this.counts = counts;
  }

  show(stats) {
    for (const el of this.#figures) {
      const v = stats[el.dataset.stat];
      el.textContent = el.dataset.stat.startsWith("lateness") ? ms(v) : v.toLocaleString("en");
    }
    for (const el of this.#tallies) el.textContent = this.counts[el.dataset.count].toLocaleString("en");
  }
}
