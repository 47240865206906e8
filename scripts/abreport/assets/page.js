// attnbench interactive report: draws the JSON embedded in #abdata as SVG charts with filters,
// hover cards and legend toggles. Hand-written, no library, no network (scripts/abreport/html_report.py
// writes the data; docs/charts.md describes the page). Every plotted mark is an SVG element with
// class "pt" and data-i = the index of its entry in D.entries.
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("abdata").textContent);
  const E = D.entries, I = D.info;
  const NS = "http://www.w3.org/2000/svg";
  const FACET = {};
  D.facets.forEach((f, j) => { FACET[f.key] = j; });
  const VJ = FACET.variant;
  const state = { off: D.facets.map(() => new Set()), search: "", verdictOff: new Set(), onlyReg: false };
  const redraws = [];
  const PEERS = new Set();
  I.forEach((x, i) => { if (x.peer) PEERS.add(E[i].variant); });

  // ---- helpers ---------------------------------------------------------------------------
  function el(tag, attrs, parent, text) {
    const n = document.createElement(tag);
    for (const k in attrs || {}) n.setAttribute(k, attrs[k]);
    if (text !== undefined) n.textContent = text;
    if (parent) parent.appendChild(n);
    return n;
  }
  function sv(tag, attrs, parent, text) {
    const n = document.createElementNS(NS, tag);
    for (const k in attrs || {}) if (attrs[k] !== undefined && attrs[k] !== null) n.setAttribute(k, attrs[k]);
    if (text !== undefined) n.textContent = text;
    if (parent) parent.appendChild(n);
    return n;
  }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
  }
  function fmtNum(x) {  // text.fmt_num: axis ticks
    if (x === 0) return "0";
    const a = Math.abs(x);
    if (a >= 1024 && Number.isInteger(x) && x % 1024 === 0) return (x / 1024) + "k";
    if (a >= 1000) return Math.round(x).toLocaleString("en-US");
    if (a >= 100) return x.toFixed(0);
    if (a >= 1) return String(+x.toPrecision(3));
    return String(+x.toPrecision(2));
  }
  function fmt(x, digits) {  // text.fmt: values
    if (x === null || x === undefined) return "—";
    if (typeof x !== "number") return String(x);
    if (x === 0) return "0";
    if (Math.abs(x) >= 1000) return Math.round(x).toLocaleString("en-US");
    const s = x.toPrecision(digits || 3);
    return s.includes("e") ? s : String(+s);
  }
  function pct(x) { return x === null || x === undefined ? "—" : (x >= 10 ? x.toFixed(0) : x.toPrecision(2)) + "%"; }
  function color(v) { return D.colors[v] || "#555"; }
  function visible(i) {
    if (i === null || i === undefined) return false;
    const f = I[i].f;
    for (let j = 0; j < f.length; j++) if (state.off[j].has(f[j])) return false;
    return !state.search || E[i].name.toLowerCase().includes(state.search);
  }
  function redraw() {
    redraws.forEach(r => r());
    let n = 0;
    for (let i = 0; i < E.length; i++) if (visible(i)) n++;
    status.textContent = `${n} of ${E.length} entries pass the filters`;
    syncChips();
  }

  // ---- scales, axes, markers ---------------------------------------------------------------
  function logScale(lo, hi, a, b) {
    const l0 = Math.log(lo), l1 = Math.log(hi);
    const f = v => a + (Math.log(v) - l0) / (l1 - l0) * (b - a);
    f.inv = p => Math.exp(l0 + (p - a) / (b - a) * (l1 - l0));
    f.lo = lo; f.hi = hi;
    return f;
  }
  function logTicks(lo, hi) {
    const span = hi / lo;
    const subs = span < 8 ? [1, 1.5, 2, 3, 5, 7] : span < 300 ? [1, 2, 5] : [1];
    const out = [];
    for (let k = Math.floor(Math.log10(lo)) - 1; k <= Math.ceil(Math.log10(hi)); k++)
      for (const s of subs) {
        const v = s * Math.pow(10, k);
        if (v >= lo * 0.999 && v <= hi * 1.001) out.push(+v.toPrecision(6));
      }
    if (out.length > 14) return out.filter((_, k) => k % 2 === 0);
    return out;
  }
  const SHAPES = ["circle", "square", "triangle", "diamond", "triangle-down", "plus", "cross"];
  function shapePath(shape, x, y, r) {
    switch (shape) {
      case "square": { const s = r * 0.85; return `M${x - s},${y - s}h${2 * s}v${2 * s}h${-2 * s}Z`; }
      case "triangle": return `M${x},${y - r * 1.2}L${x + r * 1.1},${y + r * 0.8}L${x - r * 1.1},${y + r * 0.8}Z`;
      case "triangle-down": return `M${x},${y + r * 1.2}L${x + r * 1.1},${y - r * 0.8}L${x - r * 1.1},${y - r * 0.8}Z`;
      case "diamond": return `M${x},${y - r * 1.25}L${x + r},${y}L${x},${y + r * 1.25}L${x - r},${y}Z`;
      case "plus": { const a = r * 0.4, b = r * 1.1; return `M${x - a},${y - b}h${2 * a}v${b - a}h${b - a}v${2 * a}h${a - b}v${b - a}h${-2 * a}v${a - b}h${a - b}v${-2 * a}h${b - a}Z`; }
      case "cross": { const a = r * 0.45, b = r; return `M${x - b},${y - b + a}L${x - b + a},${y - b}L${x},${y - a}L${x + b - a},${y - b}L${x + b},${y - b + a}L${x + a},${y}L${x + b},${y + b - a}L${x + b - a},${y + b}L${x},${y + a}L${x - b + a},${y + b}L${x - b},${y + b - a}L${x - a},${y}Z`; }
      default: return `M${x - r},${y}a${r},${r} 0 1,0 ${2 * r},0a${r},${r} 0 1,0 ${-2 * r},0Z`;
    }
  }
  function markerShape(c, i) {
    const v = c.marker_by === "mask" ? E[i].mask : String(E[i].d);
    const k = (c.marker_values || []).indexOf(v);
    return SHAPES[(k < 0 ? 0 : k) % SHAPES.length];
  }
  // A plot frame: returns {g, x, y, w, h} with gridlines, ticks and labels drawn.
  function frame(svg, box, xs, ys, o) {
    const { left, top, w, h } = box;
    const g = sv("g", {}, svg);
    sv("rect", { x: left, y: top, width: w, height: h, class: "plotbg" }, g);
    const xt = o.xticks || logTicks(xs.lo, xs.hi), yt = logTicks(ys.lo, ys.hi);
    for (const t of xt) {
      const px = xs(t);
      sv("line", { x1: px, x2: px, y1: top, y2: top + h, class: "grid" }, g);
      if (o.xtickLabels !== false) sv("text", { x: px, y: top + h + 14, class: "tick", "text-anchor": "middle" }, g, fmtNum(t));
    }
    for (const t of yt) {
      const py = ys(t);
      sv("line", { x1: left, x2: left + w, y1: py, y2: py, class: "grid" }, g);
      sv("text", { x: left - 5, y: py + 3.5, class: "tick", "text-anchor": "end" }, g, fmtNum(t));
    }
    sv("rect", { x: left, y: top, width: w, height: h, class: "plotframe" }, g);
    if (o.xlabel) sv("text", { x: left + w / 2, y: top + h + 32, class: "axlabel", "text-anchor": "middle" }, g, o.xlabel);
    if (o.ylabel) sv("text", { x: 0, y: 0, class: "axlabel", "text-anchor": "middle",
      transform: `translate(${left - 44},${top + h / 2}) rotate(-90)` }, g, o.ylabel);
    if (o.title) sv("text", { x: left + w / 2, y: top - 8, class: "ptitle", "text-anchor": "middle" }, g, o.title);
    const clipId = "clip" + (frame.n = (frame.n || 0) + 1);
    const cp = sv("clipPath", { id: clipId }, g);
    sv("rect", { x: left, y: top, width: w, height: h }, cp);
    const inner = sv("g", { "clip-path": `url(#${clipId})` }, g);
    return inner;
  }
  function point(parent, c, i, x, y, extra) {
    const e = E[i], peer = I[i].peer, col = color(e.variant);
    const shape = peer && c.type === "lines" ? "diamond" : markerShape(c, i);
    const measured = I[i].roof && I[i].roof.source === "measured";
    if (e.err_ok === false)
      sv("circle", { cx: x, cy: y, r: 8.5, class: "ring" }, parent);
    const p = sv("path", {
      d: shapePath(shape, x, y, c.type === "lines" ? 3.6 : 4.6), class: "pt" + (peer ? " peer" : ""),
      "data-i": i, fill: peer ? "none" : col, stroke: peer ? col : (measured ? "#000" : "#fff"),
      "stroke-width": peer ? 1.5 : (measured ? 1.2 : 0.6)
    }, parent);
    if (extra !== undefined) p.setAttribute("data-x", JSON.stringify(extra));
    return p;
  }

  // ---- hover card --------------------------------------------------------------------------
  const tip = el("div", { id: "tip", role: "tooltip" }, document.body);
  let pinned = false;
  function metricRows(e, x) {
    const rows = [];
    if (e.status !== "ok") rows.push(["status", `${e.status}: ${e.error_message || ""}`]);
    if (e.time_ms !== null && e.time_ms !== undefined)
      rows.push(["time", `${fmt(e.time_ms, 4)} ms (min ${fmt(e.time_ms_min)}, max ${fmt(e.time_ms_max)}, cv ${e.time_cv === undefined || e.time_cv === null ? "—" : (100 * e.time_cv).toFixed(1) + "%"})`]);
    if (e.tflops !== null && e.tflops !== undefined) rows.push(["TFLOP/s", fmt(e.tflops, 4)]);
    if (e.gbps !== null && e.gbps !== undefined) rows.push(["GB/s (modeled bytes)", fmt(e.gbps)]);
    if (e.bytes !== undefined) rows.push(["bytes (modeled / minimal)", `${fmt(e.bytes)} / ${fmt(e.bytes_min)}`]);
    if (e.flops !== undefined) rows.push(["FLOPs (useful)", fmt(e.flops)]);
    if (x && x.roof) {
      const r = x.roof;
      rows.push(["intensity", `${fmt(r.intensity)} FLOP/B (${r.source} bytes)`]);
      rows.push(["binding roof", r.roof === null ? r.bound : `${r.bound}: roof ${fmt(r.roof)} TFLOP/s, ` +
        `at ${pct(r.pct)} of it (ridge ${fmt(r.ridge)} FLOP/B, ${r.ceilings} ceilings)`]);
      if (r.bounds_ms) {
        const b = r.bounds_ms, ms = v => v === null || v === undefined ? "unknown" : fmt(v, 3) + " ms";
        rows.push(["lower bounds", `compute ${ms(b.compute)} · memory ${ms(b.memory)} · exp ${ms(b.exp)}` +
          (r.exp_note ? ` (${r.exp_note})` : "")]);
      }
    }
    if (e.rel_err !== undefined) {
      const ok = e.err_ok === true ? " ✓" : e.err_ok === false ? " ✗ over tolerance" : "";
      rows.push(["rel. error", `${fmt(e.rel_err, 2)}${ok} (tolerance ${fmt(e.tolerance)})` +
        (e.e2e_rel_err !== undefined && e.e2e_rel_err !== null ? `; end to end ${fmt(e.e2e_rel_err, 2)}` : "")]);
    }
    if (e.worst_row_err !== undefined && e.worst_row_err !== null) {
      const r = e.worst_row, w = r && typeof r === "object" ? ` at b ${r.b}, h ${r.h}, row ${r.i}` : "";
      rows.push(["worst row", `${fmt(e.worst_row_err, 2)}${w} (tolerance ${fmt(e.row_tolerance)}); ` +
        `${e.rows_checked} of ${e.rows_total} rows checked, ${e.nonfinite_outputs ?? 0} non-finite`]);
    }
    if (e.library) rows.push(["library", e.library]);
    return rows;
  }
  function fieldsTable(list) {  // list of entries (1: one entry, in two columns; 2: A and B side by side)
    const keys = [];
    list.forEach(e => { if (e) Object.keys(e).forEach(k => { if (!keys.includes(k)) keys.push(k); }); });
    keys.sort();
    const val = (e, k) => !e ? "—" : !(k in e) ? "" : JSON.stringify(e[k]);
    if (list.length === 1)
      return `<div class="fields">` + keys.map(k => `<span class="k">${esc(k)}</span><span class="v">${esc(val(list[0], k))}</span>`).join("") + "</div>";
    let h = `<table class="fields"><tr><th></th><th>A</th><th>B</th></tr>`;
    for (const k of keys) {
      const vs = list.map(e => val(e, k));
      h += `<tr${vs[0] !== vs[1] ? ' class="diff"' : ""}><td>${esc(k)}</td>` + vs.map(v => `<td>${esc(v)}</td>`).join("") + "</tr>";
    }
    return h + "</table>";
  }
  function cardHTML(i, extra) {
    const e = E[i], x = I[i];
    let h = `<div class="tn">${esc(e.name)}</div>`;
    h += `<div class="tk">${esc([e.variant, e.backend, e.dtype, "mask " + e.mask, "d " + e.d, "pass " + x.f[FACET.pass]].join(" · "))}` +
      `${x.peer ? " · library peer on " + esc(x.on) : ""} · run ${esc(x.run)}</div>`;
    if (extra && extra.ratio !== undefined) {
      const b = E[extra.base];
      h += `<div class="tx">speedup ${fmt(extra.ratio)}× over ${esc(b.variant)} (${fmt(b.time_ms, 4)} ms, Br${b.Br} Bc${b.Bc})</div>`;
    }
    h += `<table class="metrics">` + metricRows(e, x).map(r => `<tr><td>${esc(r[0])}</td><td>${esc(r[1])}</td></tr>`).join("") + "</table>";
    h += `<div class="fh">every field of the entry</div>` + fieldsTable([e]);
    return h;
  }
  function compareCardHTML(row) {
    const a = row.a === null ? null : E[row.a], b = row.b === null ? null : E[row.b];
    let h = `<div class="tn">${esc(row.name)}</div>`;
    h += `<div class="tx verdict-${row.verdict.replace(/ /g, "-")}">${esc(row.verdict)}` +
      (row.ratio !== null ? ` — ratio B/A ${fmt(row.ratio, 4)}, noise band ${fmt(1 / row.limit, 4)}–${fmt(row.limit, 4)}` : "") + "</div>";
    h += `<table class="metrics"><tr><td></td><td>A</td><td>B</td></tr>` +
      [["time (ms)", e => e && e.status === "ok" ? fmt(e.time_ms, 4) : e ? e.status : "—"],
       ["cv", e => e && e.time_cv !== null && e.time_cv !== undefined ? (100 * e.time_cv).toFixed(1) + "%" : "—"],
       ["TFLOP/s", e => e && e.tflops !== null && e.tflops !== undefined ? fmt(e.tflops, 4) : "—"]]
        .map(([k, f]) => `<tr><td>${k}</td><td>${f(a)}</td><td>${f(b)}</td></tr>`).join("") + "</table>";
    h += `<div class="fh">every field of both entries (differences highlighted)</div>` + fieldsTable([a, b]);
    return h;
  }
  function showCard(html, ev) {
    tip.innerHTML = html;
    tip.style.display = "block";
    place(ev);
  }
  function place(ev) {
    const pad = 14, r = tip.getBoundingClientRect();
    let x = ev.clientX + pad, y = ev.clientY + pad;
    if (x + r.width > window.innerWidth - 4) x = Math.max(4, ev.clientX - pad - r.width);
    if (y + r.height > window.innerHeight - 4) y = Math.max(4, window.innerHeight - 4 - r.height);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }
  function hideCard() { if (!pinned) tip.style.display = "none"; }
  function cardFor(target) {
    if (target.dataset.row !== undefined) return compareCardHTML(COMPARE_ROWS[+target.dataset.row]);
    const extra = target.dataset.x ? JSON.parse(target.dataset.x) : undefined;
    return cardHTML(+target.dataset.i, extra);
  }
  let COMPARE_ROWS = [];
  document.addEventListener("mouseover", ev => {
    const t = ev.target.closest && ev.target.closest("[data-i],[data-row]");
    if (!t || pinned) return;
    showCard(cardFor(t), ev);
  });
  document.addEventListener("mousemove", ev => {
    if (!pinned && tip.style.display === "block" && ev.target.closest && ev.target.closest("[data-i],[data-row]")) place(ev);
  });
  document.addEventListener("mouseout", ev => {
    const t = ev.target.closest && ev.target.closest("[data-i],[data-row]");
    if (t && !(ev.relatedTarget && t.contains(ev.relatedTarget))) hideCard();
  });
  document.addEventListener("click", ev => {
    const t = ev.target.closest && ev.target.closest("[data-i],[data-row]");
    if (t) {  // click pins the card (select and copy from it); a click elsewhere or Esc releases it
      pinned = false;
      showCard(cardFor(t) + `<div class="pin">pinned — click elsewhere or press Esc to close</div>`, ev);
      pinned = true;
    } else if (!tip.contains(ev.target)) { pinned = false; hideCard(); }
  });
  document.addEventListener("keydown", ev => { if (ev.key === "Escape") { pinned = false; hideCard(); } });

  // ---- page skeleton -----------------------------------------------------------------------
  const page = el("div", { id: "page" }, document.body);
  el("h1", {}, page, D.title);
  const meta = el("table", { class: "meta" }, page);
  D.meta.forEach(([k, v]) => { const tr = el("tr", {}, meta); el("th", {}, tr, k); el("td", {}, tr, v); });
  if (D.links.length) {
    const p = el("p", { class: "links" }, page, "Text report: ");
    D.links.forEach(([href, text]) => el("a", { href: href }, p, text));
  }
  const filters = el("div", { id: "filters" }, page);
  const chips = [];
  D.facets.forEach((f, j) => {
    const row = el("div", { class: "facet", "data-facet": f.key }, filters);
    el("span", { class: "flabel" }, row, f.label);
    const all = el("button", { class: "mini", type: "button" }, row, "all");
    const none = el("button", { class: "mini", type: "button" }, row, "none");
    all.onclick = () => { state.off[j].clear(); redraw(); };
    none.onclick = () => { f.values.forEach(v => state.off[j].add(v)); redraw(); };
    f.values.forEach(v => {
      const b = el("button", { class: "chip", type: "button", "data-value": v }, row);
      if (f.key === "variant") el("span", { class: "sw" + (PEERS.has(v) ? " hollow" : ""), style: `--c:${color(v)}` }, b);
      b.appendChild(document.createTextNode(v));
      b.onclick = ev => toggle(j, v, ev.shiftKey || ev.altKey, f.values);
      chips.push([j, v, b]);
    });
  });
  const srow = el("div", { class: "facet" }, filters);
  el("span", { class: "flabel" }, srow, "name contains");
  const search = el("input", { type: "search", id: "search", placeholder: "e.g. Nq:4096 or flash2/", size: 30 }, srow);
  search.oninput = () => { state.search = search.value.trim().toLowerCase(); redraw(); };
  el("span", { class: "hint" }, srow, "Click a chip or a legend entry to hide or show it; shift-click shows it alone. " +
    "Hover a point for its entry; click to pin the card.");
  const status = el("div", { id: "status" }, page);

  function toggle(j, v, only, values) {
    const off = state.off[j];
    if (only) {
      const alone = values.every(u => u === v ? !off.has(u) : off.has(u));
      values.forEach(u => { if (alone || u === v) off.delete(u); else off.add(u); });
    } else if (off.has(v)) off.delete(v); else off.add(v);
    redraw();
  }
  function syncChips() {
    chips.forEach(([j, v, b]) => b.classList.toggle("off", state.off[j].has(v)));
    document.querySelectorAll(".legend [data-variant]").forEach(b =>
      b.classList.toggle("off", state.off[VJ].has(b.dataset.variant)));
  }
  function facetValues(j) { return D.facets[j].values; }

  // ---- legends -----------------------------------------------------------------------------
  function legend(host, c, variants, extraSections) {
    const lg = el("div", { class: "legend" }, host);
    const ours = variants.filter(v => !PEERS.has(v)), libs = variants.filter(v => PEERS.has(v));
    const section = (title, items) => {
      if (!items.length) return;
      el("div", { class: "lgt" }, lg, title);
      items.forEach(v => {
        const b = el("button", { type: "button", class: "lgi", "data-variant": v, title: "click: hide/show; shift-click: only this" }, lg);
        el("span", { class: "sw" + (PEERS.has(v) ? " hollow" : ""), style: `--c:${color(v)}` }, b);
        b.appendChild(document.createTextNode(v));
        b.onclick = ev => toggle(VJ, v, ev.shiftKey || ev.altKey, facetValues(VJ));
      });
    };
    section("variant", ours);
    section(c.type === "lines" ? "library peers (dotted, hollow)" : "library peers (hollow; minimal-IO bytes)", libs);
    (extraSections || []).forEach(([title, items]) => {
      if (!items.length) return;
      el("div", { class: "lgt" }, lg, title);
      items.forEach(it => {
        const row = el("div", { class: "lgs" }, lg);
        const s = sv("svg", { width: 26, height: 12 }, row);
        it.draw(s);
        row.appendChild(document.createTextNode(it.label));
      });
    });
    syncChips();
    return lg;
  }
  function markerItems(c) {
    return (c.marker_values || []).map((v, k) => ({
      label: c.marker_by === "d" ? `d=${v}` : v,
      draw: s => sv("path", { d: shapePath(SHAPES[k % SHAPES.length], 13, 6, 4.2), fill: "#666" }, s)
    }));
  }

  // ---- roofline ----------------------------------------------------------------------------
  function renderRoofline(c, host) {
    const W = 760, H = 470, box = { left: 62, top: 26, w: W - 80, h: H - 74 };
    const xsAll = c.points.map(p => p[1]), ysAll = c.points.map(p => p[2]);
    const ridges = c.roofs.filter(r => r.ridge).map(r => r.ridge), peaks = c.roofs.filter(r => r.peak).map(r => r.peak)
      .concat((c.exp_marks || []).map(m => m[2]));
    const full = [Math.min(...xsAll, ...ridges) / 2.5, Math.max(...xsAll, ...ridges) * 2.5,
                  Math.min(...ysAll) / 3, Math.max(...ysAll, ...peaks) * 2];
    let dom = full.slice();
    const wrap = el("div", { class: "figrow" }, host);
    const svg = sv("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "chart", "data-chart": c.id }, wrap);
    const side = el("div", { class: "side" }, wrap);
    function draw() {
      svg.textContent = "";
      const xs = logScale(dom[0], dom[1], box.left, box.left + box.w), ys = logScale(dom[2], dom[3], box.top + box.h, box.top);
      const g = frame(svg, box, xs, ys, { xlabel: c.x_label, ylabel: c.y_label, title: c.title });
      const firstRidge = c.roofs.find(r => r.ridge);
      if (firstRidge) {
        const rx = xs(firstRidge.ridge);
        sv("line", { x1: rx, x2: rx, y1: box.top, y2: box.top + box.h, class: "ridgeline" }, g);
        sv("text", { x: rx - 6, y: box.top + box.h - 6, class: "regime", "text-anchor": "end" }, g, "← memory-bound");
        sv("text", { x: rx + 6, y: box.top + box.h - 6, class: "regime" }, g, "compute-bound →");
      }
      for (const r of c.roofs) {
        const cls = r.kind === "measured" ? "roof measured" : "roof theoretical";
        if (r.bw) {
          const xEnd = r.peak ? r.peak * 1e3 / r.bw : dom[1];
          const x0 = dom[0] / 4;
          const l = sv("line", { x1: xs(x0), y1: ys(r.bw * x0 / 1e3), x2: xs(xEnd), y2: ys(r.bw * xEnd / 1e3), class: cls + " bw" }, g);
          sv("title", {}, l, r.label_bw);
        }
        if (r.peak) {
          const x0 = r.ridge || dom[0] / 4;
          const l = sv("line", { x1: xs(x0), y1: ys(r.peak), x2: xs(dom[1] * 4), y2: ys(r.peak), class: cls + " peak" }, g);
          sv("title", {}, l, r.label_peak);
          if (r.ridge) {
            const d = sv("path", { d: shapePath("diamond", xs(r.ridge), ys(r.peak), 5), class: "ridge " + r.kind }, g);
            sv("title", {}, d, `ridge (${r.kind}) ${fmt(r.ridge)} FLOP/B`);
          }
        }
      }
      // The exp roof where it binds: a tick at the point's exp roof, dotted down to the point.
      for (const [i, x, y] of c.exp_marks || []) {
        if (!visible(i)) continue;
        sv("line", { x1: xs(x), x2: xs(x), y1: ys(E[i].tflops), y2: ys(y), class: "expdrop" }, g);
        const l = sv("line", { x1: xs(x / 1.3), x2: xs(x * 1.3), y1: ys(y), y2: ys(y), class: "roof exp" }, g);
        sv("title", {}, l, `exp roof of ${E[i].name}: ${fmt(y)} TFLOP/s`);
      }
      if (!c.roofs.length) sv("text", { x: box.left + 8, y: box.top + 16, class: "warn" }, g, "no ceilings in this run's context");
      let n = 0;
      for (const [i, x, y] of c.points) if (visible(i)) { point(g, c, i, xs(x), ys(y)); n++; }
      if (!n) sv("text", { x: box.left + box.w / 2, y: box.top + box.h / 2, class: "empty", "text-anchor": "middle" }, g, "no point passes the filters");
      zoomable(svg, box, xs, ys, d => { dom = d; draw(); }, () => { dom = full.slice(); draw(); });
    }
    const variants = [...new Set(c.points.map(p => E[p[0]].variant))].sort();
    const ceil = [];
    for (const r of c.roofs) {
      const dash = r.kind === "measured" ? null : "5,3";
      if (r.label_bw) ceil.push({ label: r.label_bw, draw: s => sv("line", { x1: 1, x2: 25, y1: 6, y2: 6, class: "roof bw " + r.kind, "stroke-dasharray": dash }, s) });
      if (r.label_peak) ceil.push({ label: r.label_peak, draw: s => sv("line", { x1: 1, x2: 25, y1: 6, y2: 6, class: "roof peak " + r.kind, "stroke-dasharray": dash }, s) });
      if (r.ridge) ceil.push({ label: `ridge (${r.kind}) ${fmt(r.ridge)} FLOP/B`, draw: s => sv("path", { d: shapePath("diamond", 13, 6, 4.5), class: "ridge " + r.kind }, s) });
    }
    const rate = c.roofs.find(r => r.exp);
    if ((c.exp_marks || []).length)
      ceil.push({ label: `exp roof of a point it binds (${rate ? rate.label_exp : "exp rate"})`,
        draw: s => sv("line", { x1: 1, x2: 25, y1: 6, y2: 6, class: "roof exp" }, s) });
    else if (rate)
      ceil.push({ label: `${rate.label_exp}: binds no point here`, draw: s => sv("line", { x1: 1, x2: 25, y1: 6, y2: 6, class: "roof exp faint" }, s) });
    const marks = markerItems(c);
    if (c.points.some(p => E[p[0]].err_ok === false))
      marks.push({ label: "above error tolerance", draw: s => sv("circle", { cx: 13, cy: 6, r: 5, class: "ring" }, s) });
    if (c.points.some(p => I[p[0]].roof && I[p[0]].roof.source === "measured"))
      marks.push({ label: "measured DRAM bytes", draw: s => sv("path", { d: shapePath("circle", 13, 6, 4), fill: "#bbb", stroke: "#000" }, s) });
    legend(side, c, variants, [[c.marker_by === "d" ? "head dim" : "mask", marks], ["ceilings", ceil]]);
    el("div", { class: "hint" }, side, "Drag a box on the chart to zoom; double-click to reset.");
    redraws.push(() => { host.closest("section").hidden = isDtypeOff(c.dtype); draw(); });
  }
  function isDtypeOff(dt) { return state.off[FACET.dtype].has(dt); }
  function zoomable(svg, box, xs, ys, onZoom, onReset) {
    let start = null, rect = null;
    const inBox = (x, y) => x >= box.left && x <= box.left + box.w && y >= box.top && y <= box.top + box.h;
    const pos = ev => { const r = svg.getBoundingClientRect(); return [(ev.clientX - r.left) * box.scale(r), (ev.clientY - r.top) * box.scale(r)]; };
    box.scale = r => svg.viewBox.baseVal.width / r.width;
    svg.onmousedown = ev => {
      if (ev.target.closest("[data-i]")) return;
      const [x, y] = pos(ev);
      if (!inBox(x, y)) return;
      start = [x, y];
      rect = sv("rect", { class: "zoombox", x: x, y: y, width: 0, height: 0 }, svg);
      ev.preventDefault();
    };
    svg.onmousemove = ev => {
      if (!start) return;
      const [x, y] = pos(ev);
      rect.setAttribute("x", Math.min(x, start[0])); rect.setAttribute("y", Math.min(y, start[1]));
      rect.setAttribute("width", Math.abs(x - start[0])); rect.setAttribute("height", Math.abs(y - start[1]));
    };
    svg.onmouseup = ev => {
      if (!start) return;
      const [x, y] = pos(ev), s = start;
      start = null;
      if (Math.abs(x - s[0]) < 6 || Math.abs(y - s[1]) < 6) { rect.remove(); return; }
      onZoom([xs.inv(Math.min(x, s[0])), xs.inv(Math.max(x, s[0])), ys.inv(Math.max(y, s[1])), ys.inv(Math.min(y, s[1]))]);
    };
    svg.ondblclick = onReset;
  }

  // ---- TFLOP/s and speedup against N (small multiples) ------------------------------------
  function renderLines(c, host) {
    const PW = 330, PH = 250, box = { left: 58, top: 24, w: PW - 72, h: PH - 66 };
    const all = [];
    c.panels.forEach(p => p.series.forEach(s => s.points.forEach(q => all.push(q))));
    const yv = all.map(q => q[2]).concat(c.hline ? [c.hline] : []);
    const ylo = Math.min(...yv) / 1.35, yhi = Math.max(...yv) * 1.35;
    const xlo = Math.min(...c.x_ticks) / 1.3, xhi = Math.max(...c.x_ticks) * 1.3;
    const wrap = el("div", { class: "figrow" }, host);
    const grid = el("div", { class: "panels", style: `grid-template-columns: repeat(${c.cols}, ${PW}px)` }, wrap);
    const side = el("div", { class: "side" }, wrap);
    const svgs = c.panels.map(p => sv("svg", { width: PW, height: PH, viewBox: `0 0 ${PW} ${PH}`, class: "chart panel", "data-chart": c.id, "data-panel": p.title }, grid));
    function draw() {
      c.panels.forEach((p, k) => {
        const svg = svgs[k];
        svg.textContent = "";
        const xs = logScale(xlo, xhi, box.left, box.left + box.w), ys = logScale(ylo, yhi, box.top + box.h, box.top);
        const g = frame(svg, box, xs, ys, { xticks: c.x_ticks, xlabel: c.x_label, ylabel: c.y_label, title: p.title });
        if (c.hline) sv("line", { x1: box.left, x2: box.left + box.w, y1: ys(c.hline), y2: ys(c.hline), class: "hline" }, g);
        let n = 0;
        for (const s of p.series) {
          const pts = s.points.filter(q => visible(q[0]));
          if (!pts.length) continue;
          sv("polyline", { points: pts.map(q => `${xs(q[1])},${ys(q[2])}`).join(" "), class: "series " + s.dash,
            stroke: color(s.variant), "data-series": s.key }, g);
          for (const q of pts) {
            point(g, c, q[0], xs(q[1]), ys(q[2]), q.length > 3 ? { ratio: q[2], base: q[3] } : undefined);
            n++;
          }
        }
        svg.style.display = n ? "" : "none";
      });
      const any = svgs.some(s => s.style.display !== "none");
      empty.hidden = any;
    }
    const empty = el("div", { class: "empty", hidden: "" }, host, "No point passes the filters.");
    const variants = [...new Set(all.map(q => E[q[0]].variant))].sort();
    const extra = [];
    if (c.hline) extra.push(["baseline", [{ label: `${c.baseline} = 1`, draw: s => sv("line", { x1: 1, x2: 25, y1: 6, y2: 6, class: "hline" }, s) }]]);
    else if (c.panels.some(p => p.series.some(s => s.dash === "dashed")))
      extra.push(["line", [{ label: "baseline (dashed)", draw: s => sv("line", { x1: 1, x2: 25, y1: 6, y2: 6, class: "series dashed", stroke: "#555" }, s) }]]);
    legend(side, c, variants, extra);
    redraws.push(() => { host.closest("section").hidden = isDtypeOff(c.dtype); draw(); });
  }

  // ---- versus libraries table --------------------------------------------------------------
  function renderVersus(c, host) {
    if (!c.rows.length) { el("p", {}, host, "No problem has both an attnbench entry and a library peer that passed (no library peers in this run, or none on a shared problem)."); return; }
    const t = el("table", { class: "data" }, host);
    const hd = el("tr", {}, el("thead", {}, t));
    ["dtype", "problem", "on", "best attnbench", "time (ms)", "best library", "time (ms)", "attnbench / library"]
      .forEach(h => el("th", {}, hd, h));
    const tb = el("tbody", {}, t);
    const sum = el("p", { class: "summary" }, host);
    function draw() {
      tb.textContent = "";
      const shown = [];
      for (const [o, l, r] of c.rows) {
        if (!visible(o) || !visible(l)) continue;
        shown.push(r);
        const a = E[o], b = E[l];
        const tr = el("tr", { class: r > 1 ? "libfaster" : "" }, tb);
        el("td", {}, tr, a.dtype);
        el("td", {}, tr, `B${a.B} H${a.H} Hkv${a.Hkv} Nq${a.Nq} Nkv${a.Nkv} d${a.d} ${a.mask}`);
        el("td", {}, tr, I[o].on);
        el("td", { "data-i": o, class: "ent" }, tr, `${a.variant} (Br${a.Br} Bc${a.Bc})`);
        el("td", { class: "num" }, tr, fmt(a.time_ms));
        el("td", { "data-i": l, class: "ent" }, tr, b.variant);
        el("td", { class: "num" }, tr, fmt(b.time_ms));
        el("td", { class: "num" }, tr, r.toFixed(2) + "×");
      }
      shown.sort((x, y) => x - y);
      sum.textContent = shown.length ? `${shown.length} of ${c.rows.length} problems shown: median ratio ${shown[shown.length >> 1].toFixed(2)}× ` +
        `(range ${shown[0].toFixed(2)}–${shown[shown.length - 1].toFixed(2)}×); the library is faster on ${shown.filter(r => r > 1).length}. ` +
        "A row shows when both its entries pass the filters." : "No row passes the filters (a row needs both its entries to pass).";
    }
    redraws.push(draw);
  }

  // ---- approximations beside exact attention ----------------------------------------------
  // Per problem (report.md's comparison section): a scatter of every approximation's distance to
  // exact softmax attention against its time relative to the fastest exact row, then one table
  // per problem. Rows: [entry, kind, distance, bound, speed vs exact].
  function renderComparison(c, host) {
    const W = 620, H = 360, box = { left: 62, top: 26, w: W - 80, h: H - 74 };
    const pts = c.problems.flat().filter(r => r[2] !== null && r[2] > 0 && r[4] !== null && r[4] > 0);
    const wrap = el("div", { class: "figrow" }, host);
    const svg = sv("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "chart", "data-chart": "comparison" }, wrap);
    const side = el("div", { class: "side" }, wrap);
    const xv = pts.map(r => r[4]), yv = pts.map(r => r[2]);
    const dom = pts.length ? [Math.min(...xv, 1) / 1.6, Math.max(...xv, 1) * 1.6, Math.min(...yv) / 1.6, Math.max(...yv) * 1.6] : [0.1, 10, 0.01, 1];
    legend(side, c, [...new Set(pts.map(r => E[r[0]].variant))].sort(),
      [["marks", [{ label: "speed 1: as fast as the fastest exact row", draw: s => sv("line", { x1: 13, x2: 13, y1: 0, y2: 12, class: "hline" }, s) }]]]);
    const tables = el("div", {}, host);
    const sum = el("p", { class: "summary" }, host);
    function draw() {
      svg.textContent = "";
      const xs = logScale(dom[0], dom[1], box.left, box.left + box.w), ys = logScale(dom[2], dom[3], box.top + box.h, box.top);
      const g = frame(svg, box, xs, ys, { xlabel: "speed vs exact (fastest exact time / time; right = faster)",
        ylabel: "distance to exact attention (rel-L2)", title: "Approximations: what the speed costs in accuracy" });
      sv("line", { x1: xs(1), x2: xs(1), y1: box.top, y2: box.top + box.h, class: "hline" }, g);
      let n = 0;
      for (const r of pts) {
        if (!visible(r[0])) continue;
        n++;
        sv("path", { d: shapePath(I[r[0]].peer ? "diamond" : "circle", xs(r[4]), ys(r[2]), 4.5), class: "pt",
          fill: I[r[0]].peer ? "#fff" : color(E[r[0]].variant), stroke: color(E[r[0]].variant), "stroke-width": I[r[0]].peer ? 1.6 : 0.6, "data-i": r[0] }, g);
      }
      if (!n) sv("text", { x: W / 2, y: box.top + 20, class: "empty", "text-anchor": "middle" }, g, "no approximation passes the filters");
      tables.textContent = "";
      let shown = 0;
      for (const rows of c.problems) {
        const vis = rows.filter(r => visible(r[0]));
        if (!vis.length) continue;
        shown++;
        const e0 = E[rows[0][0]];
        el("h3", {}, tables, `${e0.dtype} B${e0.B} H${e0.H} Hkv${e0.Hkv} Nq${e0.Nq} Nkv${e0.Nkv} d${e0.d} ${e0.mask}`);
        const t = el("table", { class: "data" }, tables);
        const hd = el("tr", {}, el("thead", {}, t));
        ["variant", "on", "kind", "time (ms)", "TFLOP/s", "distance to exact", "bound", "speed vs exact"].forEach(h => el("th", {}, hd, h));
        const tb = el("tbody", {}, t);
        for (const [i, kind, dist, bound, speed] of vis) {
          const tr = el("tr", {}, tb);
          el("td", { "data-i": i, class: "ent" }, tr, E[i].variant);
          el("td", {}, tr, I[i].on);
          el("td", {}, tr, kind);
          el("td", { class: "num" }, tr, fmt(E[i].time_ms));
          el("td", { class: "num" }, tr, fmt(E[i].tflops));
          el("td", { class: "num" }, tr, dist === null ? "—" : fmt(dist, 2));
          el("td", {}, tr, bound);
          el("td", { class: "num" }, tr, speed === null ? "—" : speed.toFixed(2) + "×");
        }
      }
      sum.textContent = `${shown} of ${c.problems.length} problems shown (a row shows when its entry passes the filters). ` +
        "The distance is information, never a pass/fail: an approximation is checked against the fp64 evaluation of the same approximation; library peers draw their own random parameters, so theirs is their only figure.";
    }
    redraws.push(draw);
  }

  // ---- bound breakdown ---------------------------------------------------------------------
  // Per variant's best entry: each roof's lower bound on its time as % of the measured time; the
  // longest bar binds (outlined), 100% = at that roof. An unknown exp roof is written, not drawn.
  function renderBounds(c, host) {
    const rows = c.rows, W = 760, rowH = 54, left = 250, right = 40, top = 24;
    const H = top + rows.length * rowH + 40;
    const wrap = el("div", { class: "figrow" }, host);
    const svg = sv("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "chart", "data-chart": c.id }, wrap);
    const side = el("div", { class: "side" }, wrap);
    function draw() {
      svg.textContent = "";
      const shown = rows.filter(r => visible(r[0]));
      const vmax = Math.max(100, ...shown.flatMap(r => c.roofs.map(k => r[1][k] || 0))) * 1.2;
      const xs = v => left + v / vmax * (W - left - right);
      const g = sv("g", {}, svg);
      sv("text", { x: left + (W - left - right) / 2, y: 14, class: "ptitle", "text-anchor": "middle" }, g, c.title);
      sv("line", { x1: xs(100), x2: xs(100), y1: top, y2: top + shown.length * rowH, class: "hline" }, g);
      sv("text", { x: xs(100) + 4, y: top + 10, class: "tick" }, g, "measured time");
      shown.forEach((r, n) => {
        const [i, pcts, binding, note] = r, y0 = top + n * rowH, e = E[i];
        sv("text", { x: left - 8, y: y0 + 20, class: "tick", "text-anchor": "end", "data-i": i }, g, e.variant);
        sv("text", { x: left - 8, y: y0 + 33, class: "tick small", "text-anchor": "end", "data-i": i }, g,
          `Nq${e.Nq} Nkv${e.Nkv} d${e.d} ${e.mask} Br${e.Br} Bc${e.Bc}`);
        c.roofs.forEach((k, j) => {
          const y = y0 + 6 + j * 15, v = pcts[k];
          if (v === null || v === undefined) {
            sv("text", { x: xs(0) + 4, y: y + 10, class: "tick unknown" }, g, `${k}: unknown${k === "exp" && note ? " — " + note : ""}`);
            return;
          }
          sv("rect", { x: xs(0), y: y, width: Math.max(1, xs(v) - xs(0)), height: 12, "data-i": i,
            class: `bbar ${k}` + (k === binding ? " binding" : "") }, g);
          sv("text", { x: xs(v) + 4, y: y + 10, class: "tick" + (k === binding ? " strong" : "") }, g,
            `${pct(v)}${k === binding ? " ← " + k + "-bound" : ""}`);
        });
      });
      if (!shown.length) sv("text", { x: W / 2, y: top + 20, class: "empty", "text-anchor": "middle" }, g, "no row passes the filters");
    }
    const items = c.roofs.map(k => ({ label: { compute: "compute: FLOPs / peak", memory: "memory: bytes / bandwidth", exp: "exp: exps / exp rate" }[k],
      draw: s => sv("rect", { x: 1, y: 1, width: 24, height: 10, class: `bbar ${k} binding` }, s) }));
    legend(side, c, [...new Set(rows.map(r => E[r[0]].variant))].sort(), [["lower bounds (% of measured time)", items]]);
    redraws.push(draw);
  }

  // ---- every plotted entry (sortable) ------------------------------------------------------
  function renderEntries(host) {
    const cols = [["name", i => E[i].name], ["time (ms)", i => E[i].time_ms], ["TFLOP/s", i => E[i].tflops],
      ["GB/s", i => E[i].gbps], ["intensity", i => I[i].roof ? I[i].roof.intensity : null],
      ["bound", i => I[i].roof ? I[i].roof.bound : ""], ["% of roof", i => I[i].roof ? I[i].roof.pct : null],
      ["rel. error", i => E[i].rel_err], ["worst row", i => E[i].worst_row_err]];
    const det = el("details", {}, host);
    const sm = el("summary", {}, det, "Every entry that ran (sortable; hover a row for its entry)");
    const t = el("table", { class: "data" }, det);
    const hd = el("tr", {}, el("thead", {}, t));
    const tb = el("tbody", {}, t);
    let sortBy = 2, desc = true;
    cols.forEach(([h], k) => {
      const th = el("th", { class: "sortable" }, hd, h);
      th.onclick = () => { desc = sortBy === k ? !desc : k !== 0; sortBy = k; draw(); };
    });
    function draw() {
      if (!det.open) return;
      tb.textContent = "";
      const ids = [];
      for (let i = 0; i < E.length; i++) if (E[i].status === "ok" && visible(i)) ids.push(i);
      const f = cols[sortBy][1];
      ids.sort((a, b) => { const x = f(a), y = f(b); const r = x === y ? 0 : x === null ? 1 : y === null ? -1 : x < y ? -1 : 1; return desc ? -r : r; });
      for (const i of ids) {
        const tr = el("tr", { "data-i": i }, tb);
        cols.forEach(([h, g], k) => {
          const v = g(i);
          el("td", { class: k ? "num" : "mono" }, tr, k === 6 ? pct(v) : k === 5 || k === 0 ? v : fmt(v));
        });
      }
      sm.textContent = `Every entry that ran: ${ids.length} pass the filters (sortable; hover a row for its entry)`;
    }
    det.addEventListener("toggle", draw);
    redraws.push(draw);
  }

  // ---- compare: ratio B/A with its noise band ---------------------------------------------
  const VERDICT_COLOR = { "slower": "#D62728", "now failed": "#D62728", "faster": "#2CA02C", "same": "#7F7F7F" };
  function rowVisible(r) {
    return visible(r.b !== null ? r.b : r.a) && !state.verdictOff.has(r.verdict) && (!state.onlyReg || r.regression);
  }
  function renderCompare(c, host) {
    COMPARE_ROWS = c.rows;
    const W = 760, H = 430, box = { left: 62, top: 26, w: W - 80, h: H - 74 };
    const pts = c.rows.map((r, k) => [k, r]).filter(([, r]) => r.ratio !== null);
    const wrap = el("div", { class: "figrow" }, host);
    const svg = sv("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "chart", "data-chart": "compare" }, wrap);
    const side = el("div", { class: "side" }, wrap);
    const tA = pts.map(([, r]) => E[r.a].time_ms);
    const yv = pts.flatMap(([, r]) => [r.ratio, r.limit, 1 / r.limit]);
    const dom = pts.length ? [Math.min(...tA) / 1.6, Math.max(...tA) * 1.6, Math.min(...yv) / 1.15, Math.max(...yv) * 1.15] : [1, 10, 0.5, 2];
    const lg = el("div", { class: "legend" }, side);
    el("div", { class: "lgt" }, lg, "verdict");
    const verdicts = [...new Set(c.rows.map(r => r.verdict))];
    verdicts.forEach(v => {
      const b = el("button", { type: "button", class: "lgi", "data-verdict": v }, lg);
      el("span", { class: "sw", style: `--c:${VERDICT_COLOR[v] || "#BBB"}` }, b);
      b.appendChild(document.createTextNode(`${v} (${c.rows.filter(r => r.verdict === v).length})`));
      b.onclick = () => { if (state.verdictOff.has(v)) state.verdictOff.delete(v); else state.verdictOff.add(v); redraw(); };
    });
    el("div", { class: "lgt" }, lg, "marks");
    [["noise band: 1/limit … limit", s => sv("line", { x1: 13, x2: 13, y1: 0, y2: 12, class: "band" }, s)],
     ["ratio 1 (no change)", s => sv("line", { x1: 1, x2: 25, y1: 6, y2: 6, class: "hline" }, s)]].forEach(([label, d]) => {
      const row = el("div", { class: "lgs" }, lg); d(sv("svg", { width: 26, height: 12 }, row)); row.appendChild(document.createTextNode(label));
    });
    const only = el("label", { class: "lgs" }, lg);
    const cb = el("input", { type: "checkbox", id: "onlyreg" }, only);
    only.appendChild(document.createTextNode(" regressions only"));
    cb.onchange = () => { state.onlyReg = cb.checked; redraw(); };
    const t = el("table", { class: "data" }, host);
    const hd = el("tr", {}, el("thead", {}, t));
    ["configuration", "time A (ms)", "time B (ms)", "ratio B/A", "noise band", "cv A", "cv B", "verdict"].forEach(h => el("th", {}, hd, h));
    const tb = el("tbody", {}, t);
    function draw() {
      svg.textContent = "";
      const xs = logScale(dom[0], dom[1], box.left, box.left + box.w), ys = logScale(dom[2], dom[3], box.top + box.h, box.top);
      const g = frame(svg, box, xs, ys, { xlabel: "time in A (ms)", ylabel: "ratio time B / time A", title: "Per configuration: ratio B/A and its noise band (above the band: slower)" });
      sv("line", { x1: box.left, x2: box.left + box.w, y1: ys(1), y2: ys(1), class: "hline" }, g);
      for (const [k, r] of pts) {
        if (!rowVisible(r)) continue;
        const x = xs(E[r.a].time_ms);
        sv("line", { x1: x, x2: x, y1: ys(r.limit), y2: ys(1 / r.limit), class: "band" }, g);
        sv("path", { d: shapePath(r.regression ? "triangle" : "circle", x, ys(r.ratio), r.regression ? 5.5 : 4.2), class: "pt",
          fill: VERDICT_COLOR[r.verdict] || "#BBB", stroke: "#fff", "stroke-width": 0.6, "data-row": k, "data-i": r.b }, g);
      }
      tb.textContent = "";
      c.rows.forEach((r, k) => {
        if (!rowVisible(r)) return;
        const a = r.a === null ? null : E[r.a], b = r.b === null ? null : E[r.b];
        const tr = el("tr", { "data-row": k, class: r.regression ? "regression" : "" }, tb);
        const ms = e => e === null ? "—" : e.status === "ok" ? fmt(e.time_ms, 4) : e.status;
        const cv = e => e && e.status === "ok" && e.time_cv !== null && e.time_cv !== undefined ? (100 * e.time_cv).toFixed(1) + "%" : "—";
        el("td", { class: "mono" }, tr, r.name);
        el("td", { class: "num" }, tr, ms(a));
        el("td", { class: "num" }, tr, ms(b));
        el("td", { class: "num" }, tr, r.ratio === null ? "—" : r.ratio.toFixed(3));
        el("td", { class: "num" }, tr, r.limit === null ? "—" : `${(1 / r.limit).toFixed(3)}–${r.limit.toFixed(3)}`);
        el("td", { class: "num" }, tr, cv(a));
        el("td", { class: "num" }, tr, cv(b));
        el("td", { class: "verdict-" + r.verdict.replace(/ /g, "-") }, tr, r.verdict);
      });
      lg.querySelectorAll("[data-verdict]").forEach(b => b.classList.toggle("off", state.verdictOff.has(b.dataset.verdict)));
    }
    redraws.push(draw);
  }

  // ---- sections ----------------------------------------------------------------------------
  const HEAD = {
    roofline: ["Roofline", "Left of the dotted ridge line a point is memory-bound (roof = bandwidth × intensity), right of it compute-bound (roof = peak); the vertical gap to the roof is what is left. Solid ceilings measured, dashed theoretical; hollow markers are library peers, a red ring marks an output over its error tolerance."],
    tflops_seq: ["TFLOP/s vs sequence length", "Achieved TFLOP/s per variant (fastest tile per problem) against N = Nq = Nkv; the baseline is dashed, library peers dotted."],
    speedup: ["Speedup", "Baseline time / variant time for the same problem in this run; above 1 (the dashed line) the variant is faster. Hover a point for the baseline entry it is paired with."],
    comparison: ["Approximations beside exact attention", "Per problem: the exact softmax rows beside the approximations (Linformer, Performer, routing; their own check is against the fp64 evaluation of the same approximation) and other scores (additive, linear), each at its fastest tile: time, TFLOP/s, the distance of its output to exact fp64 softmax attention and the binding roof; speed = fastest exact time / time (above 1 faster). Hollow diamonds are library peers (performer-pytorch, linformer, routing-transformer)."],
    versus: ["Versus libraries", "Per problem: the fastest attnbench softmax variant (over its tiles) and the fastest library (a peer, or an attnbench row that is one fused library call), from the same run. Ratio = attnbench time / library time: above 1 the library is faster (shaded)."],
    bounds: ["Bound breakdown", "Each variant's best configuration (highest TFLOP/s): its three lower bounds — compute (useful FLOPs / peak), memory (bytes / bandwidth), exp (exponentials / exp rate) — as a share of its measured time. The longest bar is the roof that binds (outlined) and its length the % of bound; 100% = at that roof. An exp roof the file cannot give (no exps, or no exp rate) is written as unknown."],
    compare: ["Compare", "Each configuration present in both runs: ratio = time B / time A. The grey bar is its noise band, 1/limit … limit with limit = 1 + max(threshold, k · (cv_A + cv_B)); a point above it slowed down (regression, red triangle), below it sped up."],
  };
  for (const c of D.charts) {
    const base = c.id.replace(/_(fp32|tf32|fp16|bf16|e4m3|[a-z0-9]+)$/, "");
    const key = Object.keys(HEAD).find(k => c.id === k || c.id.startsWith(k + "_")) || base;
    const sec = el("section", { "data-section": c.id }, page);
    if (c.type === "note") { el("h2", {}, sec, HEAD[key] ? HEAD[key][0] : c.id); el("p", { class: "note" }, sec, c.text); continue; }
    el("h2", {}, sec, (HEAD[key] ? HEAD[key][0] : c.id) + (c.dtype ? ` (${c.dtype})` : ""));
    if (HEAD[key]) el("p", { class: "caption" }, sec, HEAD[key][1]);
    const host = el("div", { class: "host" }, sec);
    if (c.type === "roofline") renderRoofline(c, host);
    else if (c.type === "lines") renderLines(c, host);
    else if (c.type === "versus") renderVersus(c, host);
    else if (c.type === "comparison") renderComparison(c, host);
    else if (c.type === "bounds") renderBounds(c, host);
    else if (c.type === "compare") renderCompare(c, host);
  }
  if (D.kind === "report") { const sec = el("section", { "data-section": "entries" }, page); el("h2", {}, sec, "Entries"); renderEntries(sec); }
  redraw();
  document.documentElement.dataset.ready = "1";
})();
