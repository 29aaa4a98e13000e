// The branch graph: every branch of the session as a tree (laid out in Python, waybook/view/_graph.py),
// the active path drawn strong, each leaf a button that opens its branch, each leaf move a dashed arrow
// numbered as in the list of moves. Built with createElementNS and textContent only: a summary is text.
"use strict";
var Waybook = window.Waybook || (window.Waybook = {});
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const LANE = 22;
  const ROW = 30;
  const PAD = 12;
  const SIDEBAR = 300; // the sidebar's width (viewer.css): read from the CSS, it would cost a layout
  const LABEL = 24; // the fewest characters of a segment's label (the whole summary is its tooltip)

  function svg(tag, attributes, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attributes || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function at(segment) {
    return [PAD + segment.lane * LANE, segment.row * ROW + ROW / 2 + 4];
  }
  // Draws `graph` into `container`. `moves` is the page's list of leaf moves (for their reasons);
  // `open(nodeId)` shows a branch. Waybook.markViewed(container, leaf) marks the leaf shown now.
  Waybook.drawGraph = function (container, graph, moves, open) {
    container.replaceChildren();
    const segments = graph.segments;
    if (!segments.length) return;
    const gutter = PAD + graph.lanes * LANE; // where leaf moves arc, between the lanes and the labels
    const lanes = gutter + (graph.moves.length ? 26 : PAD);
    const chars = Math.max(LABEL, Math.floor((SIDEBAR - lanes - 8) / 6.4));
    const width = Math.max(SIDEBAR, lanes + 8 + chars * 6.4);
    const height = PAD + graph.rows * ROW;
    const root = svg("svg", { width, height, viewBox: "0 0 " + width + " " + height, role: "img", class: "graph" });
    root.appendChild(svg("title", {}, segments.filter((s) => s.leaf).length + " branches"));
    const defs = svg("defs");
    const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" });
    marker.appendChild(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }));
    defs.appendChild(marker);
    root.appendChild(defs);
    for (const segment of segments) {
      const [x, y] = at(segment);
      const top = segment.parent === null ? [x, y - ROW / 2] : at(segments[segment.parent]);
      const turn = Math.min(y, top[1] + ROW / 2);
      const edge = svg("path", {
        d: "M " + top[0] + " " + top[1] + " Q " + x + " " + top[1] + " " + x + " " + turn + " L " + x + " " + y,
        class: "edge" + (segment.active ? " active" : ""),
      });
      edge.appendChild(svg("title", {}, segment.count + (segment.count === 1 ? " entry" : " entries")));
      root.appendChild(edge);

    }
    for (const [n, move] of graph.moves.entries()) {
      if (move.from === null || move.to === null || move.from === move.to) continue;
      const [x1, y1] = at(segments[move.from]);
      const [x2, y2] = at(segments[move.to]);
      const bend = gutter + 2 + (n % 3) * 6;
      const path = svg("path", {
        d: "M " + x1 + " " + y1 + " C " + bend + " " + y1 + " " + bend + " " + y2 + " " + (x2 + 6) + " " + y2,
        class: "move", "marker-end": "url(#arrow)",
      });
      const reason = (moves[move.index] || {}).reason || "(no reason)";
      path.appendChild(svg("title", {}, "leaf move " + (move.index + 1) + ": " + reason));
      root.appendChild(path);
      root.appendChild(svg("text", { x: bend + 1, y: (y1 + y2) / 2 + 3, class: "move-label" }, move.index + 1));
    }
    for (const segment of segments) {
      const [x, y] = at(segment);
      const dot = svg("circle", {
        cx: x, cy: y, r: segment.leaf ? 6 : 4,
        class: "vertex" + (segment.leaf ? " leaf" : "") + (segment.active ? " active" : ""),
        tabindex: 0,
      });
      dot.dataset.node = segment.last;
      dot.appendChild(svg("title", {}, (segment.leaf ? (segment.active ? "active leaf: " : "leaf: ") : "branch point: ") + (segment.summary || segment.last)));
      dot.addEventListener("click", () => open(segment.last));
      dot.addEventListener("keydown", (event) => { if (event.key === "Enter") open(segment.last); });
      root.appendChild(dot);
      const entries = segment.count + (segment.count === 1 ? " entry" : " entries");
      const words = segment.leaf ? segment.summary + " (" + entries + ")" : entries + " to a branch point";
      const text = words.length > chars ? words.slice(0, chars - 1) + "…" : words;
      root.appendChild(svg("text", { x: lanes + 4, y: y + 4, class: (segment.leaf ? "leaf-label" : "count") + (segment.active ? " active" : "") }, text));
    }
    container.appendChild(root);
    if (graph.truncated) container.appendChild(Object.assign(document.createElement("p"), { className: "placeholder", textContent: "the graph shows the first " + segments.length + " segments" }));
  };

  Waybook.markViewed = function (container, leaf) {
    for (const dot of container.querySelectorAll("circle.vertex")) dot.classList.toggle("viewed", dot.dataset.node === leaf);
  };

  // Where two root-to-leaf paths part: how many nodes they share from the root.
  Waybook.commonPrefix = function (a, b) {
    let k = 0;
    while (k < a.length && k < b.length && a[k].id === b[k].id) k++;
    return k;
  };
})();
