// The dashboard's page: one HTML document, one stylesheet and one script, no framework, no
// other origin. The script is the function `app` below, served as its own source text
// (`pageScript`), so it is plain JS that the linter and the type checker read like any
// other; it reads the handler's JSON API (js/dashboard.js) with relative URLs, so the page
// works under any mount path. Every id, value and reason goes into the page as text
// (`textContent` through `h()`), never as HTML.

/** The HTML document; `title` is escaped. */
export function page({ title }) {
  const t = title.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${t}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="app.css">
<script type="module" src="app.js"></script>
</head>
<body>
<header>
<h1>${t}</h1>
<select id="queue" aria-label="queue"></select>
<span id="state" class="badge"></span>
<button id="toggle" type="button" hidden></button>
<span id="readonly" class="muted" hidden>read-only: start with a token to change</span>
<form id="unlock" hidden><input id="token" type="password" placeholder="token to make changes" autocomplete="off"><button>Unlock</button></form>
</header>
<nav id="tabs">
<a href="#overview">Overview</a><a href="#pending">Pending</a><a href="#inflight">In flight</a><a href="#dead">Dead letters</a><a href="#schedules">Schedules</a><a href="#search">Search</a>
</nav>
<main id="view"></main>
<footer id="status" role="status"></footer>
</body>
</html>
`;
}

export const pageStyle = `
:root{--fg:#1d2330;--mute:#667085;--line:#e4e7ec;--bg:#f8f9fb;--card:#fff;--accent:#2f6fdf;--warn:#c4320a;--ok:#067647;--p99:#d97706;font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
body{margin:0}
[hidden]{display:none!important}
header{display:flex;gap:.75rem;align-items:center;padding:.6rem 1.2rem;background:var(--card);border-bottom:1px solid var(--line)}
h1{font-size:1.1rem;margin:0 .5rem 0 0}
h2{font-size:1rem;margin:1.2rem 0 .5rem}
select,input,button{font:inherit;padding:.3rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--card);color:inherit}
button{cursor:pointer}button:disabled{opacity:.5;cursor:default}
button.danger{color:var(--warn)}
form{display:flex;gap:.4rem;margin:0}
#unlock,#readonly{margin-left:auto}
details summary{cursor:pointer;color:var(--mute);font-size:.8rem}
.badge{padding:.1rem .55rem;border-radius:999px;font-size:.8rem;background:#ecfdf3;color:var(--ok)}
.badge.paused{background:#fef3f2;color:var(--warn)}
nav{display:flex;gap:.2rem;padding:0 1.2rem;background:var(--card);border-bottom:1px solid var(--line)}
nav a{padding:.55rem .8rem;color:var(--mute);text-decoration:none;border-bottom:2px solid transparent}
nav a.on{color:var(--fg);border-color:var(--accent)}
main{padding:1rem 1.2rem;max-width:1100px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:.75rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.7rem .9rem}
.card b{display:block;font-size:1.5rem;font-variant-numeric:tabular-nums}
.card span{color:var(--mute);font-size:.85rem}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:.75rem;margin-top:.75rem}
figure{margin:0;background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.6rem .8rem}
figcaption{font-weight:600;margin-bottom:.3rem}
svg{width:100%;height:auto;display:block}
svg text{font-size:10px;fill:var(--mute)}
.axis{stroke:var(--line)}.l0{stroke:var(--accent)}.l1{stroke:var(--p99)}.l2{stroke:var(--warn)}
.d0{fill:var(--accent)}.d1{fill:var(--warn)}
polyline{fill:none;stroke-width:1.8}
.legend{display:flex;gap:.8rem;font-size:.8rem;color:var(--mute)}
.legend i{display:inline-block;width:.7rem;height:.2rem;margin-right:.25rem;vertical-align:middle}
.k0{background:var(--accent)}.k1{background:var(--p99)}.k2{background:var(--warn)}
table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:8px}
th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--mute);font-weight:500;font-size:.85rem}
td.id,td.value{font-family:ui-monospace,monospace;word-break:break-all}
td.actions{white-space:nowrap}
td pre{margin:0;white-space:pre-wrap;max-height:6.5em;overflow:auto;font-size:.8rem}
.muted{color:var(--mute)}
.narrow{width:5rem}.wide{min-width:22rem}
.row{display:flex;gap:.5rem;align-items:center;margin:.6rem 0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem;background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.8rem}
dt{color:var(--mute)}dd{margin:0;font-family:ui-monospace,monospace;word-break:break-all;white-space:pre-wrap}
footer{padding:.4rem 1.2rem;color:var(--mute);font-size:.8rem}
footer.error{color:var(--warn)}
`;

/** The page's script: runs in the browser, from its own source text. */
function app() {
  const POLL_MS = 2000;
  const PAGE = 50;
  const SVG = "http://www.w3.org/2000/svg";
  const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

  /** An element with attributes and children; strings become text, never HTML. */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    setUp(el, attrs, children);
    return el;
  }
  /** The same for SVG. */
  function s(tag, attrs, ...children) {
    const el = document.createElementNS(SVG, tag);
    setUp(el, attrs, children);
    return el;
  }
  function setUp(el, attrs, children) {
    for (const [k, v] of Object.entries(attrs ?? {})) {
      if (v === undefined || v === null || v === false) continue;
      if (typeof v === "function") el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
    }
  }

  /** @type {{ queues: string[], queue: string, write: boolean, values: boolean, authorized: boolean, token: string, stats: any, history: any[], now: number, items: any[], next: string | undefined, paged: boolean, query: string, found: any, newest: boolean, note: string, actions: string[], total: number }} */
  const state = {
    queues: [],
    queue: "",
    write: false,
    values: false,
    authorized: false,
    token: sessionStorage.getItem("tarry-token") ?? "",
    stats: null,
    history: [],
    now: 0,
    /** The current view's items and the cursor after them, when it pages. */
    items: [],
    next: undefined,
    paged: false,
    query: "",
    found: null,
    /** Dead letters newest first (the default), or in order of death. */
    newest: true,
    /** What the server says of the list shown (e.g. why it is not in the order asked). */
    note: "",
    /** What the schedules' buttons may do (the engine's methods), and how many there are. */
    actions: [],
    total: 0,
  };

  // A token handed over in the address (#token=...), when the page opens or later (pasted into
  // the address bar of an open tab), is kept for this tab and taken out of the address.
  function takeToken() {
    const handed = /(?:^#|&)token=([^&]*)/.exec(location.hash);
    if (handed === null) return false;
    state.token = decodeURIComponent(handed[1]);
    sessionStorage.setItem("tarry-token", state.token);
    history.replaceState(null, "", `${location.pathname}${location.search}#overview`);
    return true;
  }
  takeToken();

  async function api(path, body) {
    /** @type {RequestInit & { headers: Record<string, string> }} */
    const init = { headers: { accept: "application/json", "x-tarry-token": state.token } };
    if (body !== undefined) {
      init.method = "POST";
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(`api/${path}`, init);
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(data.error ?? `HTTP ${response.status}`);
    return data;
  }
  const q = (what, params) =>
    `queues/${encodeURIComponent(state.queue)}/${what}${params ? `?${new URLSearchParams(params)}` : ""}`;

  // What an action did stays on screen for KEEP_MS, an error until the next message that is
  // not the refresh note: the refresh note replaces neither.
  const KEEP_MS = 10000;
  let keptUntil = 0;
  function say(message, error = false, keep = true) {
    const el = $("status");
    el.textContent = message;
    el.className = error ? "error" : "";
    if (keep) keptUntil = error ? Number.POSITIVE_INFINITY : Date.now() + KEEP_MS;
  }

  // ---- formatting ----
  function duration(ms) {
    const a = Math.abs(ms);
    if (a < 1000) return `${Math.round(a)} ms`;
    if (a < 60_000) return `${(a / 1000).toFixed(1)} s`;
    if (a < 3_600_000) return `${(a / 60_000).toFixed(1)} min`;
    if (a < 86_400_000) return `${(a / 3_600_000).toFixed(1)} h`;
    return `${(a / 86_400_000).toFixed(1)} d`;
  }
  const relative = (t) => (t >= state.now ? `in ${duration(t - state.now)}` : `${duration(state.now - t)} ago`);
  const clock = (t) => new Date(t).toISOString().replace("T", " ").slice(0, 19);
  const count = (n) => (typeof n === "number" ? n.toLocaleString("en") : "–");

  // ---- charts ----
  /** A line chart of `series` ([{ name, points: [[t, v]] }]) over the history's span. */
  function chart(title, series, unit) {
    const W = 520;
    const H = 150;
    const L = 44;
    const B = 18;
    const all = series.flatMap((x) => x.points);
    const t1 = state.now;
    const t0 = Math.min(t1 - 60_000, ...all.map((p) => p[0]));
    let top = Math.max(1, ...all.map((p) => p[1]));
    const step = 10 ** Math.floor(Math.log10(top));
    top = Math.ceil(top / step) * step;
    const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - 4);
    const y = (v) => H - B - (v / top) * (H - B - 8);
    const svg = s(
      "svg",
      { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title },
      s("line", { class: "axis", x1: L, y1: y(0), x2: W - 4, y2: y(0) }),
      s("line", { class: "axis", x1: L, y1: y(top), x2: W - 4, y2: y(top) }),
      s("text", { x: L - 4, y: y(top) + 3, "text-anchor": "end" }, `${count(top)}${unit}`),
      s("text", { x: L - 4, y: y(0) + 3, "text-anchor": "end" }, `0${unit}`),
      s("text", { x: L, y: H - 4 }, `${duration(t1 - t0)} ago`),
      s("text", { x: W - 4, y: H - 4, "text-anchor": "end" }, "now"),
      series.map((line, i) =>
        s("polyline", {
          class: `l${i}`,
          points: line.points.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" "),
        }),
      ),
    );
    const legend = h(
      "div",
      { class: "legend" },
      series.map((line, i) => h("span", {}, h("i", { class: `k${i}` }), line.name)),
    );
    return h("figure", {}, h("figcaption", {}, title), svg, series.length > 1 ? legend : null);
  }

  /** The upcoming deadlines on a time axis from now (overdue ones at its left end). */
  function timeline(items) {
    const W = 1000;
    const H = 90;
    const now = state.now;
    const last = Math.max(now + 60_000, ...items.map((i) => i.deadline));
    const x = (t) => 10 + (Math.max(0, t - now) / (last - now)) * (W - 20);
    const stacked = new Map();
    const dots = items.map((item) => {
      const cx = Math.round(x(item.deadline));
      const n = stacked.get(cx) ?? 0;
      stacked.set(cx, n + 1);
      return s(
        "circle",
        { cx, cy: 52 - Math.min(n, 6) * 6, r: 4, class: item.deadline <= now ? "d1" : "d0" },
        s("title", {}, `${item.id}: ${clock(item.deadline)} (${relative(item.deadline)})`),
      );
    });
    const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
      const t = now + f * (last - now);
      return s(
        "text",
        { x: x(t), y: H - 8, "text-anchor": f === 0 ? "start" : f === 1 ? "end" : "middle" },
        f === 0 ? "now" : `+${duration(t - now)}`,
      );
    });
    return h(
      "figure",
      {},
      h("figcaption", {}, `Upcoming deadlines (the first ${items.length})`),
      s(
        "svg",
        { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "upcoming deadlines" },
        s("line", { class: "axis", x1: 10, y1: 60, x2: W - 10, y2: 60 }),
        dots,
        ticks,
      ),
    );
  }

  // ---- views ----
  function table(head, rows) {
    return h(
      "table",
      {},
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          head.map((c) => h("th", {}, c)),
        ),
      ),
      h("tbody", {}, rows),
    );
  }
  const valueCell = (item) => (state.values ? h("td", { class: "value" }, item.value ?? "") : null);
  const valueHead = () => (state.values ? ["value"] : []);

  function overview() {
    const st = state.stats ?? {};
    const f = st.all ?? st; // every process's figures, where the engine keeps them
    const card = (label, value) => h("div", { class: "card" }, h("b", {}, value), h("span", {}, label));
    const hist = state.history;
    const rate = [];
    for (let i = 1; i < hist.length; i++) {
      const dt = (hist[i].t - hist[i - 1].t) / 1000;
      const dn = hist[i].delivered - hist[i - 1].delivered;
      rate.push([hist[i].t, dt > 0 ? Math.max(0, dn >= 0 ? dn : hist[i].delivered) / dt : 0]);
    }
    const series = (key) => hist.map((p) => [p.t, p[key] ?? 0]);
    return [
      h(
        "div",
        { class: "cards" },
        card("pending", count(st.pending)),
        card("in flight", count(st.inFlight)),
        card("dead letters", count(st.dead)),
        card(
          "head",
          st.headDelay === undefined
            ? "empty"
            : st.headDelay >= 0
              ? `in ${duration(st.headDelay)}`
              : `${duration(-st.headDelay)} overdue`,
        ),
        card("lateness p50 / p99", `${duration(f.latenessP50 ?? 0)} / ${duration(f.latenessP99 ?? 0)}`),
        card("delivered", count(f.delivered)),
      ),
      h(
        "div",
        { class: "charts" },
        chart("Throughput (deliveries per second)", [{ name: "delivered", points: rate }], "/s"),
        chart(
          "Lateness (ms)",
          [
            { name: "p50", points: series("p50") },
            { name: "p99", points: series("p99") },
          ],
          "",
        ),
        chart(
          "Items",
          [
            { name: "pending", points: series("pending") },
            { name: "in flight", points: series("inFlight") },
            { name: "dead", points: series("dead") },
          ],
          "",
        ),
      ),
    ];
  }

  function pending() {
    const rows = state.items.map((i) =>
      h(
        "tr",
        {},
        h("td", { class: "id" }, i.id),
        h("td", {}, clock(i.deadline)),
        h("td", {}, relative(i.deadline)),
        h("td", {}, i.attempt),
        valueCell(i),
      ),
    );
    return [
      timeline(state.items),
      h("h2", {}, "Pending, in deadline order"),
      table(["id", "due", "when", "attempt", ...valueHead()], rows),
      more(),
    ];
  }

  function inflight() {
    const rows = state.items.map((i) =>
      h(
        "tr",
        {},
        h("td", { class: "id" }, i.id),
        h("td", {}, i.attempt),
        h("td", {}, i.leaseExpiry === undefined ? "–" : relative(i.leaseExpiry)),
        h("td", {}, clock(i.deadline)),
        valueCell(i),
      ),
    );
    return [
      h("h2", {}, "In flight, by lease expiry"),
      table(["id", "attempt", "lease expires", "was due", ...valueHead()], rows),
      more(),
    ];
  }

  function dead() {
    const can = state.authorized;
    const act = (what, id) => async () => {
      try {
        const { done } = await api(q(what), { id });
        say(done ? `${what === "retry" ? "retried" : "deleted"} ${id}` : `${id} is no longer a dead letter`);
      } catch (e) {
        say(`${what} ${id}: ${e.message}`, true);
      }
      await refresh(true);
    };
    const rows = state.items.map((i) =>
      h(
        "tr",
        {},
        h("td", { class: "id" }, i.id),
        h("td", {}, relative(i.diedAt)),
        h("td", {}, i.attempt),
        h(
          "td",
          {},
          h("pre", {}, i.reason),
          i.stack ? h("details", {}, h("summary", {}, "stack"), h("pre", { class: "stack" }, i.stack)) : null,
        ),
        valueCell(i),
        h(
          "td",
          {},
          h("button", { type: "button", disabled: !can, onclick: act("retry", i.id), "data-action": "retry" }, "Retry"),
          " ",
          h(
            "button",
            { type: "button", class: "danger", disabled: !can, onclick: act("delete", i.id), "data-action": "delete" },
            "Delete",
          ),
        ),
      ),
    );
    const minutes = h("input", { type: "number", min: 0, value: 60, class: "narrow", "aria-label": "minutes" });
    const purge = h(
      "form",
      {
        class: "row",
        onsubmit: async (e) => {
          e.preventDefault();
          try {
            const { removed } = await api(q("purge"), { olderThan: Number(minutes.value) * 60_000 });
            say(`purged ${removed} dead letters`);
          } catch (err) {
            say(`purge: ${err.message}`, true);
          }
          await refresh(true);
        },
      },
      "Delete the dead letters older than",
      minutes,
      "minutes",
      h("button", { class: "danger", disabled: !can }, "Purge"),
    );
    const order = h(
      "button",
      {
        type: "button",
        id: "order",
        onclick: () => {
          state.newest = !state.newest;
          refresh(true);
        },
      },
      state.newest ? "Oldest first" : "Newest first",
    );
    return [
      h("h2", {}, state.newest ? "Dead letters, newest first " : "Dead letters, in order of death ", order),
      state.note ? h("p", { class: "muted" }, state.note) : null,
      table(["id", "died", "attempts", "reason", ...valueHead(), ""], rows),
      more(),
      purge,
    ];
  }

  function schedules() {
    const can = state.authorized;
    /** What each button says, did, and says when the schedule could not (it changed meanwhile). */
    const changes = {
      pauseSchedule: ["Pause", "paused", "was not running"],
      resumeSchedule: ["Resume", "resumed", "was not paused"],
      trigger: ["Run now", "ran now", "did not run (a run lasts, or it ended)"],
      unschedule: ["Remove", "removed", "is no longer a schedule"],
    };
    const act = (what, id) => async () => {
      try {
        const { done } = await api(q(what), { id });
        const [, did, not] = changes[what];
        say(done ? `${did} the schedule ${id}` : `${id} ${not}`);
      } catch (e) {
        say(`${what} ${id}: ${e.message}`, true);
      }
      await refresh(true);
    };
    const when = (t) => (t === undefined ? "–" : `${clock(t)} (${relative(t)})`);
    const rows = state.items.map((s) =>
      h(
        "tr",
        {},
        h("td", { class: "id" }, s.id),
        h("td", {}, s.rule),
        h("td", {}, s.paused ? "paused" : when(s.nextRun)),
        h(
          "td",
          {},
          when(s.lastRun),
          s.lastOutcome ? h("span", { class: `outcome ${s.lastOutcome}` }, ` ${s.lastOutcome}`) : null,
          s.lastReason ? h("pre", {}, s.lastReason) : null,
        ),
        h("td", {}, s.runs),
        h("td", {}, s.skipped),
        h("td", {}, s.catchUp),
        h("td", {}, s.overlap ? "yes" : "no"),
        valueCell(s),
        h(
          "td",
          { class: "actions" },
          ...Object.keys(changes)
            .filter((what) => state.actions.includes(what))
            .filter((what) => (what === "pauseSchedule" ? !s.paused : what === "resumeSchedule" ? s.paused : true))
            .map((what) =>
              h(
                "button",
                {
                  type: "button",
                  class: what === "unschedule" ? "danger" : undefined,
                  disabled: !can,
                  onclick: act(what, s.id),
                  "data-action": what,
                },
                changes[what][0],
              ),
            ),
        ),
      ),
    );
    return [
      h("h2", {}, "Schedules, by id"),
      table(["id", "rule", "next run", "last run", "runs", "skipped", "catchUp", "overlap", ...valueHead(), ""], rows),
      h(
        "p",
        { class: "muted" },
        state.items.length === 0
          ? "None."
          : state.total > state.items.length
            ? `The first ${state.items.length} of ${state.total}.`
            : `${state.items.length} shown.`,
      ),
    ];
  }

  function search() {
    const input = /** @type {HTMLInputElement} */ (
      h("input", { type: "search", placeholder: "an item's id", class: "wide", "aria-label": "id", value: state.query })
    );
    const form = h(
      "form",
      {
        class: "row",
        onsubmit: async (e) => {
          e.preventDefault();
          state.query = input.value;
          try {
            state.found = (await api(q("item", { id: input.value }))).item ?? {
              missing: input.value,
              why: "the queue holds nothing under this id",
            };
          } catch (err) {
            state.found = { missing: input.value, why: err.message };
          }
          render();
        },
      },
      input,
      h("button", { id: "find" }, "Find"),
    );
    const f = state.found;
    let result = null;
    if (f?.missing !== undefined) result = h("p", { class: "muted" }, `${f.missing}: ${f.why}`);
    else if (f) {
      const rows = Object.entries(f).flatMap(([k, v]) => [
        h("dt", {}, k),
        h(
          "dd",
          {},
          ["deadline", "diedAt", "leaseExpiry"].includes(k)
            ? `${clock(v)} (${relative(v)})`
            : typeof v === "string"
              ? v
              : JSON.stringify(v),
        ),
      ]);
      result = h("dl", {}, rows);
    }
    return [h("h2", {}, "Find an item by id"), form, result];
  }

  function more() {
    if (state.next === undefined)
      return h(
        "p",
        { class: "muted" },
        state.items.length === 0 ? "None." : `${state.items.length} shown, the last page.`,
      );
    return h(
      "p",
      { class: "row" },
      `${state.items.length} shown.`,
      h("button", { type: "button", onclick: () => loadMore() }, "More"),
    );
  }

  const views = { overview, pending, inflight, dead, schedules, search };
  const lists = { pending: "pending", inflight: "inflight", dead: "dead", schedules: "schedules" };
  /** The request of a list view's first page. */
  const listOf = (v) => q(lists[v], v === "dead" && state.newest ? { limit: PAGE, order: "newest" } : { limit: PAGE });
  const view = () => (location.hash.slice(1) in views ? location.hash.slice(1) : "overview");

  function render() {
    const v = view();
    for (const a of Array.from(document.querySelectorAll("#tabs a")))
      a.classList.toggle("on", a.getAttribute("href") === `#${v}`);
    const st = state.stats;
    const badge = $("state");
    badge.textContent = st === null ? "" : st.paused ? "paused" : "running";
    badge.className = st?.paused ? "badge paused" : "badge";
    const toggle = /** @type {HTMLButtonElement} */ ($("toggle"));
    toggle.hidden = !state.write || st === null || st.paused === undefined;
    toggle.textContent = st?.paused ? "Resume" : "Pause";
    toggle.disabled = !state.authorized;
    $("unlock").hidden = !state.write || state.authorized;
    $("readonly").hidden = state.write;
    $("view").replaceChildren(...views[v]().filter((x) => x !== null));
  }

  async function loadMore() {
    const v = view();
    try {
      const params = { limit: PAGE, after: state.next };
      const page = await api(q(lists[v], v === "dead" && state.newest ? { ...params, order: "newest" } : params));
      state.items = state.items.concat(page.items);
      state.next = page.next;
      state.paged = true;
      render();
    } catch (e) {
      say(e.message, true);
    }
  }

  let shownView = "";
  async function refresh(reload = false) {
    if (state.queue === "") return;
    const v = view();
    try {
      const s1 = await api(q("stats"));
      state.stats = s1.stats;
      state.history = s1.history;
      state.now = s1.now;
      if (v in lists && (reload || !state.paged || shownView !== v)) {
        const page = await api(listOf(v));
        state.items = page.items ?? page.schedules;
        state.next = page.next;
        state.note = page.note ?? "";
        state.actions = page.actions ?? [];
        state.total = page.total ?? 0;
        state.paged = false;
      }
      shownView = v;
      if (Date.now() >= keptUntil) say(`updated ${new Date().toLocaleTimeString()}`, false, false);
      render();
    } catch (e) {
      say(e.message, true);
    }
  }

  async function unlock() {
    try {
      state.authorized = (await api("session")).write;
      if (state.token !== "" && !state.authorized) say("that token does not allow changes", true);
    } catch (e) {
      say(e.message, true);
    }
  }

  async function start() {
    const info = await api("queues");
    state.queues = info.queues;
    state.write = info.write;
    state.values = info.values;
    state.queue = info.queues[0];
    const select = /** @type {HTMLSelectElement} */ ($("queue"));
    select.replaceChildren(...info.queues.map((name) => h("option", { value: name }, name)));
    select.addEventListener("change", () => {
      state.queue = select.value;
      state.history = [];
      state.found = null;
      refresh(true);
    });
    if (state.write) await unlock();
    $("unlock").addEventListener("submit", async (e) => {
      e.preventDefault();
      state.token = /** @type {HTMLInputElement} */ ($("token")).value;
      sessionStorage.setItem("tarry-token", state.token);
      await unlock();
      render();
    });
    $("toggle").addEventListener("click", async () => {
      const paused = state.stats?.paused;
      try {
        await api(q(paused ? "resume" : "pause"), {});
        say(paused ? "resumed" : "paused");
      } catch (e) {
        say(e.message, true);
      }
      await refresh();
    });
    addEventListener("hashchange", async () => {
      state.found = null;
      if (takeToken() && state.write) await unlock();
      refresh(true);
    });
    await refresh(true);
    setInterval(() => {
      if (view() !== "search") refresh();
    }, POLL_MS);
  }

  start().catch((e) => say(e.message, true));
}

/** The page's script: `app`'s source, run as a module. */
export const pageScript = `(${app.toString()})();\n`;
