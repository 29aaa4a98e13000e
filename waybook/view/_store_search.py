"""`waybook serve`'s `/search?q=`: the store's full-text index (waybook.search), as a page of links.

The index is the one `waybook search` keeps beside the store (`default_index_path`): derived data,
brought up to date from the store's feed before each search, so a served search sees every committed
record. A store with no place beside it for an index (a PostgreSQL or in-memory store) says so. Each hit
links to its session's page at its record (`/j/ID#n=RECORD`). The page is a Jinja2 template with
autoescaping on: a snippet is a session's text, shown as text.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import quote

import jinja2

from waybook.search import SearchError, SearchIndex, default_index_path
from waybook.stores import open_store

SEARCH_HITS: Final = 50
"""How many hits one search page lists, best first."""

_PAGE = jinja2.Environment(autoescape=True).from_string(
    """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>waybook search: {{ query }}</title>
<style>body{font:14px system-ui,sans-serif;margin:20px}li{margin:0 0 10px}.where{color:#666;font-size:12px}
.snippet{white-space:pre-wrap}input{width:360px;padding:4px}</style></head><body>
<p><a href="/">all journals</a></p>
<form action="/search" method="get"><input type="search" name="q" value="{{ query }}"
 placeholder="search every session of the store" aria-label="search the store"></form>
{% if error %}<p id="error">{{ error }}</p>{% endif %}
{% if searched %}<p id="count">{{ hits|length }} hit{{ "" if hits|length == 1 else "s" }} for “{{ query }}”
{%- if hits|length == limit %} (the best {{ limit }}){% endif %}</p>
<ol id="hits">{% for hit in hits %}<li><a href="/j/{{ hit.href }}">{{ hit.journal }}</a>
<span class="where">seq {{ hit.seq }} · {{ hit.role }} · {{ hit.at }}</span>
<div class="snippet">{{ hit.snippet }}</div></li>
{% endfor %}</ol>{% endif %}</body></html>
"""
)


def search_page(store_url: str, query: str, *, limit: int = SEARCH_HITS) -> str:
    """The page of the best `limit` hits for `query` across the store at `store_url` (a form when
    `query` is blank; the reason on the page when the query has no words or the store no index)."""
    if not query.strip():
        return _PAGE.render(query="", hits=[], searched=False, error=None, limit=limit)
    path = default_index_path(store_url)
    if path is None:
        error = f"{store_url} keeps no search index beside it; search it with waybook search --index FILE"
        return _PAGE.render(query=query, hits=[], searched=False, error=error, limit=limit)
    try:
        with open_store(store_url, create=False) as store, SearchIndex(path, store_url) as index:
            index.update(store)
            found = index.search(query, limit=limit)
    except SearchError as exc:
        return _PAGE.render(query=query, hits=[], searched=False, error=str(exc), limit=limit)
    hits: list[dict[str, Any]] = [
        {
            "journal": hit.journal,
            "href": quote(hit.journal, safe="") + "#n=" + quote(hit.id, safe=""),
            "seq": hit.seq,
            "role": hit.role,
            "at": hit.at,
            "snippet": hit.snippet,
        }
        for hit in found
    ]
    return _PAGE.render(query=query, hits=hits, searched=True, error=None, limit=limit)
