// Hand-written SVGs of the benchmark: `chart` draws one panel per workload (ops/s, and
// bytes per pending item), bars per implementation grouped by N, on log scales (the
// implementations differ by orders of magnitude); `curves` draws the growth curve, ns per
// operation per block of 10^6 operations, one panel per runtime.

import { GROWTH_IMPLS } from "./growth.mjs";
import { pow10, short } from "./numbers.mjs";

const COLORS = {
  tarry: "#d1495b",
  "js-heap": "#00798c",
  tinyqueue: "#edae49",
  setTimeout: "#66a182",
  java: "#2e4057",
};

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;");

/** 10^e as 1, 10, 100, 1k, …, 1G. */
const tick = (e) => ["1", "10", "100"][e % 3] + (["", "k", "M", "G", "T"][Math.floor(e / 3)] ?? `e${e - (e % 3)}`);

/**
 * panels: [{ title, unit, better: "higher"|"lower", groups: [{ label, bars: [{ impl, value }] }] }]
 * labels: impl id -> display name.
 */
export function chart(panels, labels, subtitle) {
  const W = 980;
  const cols = 2;
  const pw = 470;
  const ph = 250;
  const top = 70;
  const rows = Math.ceil((panels.length + 1) / cols);
  const H = top + rows * (ph + 20) + 10;
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif">`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  out.push(`<text x="20" y="28" font-size="18" font-weight="bold">tarry vs the peers</text>`);
  out.push(`<text x="20" y="48" font-size="12" fill="#555">${esc(subtitle)}</text>`);
  // Legend: in the next free panel cell, or in a row of its own.
  const cell = panels.length;
  const lx = 20 + (cell % cols) * (pw + 10) + 20;
  const ly = top + Math.floor(cell / cols) * (ph + 20) + 30;
  Object.entries(labels).forEach(([id, name], i) => {
    out.push(`<rect x="${lx}" y="${ly + i * 24}" width="14" height="14" fill="${COLORS[id] ?? "#999"}"/>`);
    out.push(`<text x="${lx + 22}" y="${ly + i * 24 + 12}" font-size="13">${esc(name)}</text>`);
  });
  panels.forEach((panel, k) => {
    const x0 = 20 + (k % cols) * (pw + 10);
    const y0 = top + Math.floor(k / cols) * (ph + 20);
    out.push(panelSvg(panel, x0, y0, pw, ph));
  });
  out.push("</svg>");
  return out.join("\n");
}

function panelSvg(panel, x0, y0, w, h) {
  const values = panel.groups.flatMap((g) => g.bars.map((b) => b.value)).filter((v) => v > 0 && Number.isFinite(v));
  if (values.length === 0) return "";
  const lo = Math.floor(Math.log10(Math.min(...values)));
  const hi = Math.ceil(Math.log10(Math.max(...values)) + 0.15);
  const left = 50;
  const plotTop = 30;
  const plotH = h - plotTop - 30;
  const plotW = w - left - 10;
  const y = (v) => y0 + plotTop + plotH - ((Math.log10(v) - lo) / (hi - lo || 1)) * plotH;
  const s = [];
  s.push(`<g>`);
  s.push(`<rect x="${x0}" y="${y0}" width="${w}" height="${h}" fill="#fafafa" stroke="#ddd"/>`);
  s.push(`<text x="${x0 + 10}" y="${y0 + 18}" font-size="13" font-weight="bold">${esc(panel.title)}</text>`);
  s.push(
    `<text x="${x0 + w - 10}" y="${y0 + 18}" font-size="11" fill="#555" text-anchor="end">${esc(panel.unit)}, log scale, ${panel.better} is better</text>`,
  );
  for (let e = lo; e <= hi; e++) {
    const yy = y(10 ** e);
    s.push(`<line x1="${x0 + left}" x2="${x0 + w - 10}" y1="${yy}" y2="${yy}" stroke="#e4e4e4"/>`);
    s.push(`<text x="${x0 + left - 4}" y="${yy + 4}" font-size="10" text-anchor="end" fill="#555">${tick(e)}</text>`);
  }
  const gw = plotW / panel.groups.length;
  panel.groups.forEach((g, gi) => {
    const gx = x0 + left + gi * gw;
    const bw = Math.min(34, (gw - 16) / g.bars.length);
    const start = gx + (gw - bw * g.bars.length) / 2;
    g.bars.forEach((b, bi) => {
      if (!(b.value > 0 && Number.isFinite(b.value))) return;
      const bx = start + bi * bw;
      const by = y(b.value);
      const base = y(10 ** lo);
      s.push(
        `<rect x="${bx.toFixed(1)}" y="${by.toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${(base - by).toFixed(1)}" fill="${COLORS[b.impl] ?? "#999"}"><title>${esc(b.impl)}: ${short(b.value)}</title></rect>`,
      );
      s.push(
        `<text x="${(bx + bw / 2 - 1).toFixed(1)}" y="${(by - 3).toFixed(1)}" font-size="8.5" text-anchor="middle" fill="#333">${short(b.value)}</text>`,
      );
    });
    s.push(`<text x="${gx + gw / 2}" y="${y0 + h - 10}" font-size="11" text-anchor="middle">${esc(g.label)}</text>`);
  });
  s.push(`</g>`);
  return s.join("\n");
}

