"""`waybook serve`: a read-only local web UI over a whole store, following the store's feed.

Nothing the server answers can change a journal: it only lists, reads, proves and waits. Each request
opens the store afresh (a store handle is not shared between threads), and a served page asks
`/api/wait` for the next committed position, so it reloads when a record of its journal commits.
Requests whose Host is not the address the server was started on are refused, so a web page the user
visits elsewhere cannot read sessions through DNS rebinding.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

import jinja2

from waybook.journal import JournalError
from waybook.model._records import Header
from waybook.projections import PriceTable
from waybook.stores import JournalStore, StoreError, open_proven, open_store
from waybook.view._data import node_data, page_data, summary_of
from waybook.view._page import render_page
from waybook.view._sources import StoreSources
from waybook.view._store_search import search_page
from waybook.view._usage import shared_prices

WAIT_SECONDS = 20.0
"""How long one `/api/wait` holds its request open before answering "nothing new"."""
LIST_LIMIT = 200
"""How many journals the front page lists (the newest last, as the store lists them)."""
TITLE_SCAN = 64
"""How many leading records are read to find a journal's first user message for its title."""

_LIST_PAGE = jinja2.Environment(autoescape=True).from_string(
    """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>waybook: {{ url }}</title>
<style>body{font:14px system-ui,sans-serif;margin:20px}
td,th{padding:4px 10px;text-align:left;border-bottom:1px solid #eee}
.damaged{color:#b42318}.ok{color:#1a7f37}</style></head><body>
<h1>{{ url }}</h1>
<form action="/search" method="get"><input type="search" name="q" placeholder="search every session"></form>
<p>{{ rows|length }} journals{% if more %} (the first {{ rows|length }}){% endif %}</p>
<table id="journals"><tr><th>id</th><th>title</th><th>records</th><th>last activity</th><th>chain</th></tr>
{% for row in rows %}<tr><td><a href="/j/{{ row.href }}">{{ row.id }}</a></td><td>{{ row.title }}</td>
<td>{{ row.records }}</td><td>{{ row.last }}</td><td class="{{ row.css }}">{{ row.status }}</td></tr>
{% endfor %}</table></body></html>
"""
)


def journal_row(store: JournalStore, journal_id: str) -> dict[str, Any]:
    """One line of the front page: id, title (the first user message), records, last activity, proof.

    A journal is proven as `waybook verify` proves it (`stores.open_proven`), so a torn tail, which an
    open leaves out of what it serves, still shows as damage; one damaged before its last record shows
    its proven prefix, and one damaged journal never takes the whole store's front page down."""
    journal, report = open_proven(store, journal_id)
    with journal:
        head = report.head.seq
        title = journal_id
        for record in journal.read(limit=TITLE_SCAN):
            node = None if isinstance(record.body, Header) else node_data(record)
            if node is not None and node["role"] == "user":
                title = summary_of(node)
                break
        last = next(iter(journal.read(after=head - 1)), None) if head else None
    return {
        "id": journal_id,
        "href": quote(journal_id, safe=""),
        "title": title,
        "records": head,
        "last": last.at if last else "",
        "status": "verified" if report.ok else str(report),
        "css": "ok" if report.ok else "damaged",
    }


def journal_page_data(
    store: JournalStore, journal_id: str, *, prices: PriceTable | None = None
) -> dict[str, Any]:
    """The page of one journal of the store: its proven records and the report, from one pass."""
    journal, report = open_proven(store, journal_id)
    with journal:
        records = list(journal.read(limit=report.head.seq))
    data = page_data(records, report, journal_id=journal_id, sources=StoreSources(store), prices=prices)
    return {**data, "feed_position": store.feed_head()}


