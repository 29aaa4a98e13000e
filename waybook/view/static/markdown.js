// Markdown and long text on the session page. A message's Markdown was rendered in Python
// (waybook/view/_markdown.py: markdown-it-py with raw HTML off, links to http(s) and #anchors only);
// here it is parsed into an inert <template> (nothing in it loads or runs) and only the tags and
// attributes that renderer makes are kept, every other element becomes its text, every other
// attribute is dropped: a bug there still puts no script, style or request into the page.
// Long plain text (a tool's output) is folded: its first lines, its size, and a button for the rest.
"use strict";
var Waybook = window.Waybook || (window.Waybook = {});
(function () {
  const TAGS = new Set(["P", "BR", "HR", "H1", "H2", "H3", "H4", "H5", "H6", "EM", "STRONG", "S", "CODE",
    "PRE", "BLOCKQUOTE", "UL", "OL", "LI", "A", "TABLE", "THEAD", "TBODY", "TR", "TH", "TD", "SPAN"]);
  const CLASSES = new Map([
    ["CODE", /^language-[\w+#.-]{1,40}$/],
    ["SPAN", /^hl-[\w-]{1,20}$/],
    ["TH", /^align-(left|right|center)$/],
    ["TD", /^align-(left|right|center)$/],
  ]);
  const SAFE_HREF = /^(https?:\/\/[^\s\x00-\x1f]+|#[^\s\x00-\x1f]*)$/i;
  const FOLD_LINES = 30;
  const FOLD_CHARS = 6000;
  const HEAD_LINES = 12;

  function keep(element, attribute) {
    const tag = element.tagName;
    const name = attribute.name;
    const value = attribute.value;
    if (tag === "A" && name === "href") return SAFE_HREF.test(value);
    if (tag === "A" && name === "title") return true;
    if (tag === "OL" && name === "start") return /^\d{1,9}$/.test(value);
    if (name === "class") return CLASSES.has(tag) && CLASSES.get(tag).test(value);
    return false;
  }
  function clean(parent) {
    for (const child of Array.from(parent.childNodes)) {
      if (child.nodeType === Node.TEXT_NODE) continue;
      if (child.nodeType !== Node.ELEMENT_NODE) { child.remove(); continue; }
      if (!TAGS.has(child.tagName)) { child.replaceWith(document.createTextNode(child.textContent || "")); continue; }
      for (const attribute of Array.from(child.attributes)) {
        if (!keep(child, attribute)) child.removeAttribute(attribute.name);
      }
      if (child.tagName === "A") {
        child.rel = "noopener noreferrer nofollow";
        const href = child.getAttribute("href");
        if (href && !href.startsWith("#")) child.target = "_blank";
      }
      clean(child);
    }
  }
  // The rendered Markdown `html` as a <div class="md">, cleaned as above.
  Waybook.markdown = function (html) {
    const template = document.createElement("template");
    template.innerHTML = html; // inert: a template's content has no scripts, loads and handlers
    clean(template.content);
    const box = document.createElement("div");
    box.className = "md";
    box.appendChild(document.importNode(template.content, true));
    return box;
  };

  // A message whose Markdown is one plain paragraph (Python sent its text only), drawn as that paragraph.
  Waybook.paragraph = function (text) {
    const box = document.createElement("div");
    box.className = "md";
    const p = document.createElement("p");
    p.textContent = text.trim();
    box.appendChild(p);
    return box;
  };

  function lineCount(text) {
    let lines = 1;
    for (let i = text.indexOf("\n"); i !== -1 && i < text.length - 1; i = text.indexOf("\n", i + 1)) lines++;
    return lines;
  }
  function headOf(text) {
    let end = -1;
    for (let n = 0; n < HEAD_LINES; n++) {
      end = text.indexOf("\n", end + 1);
      if (end === -1) break;
    }
    const cut = end === -1 ? text : text.slice(0, end);
    return cut.length > FOLD_CHARS / 2 ? cut.slice(0, FOLD_CHARS / 2) : cut;
  }
  Waybook.size = function (bytes) {
    if (bytes < 1024) return bytes + " bytes";
    if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + " KB";
    return (bytes / 1024 / 1024).toFixed(1) + " MB";
  };
  // `text` in a <pre class=cls>; longer than FOLD_LINES lines or FOLD_CHARS characters, its head only,
  // with its size and a button that shows the rest (and folds it again).
  Waybook.folded = function (text, cls) {
    const pre = document.createElement("pre");
    pre.className = cls || "text";
    const lines = lineCount(text);
    if (lines <= FOLD_LINES && text.length <= FOLD_CHARS) { pre.textContent = text; return pre; }
    const box = document.createElement("div");
    box.className = "folded";
    const head = headOf(text);
    pre.textContent = head;
    const label = "show all " + lines.toLocaleString("en") + " lines (" + Waybook.size(new TextEncoder().encode(text).length) + ")";
    const button = document.createElement("button");
    button.type = "button";
    button.className = "unfold";
    button.textContent = label;
    button.addEventListener("click", () => {
      const open = box.classList.toggle("open");
      pre.textContent = open ? text : head;
      button.textContent = open ? "fold (" + lines.toLocaleString("en") + " lines)" : label;
    });
    box.append(pre, button);
    return box;
  };
})();