const PHASE_COLORS = { offer: "#d1495b", cancel: "#00798c", drain: "#edae49" };

/**
 * panels: [{ title, series: [{ label, phase, dashed, points: [[x, ns], ...] }] }], x in
 * millions of operations done when the block ends.
 */
export function curves(panels, subtitle) {
  const W = 980;
  const cols = 2;
  const pw = 470;
  const ph = 280;
  const top = 70;
  const rows = Math.ceil(panels.length / cols);
  const H = top + rows * (ph + 20) + 40;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="20" y="28" font-size="18" font-weight="bold">Cost per operation as the queue grows: block k of 10^6 operations</text>`,
    `<text x="20" y="48" font-size="12" fill="#555">${esc(subtitle)}</text>`,
  ];
  panels.forEach((panel, k) => {
    out.push(curvePanel(panel, 20 + (k % cols) * (pw + 10), top + Math.floor(k / cols) * (ph + 20), pw, ph));
  });
  const ly = H - 22;
  let lx = 20;
  for (const [phase, color] of Object.entries(PHASE_COLORS)) {
    out.push(`<line x1="${lx}" x2="${lx + 24}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2.5"/>`);
    out.push(`<text x="${lx + 30}" y="${ly + 4}" font-size="12">${phase}</text>`);
    lx += 110;
  }
  out.push(`<text x="${lx}" y="${ly + 4}" font-size="12">solid: tarry; dashed: plain-JS heap</text>`);
  out.push("</svg>");
  return out.join("\n");
}

function curvePanel(panel, x0, y0, w, h) {
  const points = panel.series.flatMap((s) => s.points);
  if (points.length === 0) return "";
  const xMax = Math.max(...points.map((p) => p[0]));
  const yMax = niceCeil(Math.max(...points.map((p) => p[1])));
  const left = 50;
  const plotTop = 30;
  const plotH = h - plotTop - 35;
  const plotW = w - left - 15;
  const x = (v) => x0 + left + (v / xMax) * plotW;
  const y = (v) => y0 + plotTop + plotH - (v / yMax) * plotH;
  const s = [
    `<g>`,
    `<rect x="${x0}" y="${y0}" width="${w}" height="${h}" fill="#fafafa" stroke="#ddd"/>`,
    `<text x="${x0 + 10}" y="${y0 + 18}" font-size="13" font-weight="bold">${esc(panel.title)}</text>`,
    `<text x="${x0 + w - 10}" y="${y0 + 18}" font-size="11" fill="#555" text-anchor="end">ns per operation, lower is better</text>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const v = (yMax * i) / 4;
    s.push(`<line x1="${x(0)}" x2="${x(xMax)}" y1="${y(v)}" y2="${y(v)}" stroke="#e4e4e4"/>`);
    s.push(`<text x="${x(0) - 4}" y="${y(v) + 4}" font-size="10" text-anchor="end" fill="#555">${short(v)}</text>`);
  }
  s.push(
    `<text x="${x(xMax)}" y="${y0 + h - 8}" font-size="10" text-anchor="end" fill="#555">${esc(panel.xLabel ?? "")}</text>`,
  );
  for (const v of [0, xMax / 2, xMax]) {
    s.push(
      `<text x="${x(v)}" y="${y(0) + 14}" font-size="10" text-anchor="middle" fill="#555">${short(v * 1e6)}</text>`,
    );
  }
  for (const series of panel.series) {
    const d = series.points.map(([a, b], i) => `${i ? "L" : "M"}${x(a).toFixed(1)},${y(b).toFixed(1)}`).join(" ");
    const dash = series.dashed ? ' stroke-dasharray="6 4"' : "";
    s.push(
      `<path d="${d}" fill="none" stroke="${PHASE_COLORS[series.phase] ?? "#999"}" stroke-width="2"${dash}><title>${esc(series.label)}</title></path>`,
    );
    for (const [a, b] of series.points) {
      s.push(
        `<circle cx="${x(a).toFixed(1)}" cy="${y(b).toFixed(1)}" r="2" fill="${PHASE_COLORS[series.phase] ?? "#999"}"/>`,
      );
    }
  }
  s.push("</g>");
  return s.join("\n");
}

