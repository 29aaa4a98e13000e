// The waybook session page: lays out the data Python computed. Every text goes in through textContent
// (never innerHTML), and every link is built from an encoded journal id, so nothing in a session runs.
// Every id (a node's, a tool call's) is a session's own string: ids are looked up in Maps only, never as
// a plain object's keys, where `constructor` or `__proto__` would find what every object inherits.
"use strict";
(function () {
  let data = null;
  let byId = new Map();
  let results = new Map(); // assistant node id -> Map(call id -> result node id)
  let links = new Map(); // node id -> the sub-agent links made at it
  let memory = new Map(); // node id -> the memory it used
  const FIRST_SCREEN = 200;
  const INLINE_IMAGE = /^data:image\/[a-z0-9.+-]+(;[a-z0-9.+-]+=[a-z0-9.+-]*)*;base64,[a-z0-9+\/]*={0,2}$/i;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function entries(object) {
    return new Map(object ? Object.entries(object) : []); // JSON.parse makes every key an own property
  }
  function pathTo(id) {
    const path = [];
    const seen = new Set();
    for (let n = byId.get(id); n && !seen.has(n.id); n = n.parent ? byId.get(n.parent) : undefined) {
      seen.add(n.id);
      path.push(n);
    }
    return path.reverse();
  }
  function imageView(block) {
    const placeholder = () => el("div", "placeholder", "[image: " + block.media_type + "]");
    // A data:image/ URL in base64 only (checked in Python too); CSP allows data: images only. One the
    // browser cannot decode becomes the placeholder instead of a broken image.
    if (!block.source || !INLINE_IMAGE.test(block.source) || block.source.split(",")[1].length % 4) return placeholder();
    const img = el("img", "image");
    img.alt = "image (" + block.media_type + ")";
    img.addEventListener("error", () => img.replaceWith(placeholder()), { once: true });
    img.src = block.source;
    return img;
  }
  function pageLink(journal) {
    return data.link_base === "serve" ? "/j/" + encodeURIComponent(journal) : encodeURIComponent(journal) + ".html";
  }
  function blockView(block, node, used) {
    if (block.type === "text") return el("pre", "text", block.text);
    if (block.type === "thinking") {
      const d = el("details", "thinking");
      d.appendChild(el("summary", null, block.redacted ? "thinking (redacted)" : "thinking"));
      d.appendChild(el("pre", "text", block.text));
      return d;
    }
    if (block.type === "tool_call") {
      const d = el("details", "tool-call");
      d.dataset.callId = block.call_id;
      d.appendChild(el("summary", null, "tool call: " + block.name));
      d.appendChild(el("pre", "arguments", JSON.stringify(block.arguments, null, 2)));
      const resultId = (results.get(node.id) || new Map()).get(block.call_id);
      const result = resultId ? byId.get(resultId) : undefined;
      if (result) {
        used.add(result.id);
        const r = el("div", "tool-result" + (result.is_error ? " error" : ""));
        r.id = "n-" + result.id;
        r.appendChild(el("div", "label", result.is_error ? "result (error)" : "result"));
        for (const b of result.blocks) r.appendChild(blockView(b, result, used));
        d.appendChild(r);
      }
      for (const link of links.get(node.id) || []) {
        if (link.call_id && link.call_id !== block.call_id) continue;
        const a = el("a", "subagent", "sub-agent journal: " + link.journal);
        a.href = pageLink(link.journal);
        d.appendChild(a);
      }
      return d;
    }
    if (block.type === "image") return imageView(block);
    if (block.type === "blob" && block.missing) return el("div", "placeholder", "[blob " + block.digest.slice(0, 12) + ": not in the store]");
    if (block.type === "blob") {
      return el("div", "placeholder", "[blob " + (block.name || "") + " " + block.media_type + ", " +
        block.size + " bytes, sha256 " + block.digest.slice(0, 12) + "]");
    }
    return el("pre", "text", block.text || "");
  }
  function nodeView(node, used) {
    const box = el("article", "msg role-" + node.role);
    box.id = "n-" + node.id;
    const head = el("header");
    head.appendChild(el("span", "role", node.role === "custom" ? "custom: " + node.type : node.role));
    const link = el("a", "permalink", "#" + node.seq);
    link.href = "#n=" + encodeURIComponent(node.id);
    head.appendChild(link);
    if (node.model) head.appendChild(el("span", "model", node.model));
    if (typeof node.latency === "number") head.appendChild(el("span", "latency", node.latency.toFixed(1) + " s"));
    if (node.usage && Object.keys(node.usage).length) {
      head.appendChild(el("span", "usage", Object.entries(node.usage).map(([k, v]) => k + " " + v).join(" · ")));
    }
    box.appendChild(head);
    for (const block of node.blocks) box.appendChild(blockView(block, node, used));
    const calls = new Set(node.blocks.filter((b) => b.type === "tool_call").map((b) => b.call_id));
    for (const link of links.get(node.id) || []) {
      if (link.call_id && calls.has(link.call_id)) continue; // drawn at its tool call
      const a = el("a", "subagent", "sub-agent journal: " + link.journal);
      a.href = pageLink(link.journal);
      box.appendChild(a);
    }
    if (node.role === "custom" && node.data !== null && node.data !== undefined) {
      const d = el("details", "custom-data");
      d.appendChild(el("summary", null, "data"));
      d.appendChild(el("pre", null, JSON.stringify(node.data, null, 2)));
      box.appendChild(d);
    }
    for (const m of memory.get(node.id) || []) {
      const line = m.pin ? "pin " + m.pin + " @ seq " + m.seq + " (receipt " + m.receipt + ")"
        : m.unavailable ? "memory unavailable: " + m.unavailable : "memory " + m.memory + " @ seq " + m.seq;
      if (!m.files) { box.appendChild(el("div", "memory", line)); continue; }
      const d = el("details", "memory");
      d.appendChild(el("summary", null, line + " (" + m.files.length + " files)"));
      const list = el("ul", "memory-files");
      for (const f of m.files) list.appendChild(el("li", null, f.path + " (" + f.size + " bytes)" + (f.read_only ? " read-only" : "") + ": " + f.first_line));
      d.appendChild(list);
      box.appendChild(d);
    }
    return box;
  }
  let viewed = null;
  let showHarness = false;  // harness entries (progress lines, hooks, caveats, ...) are hidden until asked
  function show(targetId) {
    viewed = targetId;
    const path = pathTo(targetId);
    const main = document.getElementById("conversation");
    main.replaceChildren();
    const used = new Set();
    let i = 0;
    function chunk(limit) {
      const frag = document.createDocumentFragment();
      for (; i < path.length && limit > 0; i++) {
        const n = path[i];
        if (used.has(n.id) || (n.harness && !showHarness)) continue;
        frag.appendChild(nodeView(n, used));
        limit--;
      }
      main.appendChild(frag);
      if (i < path.length) setTimeout(() => { if (viewed === targetId) chunk(500); }, 0);
      else { document.body.dataset.complete = "1"; applySearch(); }
    }
    document.body.dataset.complete = "";
    chunk(FIRST_SCREEN);
    for (const b of document.querySelectorAll("#branches li")) {
      b.classList.toggle("viewed", pathTo(targetId).some((n) => n.id === b.dataset.leaf) || b.dataset.leaf === targetId);
    }
    document.body.dataset.viewing = targetId;
  }
  function applySearch() {
    const q = document.getElementById("search").value.trim().toLowerCase();
    let hits = 0;
    for (const m of document.querySelectorAll("#conversation > article")) {
      const hit = !q || m.textContent.toLowerCase().includes(q);
      m.classList.toggle("miss", !hit);
      if (hit && q) hits++;
    }
    document.getElementById("hits").textContent = q ? hits + " match" + (hits === 1 ? "" : "es") : "";
  }
  function hashId() {
    const m = /^#n=(.+)$/s.exec(location.hash);
    try {
      return m ? decodeURIComponent(m[1]) : null;
    } catch (error) {
      return null; // not percent-encoded text (`#n=%`): no node, the default view
    }
  }
  function fromHash() {
    const id = hashId();
    if (id !== null && byId.has(id)) {
      const leaf = data.leaves.find((l) => pathTo(l.id).some((n) => n.id === id));
      show(leaf ? leaf.id : id);
      const target = document.getElementById("n-" + id);
      if (target) { target.classList.add("target"); target.scrollIntoView(); }
      return true;
    }
    return false;
  }

  function load(next) {
    data = next;
    byId = new Map(data.nodes.map((n) => [n.id, n]));
    results = new Map([...entries(data.results)].map(([id, calls]) => [id, entries(calls)]));
    links = entries(data.links);
    memory = entries(data.memory);
    document.title = data.title + " - waybook";
    document.getElementById("title").textContent = data.title;
    document.getElementById("journal").textContent = data.journal;
    document.getElementById("records").textContent = data.records + " records";
    document.getElementById("activity").textContent = data.last_activity ? "last activity " + data.last_activity : "";
    const status = document.getElementById("status");
    status.textContent = data.status.ok ? "chain verified" : "damaged: " + data.status.text +
      " (showing the " + data.status.proven + " proven records before it)";
    status.className = data.status.ok ? "ok" : "damaged";
    const branches = document.getElementById("branches");
    branches.replaceChildren();
    for (const leaf of data.leaves) {
      const li = el("li", leaf.active ? "active" : "abandoned");
      li.dataset.leaf = leaf.id;
      const b = el("button", null, (leaf.active ? "active: " : "branch: ") + leaf.summary);
      b.addEventListener("click", () => { history.replaceState(null, "", "#n=" + encodeURIComponent(leaf.id)); show(leaf.id); });
      li.appendChild(b);
      branches.appendChild(li);
    }
    const harness = document.getElementById("harness");
    harness.hidden = !data.harness;
    document.getElementById("harness-count").textContent = data.harness + " harness entries " + (showHarness ? "shown" : "hidden");
    document.getElementById("harness-toggle").textContent = showHarness ? "hide them" : "show them";
    const moves = document.getElementById("moves");
    moves.replaceChildren();
    for (const m of data.moves) moves.appendChild(el("li", null, "seq " + m.seq + ": " + (m.reason || "(no reason)")));
    const usage = document.getElementById("usage");
    usage.replaceChildren();
    for (const [model, counts] of Object.entries(data.usage)) {
      usage.appendChild(el("li", null, model + ": " + Object.entries(counts).map(([k, v]) => k + " " + v).join(" · ")));
    }
  }
  document.getElementById("harness-toggle").addEventListener("click", () => {
    showHarness = !showHarness;
    document.getElementById("harness-count").textContent = data.harness + " harness entries " + (showHarness ? "shown" : "hidden");
    document.getElementById("harness-toggle").textContent = showHarness ? "hide them" : "show them";
    if (viewed) show(viewed);
  });
  function showDefault() {
    if (fromHash()) return;
    const start = data.active_leaf || (data.leaves[0] && data.leaves[0].id);
    if (start) show(start); else document.body.dataset.complete = "1";
  }
  // A served page follows the store's feed: when a record of this journal commits, it loads again.
  async function follow(position) {
    for (;;) {
      let answer;
      try {
        const response = await fetch("/api/wait?after=" + position + "&journal=" + encodeURIComponent(data.journal));
        if (!response.ok) throw new Error("HTTP " + response.status);
        answer = await response.json();
      } catch (error) {
        document.getElementById("live").textContent = "not following: " + error.message;
        await new Promise((resolve) => setTimeout(resolve, 5000));
        continue;
      }
      position = answer.position;
      if (answer.changed) {
        const response = await fetch("/api/journal?id=" + encodeURIComponent(data.journal));
        const keep = viewed === data.active_leaf ? null : viewed;
        load(await response.json());
        if (keep && byId.has(keep)) show(keep); else showDefault();
        document.body.dataset.updates = String(Number(document.body.dataset.updates || "0") + 1);
      }
    }
  }
  document.getElementById("search").addEventListener("input", applySearch);
  window.addEventListener("hashchange", fromHash);
  load(JSON.parse(document.getElementById("waybook-data").textContent));
  showDefault();
  document.body.dataset.ready = "1";
  performance.mark("waybook-first-screen"); // what bench/view.py times
  if (data.link_base === "serve") {
    document.getElementById("live").textContent = "live";
    follow(data.feed_position || 0);
  }
})();
