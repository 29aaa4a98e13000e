// The waybook session page: lays out the data Python computed. Every text goes in through textContent;
// Markdown goes in only through Waybook.markdown (static/markdown.js: parsed inert, then allowlisted);
// every link is built from an encoded journal or node id, so nothing in a session runs.
// Ids are a session's own strings: they are looked up in Maps, never as a plain object's keys.
"use strict";
(function () {
  let root = null; // the page's own session (sub-agent sessions are in root.subagents)
  let data = null; // the session shown now
  let byId = new Map();
  let results = new Map(); // assistant node id -> Map(call id -> result node id)
  let links = new Map(); // node id -> the sub-agent links made at it
  let memory = new Map(); // node id -> the memory it used
  let callOf = new Map(); // a paired tool result's id -> the id of the assistant turn that made its call
  const FIRST_SCREEN = 60; // entries laid out before the page is shown (a window holds fewer); the rest in chunks
  const BEFORE_TARGET = 20; // entries laid out above a permalink's target on the first screen
  const CHUNK = 500;

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
  const INLINE_IMAGE = /^data:image\/[a-z0-9.+-]+(;[a-z0-9.+-]+=[a-z0-9.+-]*)*;base64,[a-z0-9+\/]*={0,2}$/i;
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
  function subagents() {
    return entries(root.subagents);
  }
  function nodeHash(journal, node) {
    const parts = [];
    if (journal !== root.journal) parts.push("j=" + encodeURIComponent(journal));
    if (node) parts.push("n=" + encodeURIComponent(node));
    return "#" + parts.join("&");
  }
  function pageLink(journal, node) {
    if (data.link_base === "serve" || root.link_base === "serve") {
      return "/j/" + encodeURIComponent(journal) + (node ? "#n=" + encodeURIComponent(node) : "");
    }
    if (journal === root.journal || subagents().has(journal)) return nodeHash(journal, node);
    return encodeURIComponent(journal) + ".html" + (node ? "#n=" + encodeURIComponent(node) : "");
  }
  function subagentLink(link) {
    const a = el("a", "subagent", "sub-agent session: " + (link.agent ? link.agent + " · " : "") + link.journal);
    a.href = pageLink(link.journal);
    a.dataset.journal = link.journal;
    if ((root.subagents_missing || []).includes(link.journal)) a.textContent += " (not found beside this session)";
    return a;
  }
  function blockView(block, node, used) {
    if (block.type === "text" && typeof block.html === "string") return Waybook.markdown(block.html);
    if (block.type === "text" && block.markdown) return Waybook.paragraph(block.text);
    if (block.type === "text") return Waybook.folded(block.text, "text");
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
      d.appendChild(Waybook.folded(JSON.stringify(block.arguments, null, 2), "arguments"));
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
        d.appendChild(subagentLink(link));
      }
      return d;
    }
    if (block.type === "image") return imageView(block);
    if (block.type === "blob" && block.missing) return el("div", "placeholder", "[blob " + block.digest.slice(0, 12) + ": not in the store]");
    if (block.type === "blob") {
      return el("div", "placeholder", "[blob " + (block.name || "") + " " + block.media_type + ", " +
        block.size + " bytes, sha256 " + block.digest.slice(0, 12) + "]");
    }
    return Waybook.folded(block.text || "", "text");
  }
  function nodeView(node, used) {
    const box = el("article", "msg role-" + node.role + (node.harness ? " harness" : ""));
    box.id = "n-" + node.id;
    const head = el("header");
    const role = node.role === "custom" ? "custom: " + node.type : node.role;
    head.appendChild(el("span", "role", node.harness ? role + " (harness: " + node.harness + ")" : role));
    const link = el("a", "permalink", "#" + node.seq);
    link.href = nodeHash(data.journal, node.id);
    head.appendChild(link);
    if (node.model) head.appendChild(el("span", "model", node.model));
    if (typeof node.latency === "number") head.appendChild(el("span", "latency", node.latency.toFixed(1) + " s"));
    if (node.usage && Object.keys(node.usage).length) {
      const usage = el("span", "usage", node.tokens ? Waybook.tokens(node.tokens)
        : Object.entries(node.usage).map(([k, v]) => k + " " + v).join(" · "));
      usage.title = Object.entries(node.usage).map(([k, v]) => k + " " + v).join("\n");
      head.appendChild(usage);
    }
    if (typeof node.cost === "number") head.appendChild(el("span", "cost", Waybook.money(node.cost)));
    box.appendChild(head);
    for (const block of node.blocks) box.appendChild(blockView(block, node, used));
    const calls = new Set(node.blocks.filter((b) => b.type === "tool_call").map((b) => b.call_id));
    for (const link of links.get(node.id) || []) {
      if (link.call_id && calls.has(link.call_id)) continue; // drawn at its tool call
      box.appendChild(subagentLink(link));
    }
    if (node.role === "custom" && node.data !== null && node.data !== undefined) {
      const d = el("details", "custom-data");
      d.appendChild(el("summary", null, "data"));
      d.appendChild(Waybook.folded(JSON.stringify(node.data, null, 2), "data"));
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

  // --- the conversation: laid out around its target, the rest in chunks ------------------------------
  let viewed = null;
  let showHarness = false; // harness entries (progress lines, hooks, caveats, ...) are hidden until asked
  let rendering = 0; // each show() takes a number: an older one's pending chunks stop
  function hiddenRun(count, kinds, reveal) {
    const names = [...kinds.entries()].map(([k, n]) => n + " " + k).join(", ");
    const b = el("button", "harness-run", count + (count === 1 ? " harness entry" : " harness entries") + " hidden (" + names + ")");
    b.type = "button";
    b.title = "show the harness's entries";
    b.addEventListener("click", () => reveal(b));
    return b;
  }
  // Lays out the branch ending at `leafId` around `targetId` (or from its top). `first`: the first
  // screen's nodes, before the whole session is parsed: laid out, and nothing more until it is.
  function show(leafId, targetId, first) {
    viewed = leafId;
    const run = ++rendering;
    const path = first || pathTo(leafId);
    const main = document.getElementById("conversation");
    main.replaceChildren();
    document.body.dataset.complete = "";
    document.body.dataset.viewing = leafId;
    const used = new Set();
    const onPath = new Set(path.map((n) => n.id));
    const inCall = (id) => callOf.has(id) && onPath.has(callOf.get(id)); // drawn inside its tool call
    const host = targetId && inCall(targetId) ? callOf.get(targetId) : targetId;
    const start = Math.max(0, host ? path.findIndex((n) => n.id === host) : 0);
    const skip = (n) => inCall(n.id);
    const hidden = (n) => n.harness && !showHarness && n.id !== host;
    const reveal = (button) => {
      showHarness = true;
      updateHarness();
      const next = button.nextElementSibling || button.previousElementSibling;
      show(leafId, next && next.id ? next.id.slice(2) : targetId);
    };
    let lo = start;
    let hi = start;
    let aheadCount = 0; // a run of hidden entries not yet marked, after the last laid out
    let aheadKinds = new Map();
    function forward(limit) {
      const frag = document.createDocumentFragment();
      for (; hi < path.length && limit > 0; hi++) {
        const n = path[hi];
        if (skip(n) || used.has(n.id)) continue;
        if (hidden(n)) { aheadCount++; aheadKinds.set(n.harness, (aheadKinds.get(n.harness) || 0) + 1); continue; }
        if (aheadCount) { frag.appendChild(hiddenRun(aheadCount, aheadKinds, reveal)); aheadCount = 0; aheadKinds = new Map(); }
        frag.appendChild(nodeView(n, used));
        limit--;
      }
      if (hi === path.length && aheadCount) { frag.appendChild(hiddenRun(aheadCount, aheadKinds, reveal)); aheadCount = 0; }
      main.appendChild(frag);
    }
    function backward(limit) {
      const views = [];
      let count = 0;
      let kinds = new Map();
      const stopAt = lo;
      for (; lo > 0 && limit > 0; lo--) {
        const n = path[lo - 1];
        if (skip(n)) continue;
        if (hidden(n)) { count++; kinds.set(n.harness, (kinds.get(n.harness) || 0) + 1); continue; }
        if (count) { views.push(hiddenRun(count, kinds, reveal)); count = 0; kinds = new Map(); }
        views.push(nodeView(n, used));
        limit--;
      }
      if (count) views.push(hiddenRun(count, kinds, reveal));
      if (lo === stopAt) return;
      const anchor = main.firstElementChild;
      const before = anchor && host ? anchor.getBoundingClientRect().top : 0;
      const frag = document.createDocumentFragment();
      for (const v of views.reverse()) frag.appendChild(v);
      main.prepend(frag);
      if (anchor && host) window.scrollBy(0, anchor.getBoundingClientRect().top - before); // keep the target in view
    }
    // The first screen: the target and what follows it (a few entries above), or the top of the branch.
    if (host) backward(BEFORE_TARGET);
    forward(FIRST_SCREEN);
    if (targetId) {
      const target = document.getElementById("n-" + targetId);
      if (target) {
        const call = target.closest("details");
        if (call) call.open = true;
        target.classList.add("target");
        target.scrollIntoView({ block: "center" });
      }
    }
    if (first) return;
    function more() {
      if (run !== rendering) return;
      forward(CHUNK);
      backward(CHUNK);
      if (hi < path.length || lo > 0) setTimeout(more, 0);
      else { document.body.dataset.complete = "1"; applySearch(); }
    }
    if (hi < path.length || lo > 0) setTimeout(more, 0);
    else { document.body.dataset.complete = "1"; applySearch(); }
    for (const b of document.querySelectorAll("#branches li")) {
      b.classList.toggle("viewed", b.dataset.leaf === leafId);
    }
    Waybook.markViewed(document.getElementById("graph"), leafId);
  }

  // --- two branches side by side -----------------------------------------------------------------------
  function compare(a, b) {
    rendering++;
    viewed = null;
    const pa = pathTo(a);
    const pb = pathTo(b);
    const k = Waybook.commonPrefix(pa, pb);
    const main = document.getElementById("conversation");
    main.replaceChildren();
    const visible = (n) => !(n.harness && !showHarness) && !callOf.has(n.id);
    const head = el("div", "diff-head", "comparing two branches: " + k + " shared entries, then " +
      (pa.length - k) + " on the left and " + (pb.length - k) + " on the right");
    main.appendChild(head);
    const prefix = el("details", "diff-prefix");
    prefix.appendChild(el("summary", null, "the shared beginning (" + pa.slice(0, k).filter(visible).length + " entries, shown once)"));
    prefix.addEventListener("toggle", () => {
      if (!prefix.open || prefix.dataset.filled) return;
      prefix.dataset.filled = "1";
      const used = new Set();
      for (const n of pa.slice(0, k)) if (visible(n) && !used.has(n.id)) prefix.appendChild(nodeView(n, used));
    });
    main.appendChild(prefix);
    if (k > 0) {
      const fork = el("div", "diff-fork");
      const last = pa[k - 1];
      const used = new Set();
      fork.appendChild(el("div", "label", "where they part:"));
      fork.appendChild(nodeView(last, used));
      main.appendChild(fork);
    }
    const sides = el("div", "diff-sides");
    for (const [name, side] of [["left", pa.slice(k)], ["right", pb.slice(k)]]) {
      const column = el("section", "diff-side " + name);
      const leaf = side.length ? side[side.length - 1] : null;
      column.appendChild(el("h3", null, (leaf && leaf.id === data.active_leaf ? "active branch" : "branch") + ": " + side.filter(visible).length + " entries"));
      const used = new Set();
      for (const n of side) if (visible(n) && !used.has(n.id)) column.appendChild(nodeView(n, used));
      sides.appendChild(column);
    }
    main.appendChild(sides);
    document.body.dataset.viewing = "diff";
    document.body.dataset.complete = "1";
  }
  function picked() {
    return [...document.querySelectorAll("#branches input.pick:checked")].map((i) => i.closest("li").dataset.leaf);
  }
  function updateCompare() {
    const chosen = picked();
    const button = document.getElementById("compare");
    button.disabled = chosen.length !== 2;
    button.textContent = chosen.length === 2 ? "compare the two branches" : "pick two branches to compare (" + chosen.length + "/2)";
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
  // The hash: `#n=NODE` (a node of this session), `#j=JOURNAL` (a sub-agent session held in this page),
  // `#j=JOURNAL&n=NODE`. A part that is not percent-encoded text is ignored.
  function parseHash() {
    const found = new Map();
    for (const part of location.hash.replace(/^#/, "").split("&")) {
      const eq = part.indexOf("=");
      if (eq < 1) continue;
      try {
        found.set(part.slice(0, eq), decodeURIComponent(part.slice(eq + 1)));
      } catch (error) {
        continue;
      }
    }
    return found;
  }
  function openNode(id) {
    history.replaceState(null, "", nodeHash(data.journal, id));
    const leaf = data.leaves.find((l) => l.id === id);
    if (leaf) show(leaf.id); else fromHash();
  }
  function fromHash() {
    const hash = parseHash();
    const journal = hash.get("j");
    const wanted = journal && journal !== root.journal && subagents().has(journal) ? subagents().get(journal) : root;
    if (wanted !== data) { load(wanted); drawTabs(); }
    const id = hash.get("n");
    if (id !== undefined && byId.has(id)) {
      const on = (leaf) => pathTo(leaf).some((n) => n.id === id);
      const leaf = (data.active_leaf && on(data.active_leaf)) ? { id: data.active_leaf } : data.leaves.find((l) => on(l.id));
      show(leaf ? leaf.id : id, id);
      return true;
    }
    if (journal && wanted !== root) { showDefault(false); return true; }
    return false;
  }

  function updateHarness() {
    const box = document.getElementById("harness");
    box.hidden = !data.harness;
    document.getElementById("harness-count").textContent = data.harness + " harness entries " + (showHarness ? "shown" : "hidden");
    document.getElementById("harness-toggle").textContent = showHarness ? "hide them" : "show them";
  }
  function drawTabs() {
    const tabs = document.getElementById("tabs");
    tabs.replaceChildren();
    const pages = subagents();
    tabs.hidden = pages.size === 0;
    const order = (root.subagent_order || []).filter((journal) => pages.has(journal));
    for (const [journal, page] of [[root.journal, root], ...order.map((j) => [j, pages.get(j)])]) {
      const a = el("a", "tab" + (page === data ? " current" : ""), (page === root ? "session: " : "sub-agent: ") + page.title);
      a.href = nodeHash(journal);
      a.dataset.journal = journal;
      a.title = journal;
      tabs.appendChild(a);
    }
  }
  function load(next) {
    data = next;
    byId = new Map(data.nodes.map((n) => [n.id, n]));
    results = new Map([...entries(data.results)].map(([id, calls]) => [id, entries(calls)]));
    links = entries(data.links);
    memory = entries(data.memory);
    callOf = new Map();
    for (const [call, answers] of results) for (const result of answers.values()) callOf.set(result, call);
    document.title = data.title + " - waybook";
    document.getElementById("title").textContent = data.title;
    document.getElementById("journal").textContent = data.journal;
    document.getElementById("records").textContent = data.records + " records";
    document.getElementById("activity").textContent = data.last_activity ? "last activity " + data.last_activity : "";
    const status = document.getElementById("status");
    status.textContent = data.status.ok ? "chain verified" : "damaged: " + data.status.text +
      " (showing the " + data.status.proven + " proven records before it)";
    status.className = data.status.ok ? "ok" : "damaged";
    const parent = document.getElementById("parent");
    parent.replaceChildren();
    const of = ((data.header || {}).metadata || {}).subagent_of;
    if (of && typeof of.journal === "string") {
      const a = el("a", null, "sub-agent of " + of.journal);
      a.href = pageLink(of.journal, typeof of.node === "string" ? of.node : null);
      parent.appendChild(a);
    }
    const branches = document.getElementById("branches");
    branches.replaceChildren();
    for (const leaf of data.leaves) {
      const li = el("li", leaf.active ? "active" : "abandoned");
      li.dataset.leaf = leaf.id;
      const pick = el("input", "pick");
      pick.type = "checkbox";
      pick.title = "compare this branch";
      pick.addEventListener("change", updateCompare);
      const b = el("button", null, (leaf.active ? "active: " : "branch: ") + leaf.summary);
      b.addEventListener("click", () => { history.replaceState(null, "", nodeHash(data.journal, leaf.id)); show(leaf.id); });
      li.append(pick, b);
      branches.appendChild(li);
    }
    updateCompare();
    updateHarness();
    const moves = document.getElementById("moves");
    moves.replaceChildren();
    data.moves.forEach((m, i) => moves.appendChild(el("li", null, (i + 1) + ". seq " + m.seq + ": " + (m.reason || "(no reason)"))));
    Waybook.drawGraph(document.getElementById("graph"), data.graph, data.moves, openNode);
    Waybook.drawUsage(document.getElementById("usage"), data);
    Waybook.drawTimeline(document.getElementById("timeline"), data, openNode);
  }
  function showDefault(useHash) {
    if (useHash !== false && fromHash()) return;
    const start = data.active_leaf || (data.leaves[0] && data.leaves[0].id);
    if (start) show(start);
    else {
      document.getElementById("conversation").replaceChildren();
      document.body.dataset.complete = "1";
    }
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
        root = Object.assign(await response.json(), { link_base: root.link_base });
        load(root);
        if (keep && byId.has(keep)) show(keep); else showDefault();
        document.body.dataset.updates = String(Number(document.body.dataset.updates || "0") + 1);
      }
    }
  }
  // The first screen from its own small data (waybook/view/_first_screen.py), laid out before the
  // browser has read the whole session; then the whole session, and the page goes on from there. A
  // permalink waits for the whole session: its target may be anywhere in it.
  function ready() {
    if (document.body.dataset.ready) return;
    document.body.dataset.ready = "1";
    performance.mark("waybook-first-screen"); // what bench/view.py times
  }
  root = JSON.parse(document.getElementById("waybook-first").textContent);
  load(root);
  const permalink = parseHash().has("n") || parseHash().has("j");
  if (!permalink && root.first_path.length) {
    show(root.active_leaf || root.leaves[0].id, null, root.first_path.map((id) => byId.get(id)));
    ready();
  }
  function whole() {
    const keep = window.scrollY;
    root = JSON.parse(document.getElementById("waybook-data").textContent);
    load(root);
    drawTabs();
    showDefault();
    if (!permalink) window.scrollTo(0, keep); // the reader may have scrolled the first screen already
    ready();
    performance.mark("waybook-whole-session"); // bench/view.py times this too
    document.getElementById("search").addEventListener("input", applySearch);
    document.getElementById("harness-toggle").addEventListener("click", () => {
      showHarness = !showHarness;
      updateHarness();
      if (viewed) show(viewed);
    });
    document.getElementById("compare").addEventListener("click", () => {
      const [a, b] = picked();
      if (a && b) compare(a, b);
    });
    window.addEventListener("hashchange", () => { if (!fromHash()) showDefault(false); });
    if (root.link_base === "serve") {
      document.getElementById("live").textContent = "live";
      const box = document.getElementById("store-search");
      box.hidden = false;
      box.querySelector("input").addEventListener("keydown", (event) => {
        if (event.key === "Enter" && event.target.value.trim()) location.href = "/search?q=" + encodeURIComponent(event.target.value.trim());
      });
      follow(root.feed_position || 0);
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", whole);
  else whole();
})();
