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
  // The timeline above the conversation; `open(nodeId)` shows a turn.
  Waybook.drawTimeline = function (box, data, open) {
    box.replaceChildren();
    const points = data.timeline || [];
    if (!points.length) { box.hidden = true; return; }
    box.hidden = false;
    const tokens = (p) => p.tokens ? p.tokens.input + p.tokens.cache_read + p.tokens.cache_write : 0;
    const most = Math.max(1, ...points.map(tokens));
    const mostOut = Math.max(1, ...points.map((p) => p.tokens ? p.tokens.output : 0));
    const slowest = Math.max(0.001, ...points.map((p) => p.latency || 0));
    const step = Math.max(3, Math.min(24, 900 / points.length));
    const width = Math.ceil(points.length * step) + 4;
    const root = svg("svg", { width, height: HEIGHT + 4, class: "timeline", role: "img" });
    root.appendChild(svg("title", {}, points.length + " turns: input tokens (bars up), output tokens (bars down), latency (dots)"));
    let spent = 0;
    points.forEach((p, i) => {
      const x = 2 + i * step;
      const g = svg("g", { class: "turn", tabindex: 0 });
      g.dataset.node = p.id;
      const up = (tokens(p) / most) * (HEIGHT / 2 - 4);
      const down = ((p.tokens ? p.tokens.output : 0) / mostOut) * (HEIGHT / 2 - 8);
      g.appendChild(svg("rect", { x, y: HEIGHT / 2 - up, width: Math.max(1, step - 1), height: Math.max(0.5, up), class: "input" }));
      g.appendChild(svg("rect", { x, y: HEIGHT / 2 + 1, width: Math.max(1, step - 1), height: Math.max(0.5, down), class: "output" }));
      if (typeof p.latency === "number") {
        g.appendChild(svg("circle", { cx: x + step / 2, cy: HEIGHT - 2 - (p.latency / slowest) * (HEIGHT - 6), r: 1.6, class: "latency" }));
      }
      if (typeof p.cost === "number") spent += p.cost;
      const words = ["seq " + p.seq, p.at];
      if (p.model) words.push(p.model);
      if (p.tokens) words.push("input " + count(tokens(p)) + " (cache read " + count(p.tokens.cache_read) + ")", "output " + count(p.tokens.output));
      if (typeof p.latency === "number") words.push(p.latency.toFixed(1) + " s");
      if (typeof p.cost === "number") words.push(Waybook.money(p.cost) + ", " + Waybook.money(spent) + " so far");
      g.appendChild(svg("title", {}, words.join(" · ")));
      g.addEventListener("click", () => open(p.id));
      root.appendChild(g);
    });
    box.appendChild(root);
  };
})();