def served_page_data(store: JournalStore, journal_id: str) -> dict[str, Any]:
    """A served page's data: `journal_page_data` priced by the installed price table (read once)."""
    return journal_page_data(store, journal_id, prices=shared_prices())


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a viewer's terminal shows its URL, not a line per request."""

    def do_GET(self) -> None:
        if self.headers.get("Host") not in self.server.allowed_hosts:
            self._send(
                HTTPStatus.FORBIDDEN, "text/plain", b"unknown Host: open the URL waybook serve printed"
            )
            return
        parts = urlsplit(self.path)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        try:
            if parts.path == "/":
                self._html(self.server.front_page())
            elif parts.path.startswith("/j/") and len(parts.path) > 3:
                self._html(self.server.session_page(unquote(parts.path[3:])))
            elif parts.path == "/api/journal" and "id" in query:
                self._json(self.server.with_store(lambda s: served_page_data(s, query["id"])))
            elif parts.path == "/search":
                self._html(search_page(self.server.store_url, query.get("q", "")))
            elif parts.path == "/api/wait":
                self._json(self.server.wait(query.get("after", "0"), query.get("journal")))
            else:
                self._send(HTTPStatus.NOT_FOUND, "text/plain", b"no such page")
        except (JournalError, StoreError) as exc:
            self._send(HTTPStatus.NOT_FOUND, "text/plain", str(exc).encode())
        except ValueError as exc:
            self._send(HTTPStatus.BAD_REQUEST, "text/plain", str(exc).encode())

    def do_POST(self) -> None:
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, "text/plain", b"waybook serve is read-only")

    do_PUT = do_DELETE = do_PATCH = do_POST  # noqa: N815 - the base class's naming

    def _html(self, text: str) -> None:
        self._send(HTTPStatus.OK, "text/html; charset=utf-8", text.encode())

    def _json(self, value: Any) -> None:
        self._send(HTTPStatus.OK, "application/json", json.dumps(value, sort_keys=True).encode())

    def _send(self, status: HTTPStatus, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


class ViewServer(ThreadingHTTPServer):
    """The read-only web UI for the store at `url`. `serve_forever()` runs it; `url_for()` names it."""

    daemon_threads = True

    def __init__(self, url: str, *, host: str = "127.0.0.1", port: int = 0) -> None:
        open_store(url, create=False).close()  # a bad URL, or no store there, is refused before it listens
        self.store_url = url
        super().__init__((host, port), _Handler)
        address = self.socket.getsockname()
        self.bound: tuple[str, int] = (str(address[0]), int(address[1]))
        bound_host, bound_port = self.bound
        names = {bound_host, host, "localhost"} if host in ("127.0.0.1", "localhost", "::1") else {host}
        self.allowed_hosts = {f"{name}:{bound_port}" for name in names} | {
            f"[{name}]:{bound_port}" for name in names if ":" in name
        }

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that leaves a page drops its waiting request: that is not an error to print."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def url_for(self, path: str = "/") -> str:
        host, port = self.bound
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}{path}"

    def with_store(self, use: Callable[[JournalStore], Any]) -> Any:
        with open_store(self.store_url, create=False) as store:
            return use(store)

    def front_page(self) -> str:
        def rows(store: JournalStore) -> tuple[list[dict[str, Any]], bool]:
            page = store.list(limit=LIST_LIMIT)
            return [journal_row(store, info.journal_id) for info in page], page.cursor is not None

        listed, more = self.with_store(rows)
        return _LIST_PAGE.render(url=self.store_url, rows=listed, more=more)

    def session_page(self, journal_id: str) -> str:
        return render_page(self.with_store(lambda s: served_page_data(s, journal_id)), live=True)

    def wait(self, after: str, journal_id: str | None) -> dict[str, Any]:
        """Wait up to WAIT_SECONDS for the feed to pass `after`; say whether `journal_id` changed."""
        if not after.isdigit():
            msg = f"after must be a feed position (a whole number), not {after!r}"
            raise ValueError(msg)
        position = int(after)

        def wait_on(store: JournalStore) -> dict[str, Any]:
            store.wait(position, timeout=WAIT_SECONDS)
            changed, last = False, position
            for entry in store.feed(position, limit=10_000):
                last = entry.position
                changed = changed or journal_id is None or entry.journal_id == journal_id
            return {"position": last, "changed": changed}

        answer: dict[str, Any] = self.with_store(wait_on)
        return answer
