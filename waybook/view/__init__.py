"""The session viewer: one self-contained HTML page per journal (`waybook view`), and a read-only local
web UI over a whole store (`waybook serve`)."""

from waybook.view._data import page_data, usage_totals
from waybook.view._page import render_page
from waybook.view._server import ViewServer, journal_page_data
from waybook.view._subagents import with_subagents
from waybook.view._usage import installed_prices

__all__ = [
    "ViewServer",
    "installed_prices",
    "journal_page_data",
    "page_data",
    "render_page",
    "usage_totals",
    "with_subagents",
]
