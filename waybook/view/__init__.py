"""The session viewer: one self-contained HTML page per journal (`waybook view`), and a read-only local
web UI over a whole store (`waybook serve`)."""

from waybook.view._data import page_data, usage_totals
from waybook.view._page import render_page
from waybook.view._server import ViewServer, journal_page_data

__all__ = ["ViewServer", "journal_page_data", "page_data", "render_page", "usage_totals"]
