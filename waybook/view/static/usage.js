// Usage on the session page: the total cost (priced in Python from genai-prices, waybook/view/_usage.py)
// and each model's requests, tokens and cost, and a timeline of every assistant turn: its input and
// output tokens as bars, its latency as a dot, a click opening the turn. Text via textContent only.
"use strict";
var Waybook = window.Waybook || (window.Waybook = {});
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const HEIGHT = 70;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svg(tag, attributes, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attributes || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  Waybook.money = function (usd) {
    if (usd === null || usd === undefined) return "";
    if (usd === 0) return "$0";
    return usd < 0.01 ? "$" + usd.toFixed(4) : "$" + usd.toFixed(2);
  };
  function count(n) {
    return n >= 1e6 ? (n / 1e6).toFixed(1) + "M" : n >= 1e3 ? (n / 1e3).toFixed(1) + "k" : String(n);
  }
  // One turn's tokens in a line: input (uncached), cache read, cache write, output.
  Waybook.tokens = function (t) {
    const parts = ["in " + count(t.input)];
    if (t.cache_read) parts.push("cache read " + count(t.cache_read));
    if (t.cache_write) parts.push("cache write " + count(t.cache_write));
    parts.push("out " + count(t.output));
    return parts.join(" · ");
  };
  // The sidebar's usage list: the total cost, then per model tokens and cost.
  Waybook.drawUsage = function (list, data) {
    list.replaceChildren();
    const cost = data.cost || {};
    const total = el("li", "cost-total");
    total.id = "cost-total";
    total.textContent = cost.total !== null && cost.total !== undefined
      ? "total " + Waybook.money(cost.total) + " (" + cost.prices + ")"
      : cost.note || "no turn could be priced" + (cost.prices ? " (" + cost.prices + ")" : "");
    list.appendChild(total);
    const models = new Map(Object.entries(cost.models || {}));
    for (const [model, counts] of Object.entries(data.usage || {})) {
      const priced = models.get(model);
      const raw = Object.entries(counts).map(([k, v]) => k + " " + v);
      const parts = priced
        ? [priced.requests + " requests", priced.cost === null ? "not priced" : Waybook.money(priced.cost), Waybook.tokens(priced.tokens)]
        : raw;
      const li = el("li", "model-usage", model + ": " + parts.join(" · "));
      li.title = raw.join("\n");
      list.appendChild(li);
    }
  };
  // The timeline above the conversation: one bar per assistant turn (or, in a long session, per run of
  // turns: waybook/view/_usage.py decides, so a long session draws as many bars as a short one). Each
  // series is one SVG path, so the timeline costs a handful of elements however many bars it has; the
  // pointer's position says which bar a tooltip or a click is about. `open(nodeId)` shows a bar's turn.
  Waybook.drawTimeline = function (box, data, open) {
    box.replaceChildren();
    const bars = data.timeline || [];
    if (!bars.length) { box.hidden = true; return; }
    box.hidden = false;
    const turns = bars.reduce((sum, bar) => sum + bar.turns, 0);
    let most = 1, mostOut = 1, slowest = 0.001;
    for (const b of bars) { most = Math.max(most, b.input); mostOut = Math.max(mostOut, b.output); slowest = Math.max(slowest, b.latency || 0); }
    const step = Math.max(2, Math.min(24, 900 / bars.length));
    const wide = Math.max(1, step - 1);
    const up = [], down = [], dots = [];
    bars.forEach((bar, i) => {
      const x = (2 + i * step).toFixed(1);
      const h = Math.max(0.5, (bar.input / most) * (HEIGHT / 2 - 4)).toFixed(1);
      const d = Math.max(0.5, (bar.output / mostOut) * (HEIGHT / 2 - 8)).toFixed(1);
      up.push("M" + x + " " + HEIGHT / 2 + "v-" + h + "h" + wide + "v" + h + "z");
      down.push("M" + x + " " + (HEIGHT / 2 + 1) + "v" + d + "h" + wide + "v-" + d + "z");
      if (bar.latency !== null) {
        const cy = HEIGHT - 2 - (bar.latency / slowest) * (HEIGHT - 6);
        dots.push("M" + (2 + i * step + step / 2 - 1.5).toFixed(1) + " " + cy.toFixed(1) + "h3v3h-3z");
      }
    });
    const width = Math.ceil(bars.length * step) + 4;
    const root = svg("svg", {
      width: "100%", height: HEIGHT + 4, viewBox: "0 0 " + width + " " + (HEIGHT + 4),
      preserveAspectRatio: "none", class: "timeline", role: "img",
    });
    root.style.maxWidth = width * 2 + "px"; // a few bars stay bars, not slabs
    root.dataset.step = String(step);
    root.dataset.width = String(width);
    root.dataset.bars = String(bars.length);
    root.appendChild(svg("title", {}, turns + " turns" + (turns > bars.length ? " in " + bars.length + " bars" : "") +
      ": input tokens (bars up), output tokens (bars down), latency (dots); point at a bar for its figures"));
    root.appendChild(svg("path", { d: up.join(""), class: "input" }));
    root.appendChild(svg("path", { d: down.join(""), class: "output" }));
    root.appendChild(svg("path", { d: dots.join(""), class: "latency" }));
    const tip = el("div", "timeline-tip");
    tip.id = "timeline-tip";
    const at = (event) => {
      const box = root.getBoundingClientRect(); // the drawing is stretched to the box's width
      const i = Math.floor(((event.clientX - box.left) * width / box.width - 2) / step);
      return i >= 0 && i < bars.length ? bars[i] : null;
    };
    root.addEventListener("mousemove", (event) => {
      const bar = at(event);
      tip.textContent = bar ? describe(bar) : "";
    });
    root.addEventListener("click", (event) => { const bar = at(event); if (bar) open(bar.first); });
    box.append(root, tip);
  };
  function describe(bar) {
    const words = [bar.turns === 1 ? "seq " + bar.seq[0] : bar.turns + " turns, seq " + bar.seq[0] + "-" + bar.seq[1], bar.at];
    if (bar.model) words.push(bar.model);
    words.push("input " + count(bar.input) + " (cache read " + count(bar.cache_read) + ")", "output " + count(bar.output));
    if (bar.latency !== null) words.push((bar.turns === 1 ? "" : "slowest ") + bar.latency.toFixed(1) + " s");
    if (bar.cost !== null) words.push(Waybook.money(bar.cost) + ", " + Waybook.money(bar.spent) + " so far");
    return words.join(" · ");
  }
})();
