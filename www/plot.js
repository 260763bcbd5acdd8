// The lateness plot: each timeout as a dot (when it fired, how late) over the last minute,
// and beside it a histogram of every timeout so far, on the same logarithmic lateness axis.

const WINDOW_MS = 60_000;
const LOW = 0.1; // ms at the bottom of the axis; anything below sits on it
const HIGH = 1000; // ms at the top; anything above sits on it, drawn as a triangle
const BINS_PER_DECADE = 4;
const DECADES = Math.log10(HIGH / LOW);
const BINS = DECADES * BINS_PER_DECADE;

const colors = {
  ink: "#1c2230",
  muted: "#6b7385",
  grid: "#e9ecf1",
  dot: "rgba(220, 38, 38, 0.55)",
  bar: "#fca5a5",
  barEdge: "#dc2626",
  p50: "#4f46e5",
  p99: "#d97706",
};

export class LatenessPlot {
  /** @param {HTMLCanvasElement} canvas */
  constructor(canvas) {
    this.canvas = canvas;
    // Samples of the last minute, oldest first, from index `head` on.
    this.at = [];
    this.ms = [];
    this.head = 0;
    this.bins = new Uint32Array(BINS);
    this.count = 0;
  }

  /** Records one timeout that fired `ms` after its deadline, now. */
  add(ms, now = performance.now()) {
    this.at.push(now);
    this.ms.push(ms);
    this.bins[binOf(ms)]++;
    this.count++;
  }

  /**
   * Redraws for time `now`; `p50` and `p99` (ms) are the queue's own estimates, drawn as
   * lines so that they can be checked against the dots.
   */
  draw(now, p50, p99) {
    this.#forget(now - WINDOW_MS);
    const { canvas } = this;
    const dpr = window.devicePixelRatio || 1;
    const w = canvas.clientWidth || canvas.width;
    const h = canvas.clientHeight || canvas.height;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
    }
    const g = canvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "middle";

    const left = 50;
    const top = 8;
    const bottom = h - 22;
    const split = Math.round(left + (w - left) * 0.7);
    const right = w - 6;
    const y = (ms) => bottom - (Math.log10(Math.min(Math.max(ms, LOW), HIGH) / LOW) / DECADES) * (bottom - top);
    const x = (t) => left + ((t - (now - WINDOW_MS)) / WINDOW_MS) * (split - 12 - left);

    // Grid and lateness axis.
    g.strokeStyle = colors.grid;
    g.fillStyle = colors.muted;
    g.lineWidth = 1;
    g.textAlign = "right";
    for (let d = 0; d <= DECADES; d++) {
      const ms = LOW * 10 ** d;
      const yy = Math.round(y(ms)) + 0.5;
      g.beginPath();
      g.moveTo(left, yy);
      g.lineTo(right, yy);
      g.stroke();
      g.fillText(ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`, left - 6, yy);
    }
    g.textAlign = "center";
    g.textBaseline = "top";
    for (const [t, label] of [
      [now - WINDOW_MS, "−60 s"],
      [now - WINDOW_MS / 2, "−30 s"],
      [now, "now"],
    ]) {
      g.fillText(label, x(t), bottom + 6);
    }
    g.fillText("all timeouts", (split + right) / 2, bottom + 6);

    // Dots of the last minute; those past the top as triangles.
    g.fillStyle = colors.dot;
    for (let i = this.head; i < this.at.length; i++) {
      const xx = x(this.at[i]);
      const ms = this.ms[i];
      if (ms > HIGH) {
        g.beginPath();
        g.moveTo(xx, top - 2);
        g.lineTo(xx - 3, top + 4);
        g.lineTo(xx + 3, top + 4);
        g.fill();
      } else {
        g.fillRect(xx - 1.5, y(ms) - 1.5, 3, 3);
      }
    }

    // Histogram of all timeouts, bars growing right from the split.
    const most = Math.max(1, ...this.bins);
    const binH = (bottom - top) / BINS;
    g.fillStyle = colors.bar;
    g.strokeStyle = colors.barEdge;
    for (let b = 0; b < BINS; b++) {
      if (this.bins[b] === 0) continue;
      const len = Math.max(1, (this.bins[b] / most) * (right - split - 4));
      const yy = bottom - (b + 1) * binH;
      g.fillRect(split, yy + 1, len, binH - 2);
    }
    g.strokeStyle = colors.ink;
    g.beginPath();
    g.moveTo(split - 0.5, top);
    g.lineTo(split - 0.5, bottom);
    g.stroke();

    // The queue's p50 and p99.
    g.textBaseline = "bottom";
    g.textAlign = "left";
    for (const [ms, color, label] of [
      [p50, colors.p50, "p50"],
      [p99, colors.p99, "p99"],
    ]) {
      if (!(this.count > 0) || !(ms >= 0)) continue;
      const yy = Math.round(y(ms)) + 0.5;
      g.strokeStyle = color;
      g.fillStyle = color;
      g.setLineDash([4, 3]);
      g.beginPath();
      g.moveTo(left, yy);
      g.lineTo(right, yy);
      g.stroke();
      g.setLineDash([]);
      g.fillText(
        `${label} ${ms < 10 ? ms.toFixed(2) : ms.toFixed(0)} ms`,
        label === "p50" ? left + 4 : left + 92,
        yy - 1,
      );
    }
    if (this.count === 0) {
      g.fillStyle = colors.muted;
      g.textAlign = "center";
      g.textBaseline = "middle";
      g.fillText("no timeouts yet", (left + split) / 2, (top + bottom) / 2);
    }
  }

  #forget(before) {
    while (this.head < this.at.length && this.at[this.head] < before) this.head++;
    if (this.head > 4096 && this.head * 2 > this.at.length) {
      this.at = this.at.slice(this.head);
      this.ms = this.ms.slice(this.head);
      this.head = 0;
    }
  }
}

function binOf(ms) {
  const b = Math.floor(Math.log10(Math.max(ms, LOW) / LOW) * BINS_PER_DECADE);
  return Math.min(Math.max(b, 0), BINS - 1);
}