/** 1, 2 or 5 times a power of ten, at least v. */
function niceCeil(v) {
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => m * p).find((c) => c >= v);
}

/** The comparison's chart: one panel per workload, bars per implementation and N. */
export function comparisonChart(c, summary, labels, subtitle) {
  const ids = Object.keys(summary);
  const panel = (title, metric, unit, better) => ({
    title,
    unit,
    better,
    groups: c.sizes.map((n) => ({
      label: `N = ${pow10(n)}`,
      bars: ids.map((id) => ({ impl: id, value: summary[id][metric]?.[n] })),
    })),
  });
  const panels = [
    panel("offer", "offer", "ops/s", "higher"),
    panel("cancel", "cancel", "ops/s", "higher"),
    panel("drain (poll per item)", "drain", "ops/s", "higher"),
    panel("memory per pending item", "mem", "bytes", "lower"),
    {
      title: `churn (${pow10(c.churn.pending)} pending, offer + cancel)`,
      unit: "steps/s",
      better: "higher",
      groups: [
        { label: `${pow10(c.churn.steps)} steps`, bars: ids.map((id) => ({ impl: id, value: summary[id].churn })) },
      ],
    },
  ];
  return chart(panels, Object.fromEntries(ids.map((id) => [id, labels[id]])), subtitle);
}

/** The growth curves: per runtime, at its largest N, offer, cancel and drain per block. */
export function growthChart(growth, labels, subtitle) {
  const panels = Object.values(growth).map((byImpl) => {
    const n = Math.max(...Object.keys(byImpl.tarry).map(Number));
    return {
      title: `${byImpl.tarry[n].runtime}, N = ${pow10(n)}`,
      xLabel: "operations done in the phase",
      series: GROWTH_IMPLS.flatMap((id) =>
        ["offer", "cancel", "drain"].map((phase) => ({
          label: `${labels[id]}: ${phase}`,
          phase,
          dashed: id !== "tarry",
          points: byImpl[id][n][phase].blocks.map((v, k) => [((k + 1) * byImpl[id][n].block) / 1e6, v]),
        })),
      ),
    };
  });
  return curves(panels, subtitle);
}
