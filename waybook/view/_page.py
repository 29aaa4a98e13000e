"""The session page: one self-contained HTML file (no network, works from `file://`).

Jinja2 renders the shell with autoescaping on, so the title (a user's words) is escaped by the engine,
not by hand. The page data travels as JSON inside a `<script type="application/json">` element, with
every `<`, `>` and `&` written as a JSON escape so no text can close the element; the first screen's
slice of it (`_first_screen`) travels the same way in a small element before the page's script, and
the whole session after it. A Content Security
Policy allows exactly the page's own script and style (by hash) and `data:` images: nothing else loads.
"""

from __future__ import annotations

import base64
import hashlib
import json
from functools import cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from waybook.view._first_screen import first_screen
from waybook.view._markdown import code_css

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(value: Any) -> str:
    """`value` as JSON that is inert inside an HTML `<script>` element."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return "".join(_JSON_ESCAPES.get(ch, ch) for ch in text)


def csp_hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


SCRIPTS = ("markdown.js", "graph.js", "usage.js", "viewer.js")
"""The page's script, in this order: the parts first (each adds itself to `Waybook`), the page last."""
STYLES = ("viewer.css", "conversation.css")


@cache
def _assets() -> tuple[jinja2.Template, str, str]:
    static = resources.files("waybook.view") / "static"
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = environment.from_string((static / "page.html").read_text(encoding="utf-8"))
    script = "".join((static / name).read_text(encoding="utf-8") for name in SCRIPTS)
    style = "".join((static / name).read_text(encoding="utf-8") for name in STYLES) + code_css()
    return template, script, style


def render_page(data: dict[str, Any], *, live: bool = False) -> str:
    """The HTML page for `page_data(...)`. `live` pages (served) may fetch from their own origin."""
    template, script, style = _assets()
    link_base = "serve" if live else "file"
    return template.render(
        title=data["title"],
        first=Markup(script_json({**first_screen(data), "link_base": link_base})),
        data=Markup(script_json({**data, "link_base": link_base})),
        script=Markup(script),
        style=Markup(style),
        script_hash=csp_hash(script),
        style_hash=csp_hash(style),
        connect="'self'" if live else "'none'",
    )
