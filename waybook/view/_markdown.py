"""Message text as Markdown, rendered safely in Python when the page is made.

markdown-it-py (CommonMark, the renderer `rich` already depends on) turns a message into HTML with raw
HTML disabled: a `<script>` or `<img onerror>` in a message is escaped and shows as the text it is.
Links are kept only when they go to `http(s)://` or an in-page `#anchor`; any other link (`javascript:`,
`data:`, `file:`, a relative path) stays the text that was typed. Images are not links to load: the
image rule is off, so `![x](https://...)` shows as text and a link. Entities are left as typed (`&lt;`
shows as `&lt;`): a session's text is shown as written, not decoded. Underscores never emphasise
(`__init__` stays `__init__`); asterisks do. Table alignment becomes a class,
since the page's Content Security Policy allows no inline style.

Fenced code blocks are highlighted by Pygments into `hl-` classes (the style sheet is `code_css()`):
the highlighter runs here, not in the page, so the page carries no highlighting script and stays
byte-identical for the same journal; Pygments is the maintained highlighter Sphinx and `rich` use, and
`rich` brings it in already. A block names its language (```` ```python ````); one that names none, or
one Pygments does not know, is shown plain (guessing a language is slow and often wrong), and so is a
block over `HIGHLIGHT_LIMIT` characters.

The page's script parses this HTML into an inert `<template>` and keeps only the tags and attributes
this module makes (`static/markdown.js`), so a bug here still cannot put a script into the page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any, Final

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

HIGHLIGHT_LIMIT: Final = 32_768
"""Code blocks longer than this (characters) are shown plain: highlighting is linear but not cheap."""
HIGHLIGHT_STYLE: Final = "default"
"""The Pygments style the page's code colours come from."""
_SAFE_LINK: Final = re.compile(r"(?:https?://[^\s\x00-\x1f]+|#[^\s\x00-\x1f]*)", re.IGNORECASE)
_ALIGN: Final = re.compile(r"text-align:(left|right|center)")


def safe_link(url: str) -> bool:
    """Whether a Markdown link to `url` is kept as a link: http(s) and in-page anchors only."""
    return _SAFE_LINK.fullmatch(url) is not None


def _highlight(code: str, language: str, _attrs: str) -> str:
    """Pygments' spans for a fenced block in a language it knows; "" (plain, escaped by markdown-it)."""
    name = language.strip().split(maxsplit=1)[0] if language.strip() else ""
    if not name or len(code) > HIGHLIGHT_LIMIT:
        return ""
    try:
        lexer = get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return ""
    return str(highlight(code, lexer, _formatter()))


@cache
def _formatter() -> HtmlFormatter[str]:
    return HtmlFormatter(nowrap=True, classprefix="hl-", style=HIGHLIGHT_STYLE)


def code_css() -> str:
    """The style sheet of highlighted code (`hl-` classes inside `pre code`)."""
    rules = str(_formatter().get_style_defs("pre code")).splitlines()  # type: ignore[no-untyped-call]
    return "\n".join(rule for rule in rules if ".hl-" in rule) + "\n"


def _underscores(state: StateInline, silent: bool) -> bool:
    """A run of `_` is text: `__init__` in a coding session's prose is an identifier far more often than
    emphasis, and `*`/`**` still emphasise."""
    start = state.pos
    if state.src[start] != "_":
        return False
    end = start
    while end < state.posMax and state.src[end] == "_":
        end += 1
    if not silent:
        state.pending += state.src[start:end]
    state.pos = end
    return True


def _cell(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """A table cell's alignment as a class (`align-right`), not an inline style the page would refuse."""
    token = tokens[idx]
    style = token.attrs.pop("style", None)
    if isinstance(style, str) and (found := _ALIGN.fullmatch(style)):
        token.attrSet("class", f"align-{found.group(1)}")
    return str(self.renderToken(tokens, idx, options, env))


@cache
def _renderer(breaks: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "breaks": breaks})
    md.options["highlight"] = _highlight
    md.enable(["table", "strikethrough"])
    md.disable(["image", "entity"])
    md.validateLink = safe_link  # type: ignore[method-assign]
    md.inline.ruler.before("emphasis", "underscores", _underscores)
    for rule in ("th_open", "td_open"):
        md.add_render_rule(rule, _cell)
    return md


def render_markdown(text: str, *, breaks: bool = False) -> str:
    """`text` as HTML. `breaks`: a single newline is a line break (how people type a prompt)."""
    return str(_renderer(breaks).render(text))
