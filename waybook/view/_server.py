"""`waybook serve`: a read-only local web UI over a whole store, following the store's feed.

Nothing the server answers can change a journal: it only lists, reads, proves and waits. It is one
asyncio event loop on one thread: a connection costs a descriptor and a coroutine, never a thread.
Pages are built in a small pool of threads (`PAGE_WORKERS`, each request opening the store afresh, since
a store handle is not shared between threads), and a full pool answers 503 rather than queueing without
end. A served page asks `/api/wait` for the next committed position; every such long-poll is a
coroutine woken by one watch on the store's feed (`FeedWatch`), so open pages cost no thread each.

What a client can hold is bounded: a request head must arrive within `HEAD_SECONDS` (an idle or stalled
connection is dropped), a response must be taken within `WRITE_SECONDS`, a body is never read (the
answer closes the connection), the responses clients have not taken yet hold at most `SEND_BUDGET`
bytes (a large one past it is 503), and at `max_connections` the connection that has waited longest for a
request head gives way to the new one. Requests whose Host is not the address the server was started on
are refused, so a web page the user visits elsewhere cannot read sessions through DNS rebinding.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import math
import socket
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from typing import Any, Final, TypeVar
from urllib.parse import parse_qs, quote, unquote, urlsplit

import attrs
import jinja2

from waybook.journal import SessionJournal, VerifyReport
from waybook.model import JournalError
from waybook.projections import PriceTable, title_record, title_text
from waybook.stores import (
    JournalStore,
    StoreError,
    count_journals,
    list_from,
    open_proven,
    open_proven_journals,
    open_store,
)
from waybook.view._data import TITLE_CHARS, page_data
from waybook.view._feed_watch import FeedWatch
from waybook.view._http import HEAD_END, MAX_HEAD, BadRequestError, Request, parse_head, response_head
from waybook.view._page import render_page
from waybook.view._sources import StoreSources
from waybook.view._store_search import search_page
from waybook.view._usage import shared_prices

T = TypeVar("T")

PAGE_SIZE: Final = 100
"""How many journals one front page lists (`/?page=N` for the rest, in the store's creation order)."""
TITLE_SCAN: Final = 64
"""How many leading records are read to find a journal's first user message for its title."""
PAGE_WORKERS: Final = 4
"""Threads that build pages (each proves journals: disk-bound work kept off the event loop)."""
PAGE_QUEUE: Final = 64
"""Page requests in the pool or waiting for it; more are answered 503 (Retry-After: 1)."""
HEAD_SECONDS: Final = 10.0
"""A request head (or, on a kept-alive connection, the next one) must arrive within this long."""
WRITE_SECONDS: Final = 30.0
"""A client must take a response within this long, or the connection is dropped."""
SEND_BUDGET: Final = 64 << 20
"""The most response bytes held for clients that have not taken them yet, over all connections; a large
response past it is answered 503 (Retry-After: 1), so slow readers cannot fill the server's memory."""
SEND_CHUNK: Final = 1 << 16
"""A response is handed to its connection this much at a time, the next once the last was taken; a
small response (at most this) is never refused for the budget."""
SEND_BUFFER: Final = 1 << 18
"""The kernel's send buffer of each connection, fixed (not grown by autotuning up to megabytes), so a
client that reads nothing holds this little of the system's memory as well."""
DRAIN_SECONDS: Final = 2.0
"""After refusing a request with a body, how long its bytes are read and dropped before closing (so
the client sees the answer instead of a reset); `DRAIN_BYTES` at most."""
DRAIN_BYTES: Final = 1 << 20
MAX_CONNECTIONS: Final = 10_000
"""The most connections held at once, lower where the process's descriptor limit is (less a reserve
of `DESCRIPTOR_RESERVE` for the store's files)."""
DESCRIPTOR_RESERVE: Final = 128
ALLOWED_METHODS: Final = ("GET", "HEAD")

_LIST_PAGE = jinja2.Environment(autoescape=True).from_string(
    """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>waybook: {{ url }}</title>
<style>body{font:14px system-ui,sans-serif;margin:20px}
td,th{padding:4px 10px;text-align:left;border-bottom:1px solid #eee}
.damaged{color:#b42318}.ok{color:#1a7f37}nav a,nav b{margin-right:8px}</style></head><body>
<h1>{{ url }}</h1>
<form action="/search" method="get"><input type="search" name="q" placeholder="search every session"></form>
<p id="count">{{ total }} journals
{%- if pages > 1 %}: {{ first }}-{{ last }} on page {{ page }} of {{ pages }}{% endif %}</p>
{% if pages > 1 %}<nav id="pages">{% for number in shown %}{% if number is none %}...
{% elif number == page %}<b>{{ number }}</b>
{% else %}<a href="/?page={{ number }}">{{ number }}</a>
{% endif %}{% endfor %}
{%- if page < pages %}<a id="next" href="/?page={{ page + 1 }}">next</a>{% endif %}</nav>{% endif %}
<table id="journals"><tr><th>id</th><th>title</th><th>records</th><th>last activity</th><th>chain</th></tr>
{% for row in rows %}<tr><td><a href="/j/{{ row.href }}">{{ row.id }}</a></td><td>{{ row.title }}</td>
<td>{{ row.records }}</td><td>{{ row.last }}</td><td class="{{ row.css }}">{{ row.status }}</td></tr>
{% endfor %}</table></body></html>
"""
)


def journal_rows(store: JournalStore, journal_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The front page's lines of `journal_ids`: id, title (the first user message), records, last
    activity, proof; the page's journals read together where the store can (`open_proven_journals`:
    two statements in a database store).

    A journal is proven as `waybook verify` proves it (`stores.open_proven`), so a torn tail, which an
    open leaves out of what it serves, still shows as damage; one damaged before its last record shows
    its proven prefix, and one damaged journal never takes the whole store's front page down: one that
    lost records (or cannot be read at all) is listed with what is wrong."""
    rows = []
    for journal_id, proven in open_proven_journals(store, journal_ids):
        try:
            if isinstance(proven, JournalError):
                raise proven
            rows.append(_proven_row(journal_id, *proven))
        except JournalError as exc:
            rows.append(
                {
                    "id": journal_id,
                    "href": quote(journal_id, safe=""),
                    "title": journal_id,
                    "records": "?",
                    "last": "",
                    "status": str(exc),
                    "css": "damaged",
                }
            )
    return rows


def _proven_row(journal_id: str, journal: SessionJournal, report: VerifyReport) -> dict[str, Any]:
    with journal:
        head = report.head.seq
        found = title_record(journal, scan=TITLE_SCAN)  # the proven records only
        title = journal_id if found is None else title_text(journal, found)[:TITLE_CHARS]
        last = next(iter(journal.read(after=head - 1, limit=1)), None) if head else None
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


def page_numbers(page: int, pages: int, *, around: int = 3) -> list[int | None]:
    """The page links a front page shows: the first, the last, and those within `around` of `page`,
    None where numbers are left out."""
    wanted = sorted({1, pages, *range(max(1, page - around), min(pages, page + around) + 1)})
    shown: list[int | None] = []
    for number in wanted:
        if shown and shown[-1] is not None and number > shown[-1] + 1:
            shown.append(None)
        shown.append(number)
    return shown


@attrs.frozen
class Response:
    status: HTTPStatus
    body: bytes
    content_type: str = "text/plain; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()
    close: bool = False

    @classmethod
    def text(cls, status: HTTPStatus, text: str, **options: Any) -> Response:
        return cls(status, text.encode(), **options)


class NoSuchPageError(LookupError):
    """A front page past the last one (404)."""


class PoolFullError(Exception):
    """Every page thread is busy and `PAGE_QUEUE` requests wait for one."""


class ViewServer:
    """The read-only web UI for the store at `url`, listening on `host:port` from construction on (a
    bad URL, a missing store or a taken port is an error before anything is served).

    `serve_forever()` runs it on the calling thread until `shutdown()` (from another thread) or Ctrl-C;
    `server_close()` then releases the socket and the threads; `url_for()` names a page of it."""

    def __init__(
        self,
        url: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        page_size: int = PAGE_SIZE,
        max_connections: int | None = None,
        head_seconds: float = HEAD_SECONDS,
        send_budget: int = SEND_BUDGET,
    ) -> None:
        open_store(url, create=False).close()  # a bad URL, or no store there, is refused before it listens
        self.store_url = url
        self.page_size = page_size
        self.max_connections = max_connections or connection_limit()
        self.head_seconds = head_seconds
        self.send_budget = send_budget
        self._socket = listening_socket(host, port)
        address = self._socket.getsockname()
        self.bound: tuple[str, int] = (str(address[0]), int(address[1]))
        bound_host, bound_port = self.bound
        names = {bound_host, host, "localhost"} if host in ("127.0.0.1", "localhost", "::1") else {host}
        self.allowed_hosts = {f"{name.lower()}:{bound_port}" for name in names if ":" not in name} | {
            f"[{name.lower()}]:{bound_port}" for name in names if ":" in name
        }
        self._pool = ThreadPoolExecutor(max_workers=PAGE_WORKERS, thread_name_prefix="waybook-page")
        self._pending = 0
        self._unsent = 0  # bytes of responses being sent (SEND_BUDGET)
        self._watch = FeedWatch(url, read=self._in_pool)
        self._waiting_for_head: dict[asyncio.StreamWriter, None] = {}  # oldest first
        self._connections: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._state = threading.Lock()
        self._store: JournalStore | None = None  # opened by the first page, closed by server_close
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._stopping = False
        self._stopped = threading.Event()
        self._closed = False

    # --- running -------------------------------------------------------------------------------------

    def serve_forever(self) -> None:
        """Serve until `shutdown()` is called (from another thread) or the process is interrupted."""
        asyncio.run(self._serve())

    def shutdown(self) -> None:
        """Stop `serve_forever` and wait until it has returned (at once if it is not running)."""
        with self._state:
            self._stopping = True
            loop, stop = self._loop, self._stop
        if loop is None or stop is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop ended meanwhile
            loop.call_soon_threadsafe(stop.set)
        self._stopped.wait()

    def server_close(self) -> None:
        """Release the listening socket and the server's threads."""
        if self._closed:
            return
        self._closed = True
        self._socket.close()
        self._watch.close()
        self._pool.shutdown(wait=True, cancel_futures=True)
        with self._state:
            store, self._store = self._store, None
        if store is not None:
            store.close()

    @property
    def open_connections(self) -> int:
        """How many client connections the server holds now."""
        return len(self._connections)

    @property
    def long_polls(self) -> int:
        """How many `/api/wait` requests wait for the feed now."""
        return self._watch.waiting

    def url_for(self, path: str = "/") -> str:
        host, port = self.bound
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}{path}"

    async def _serve(self) -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(_quiet_connection_errors)
        with self._state:
            if self._stopping:
                return
            self._loop, self._stop = loop, asyncio.Event()
            self._stopped.clear()
        try:
            server = await asyncio.start_server(
                self._accepted, sock=self._socket, limit=MAX_HEAD, backlog=socket.SOMAXCONN
            )
            async with server:
                await self._stop.wait()
            for writer in list(self._connections):
                writer.transport.abort()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
        finally:
            with self._state:
                self._loop = self._stop = None
            self._stopped.set()

    # --- connections ---------------------------------------------------------------------------------

    async def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            if len(self._connections) >= self.max_connections and not self._make_room():
                await self._send(
                    writer, _refusal(HTTPStatus.SERVICE_UNAVAILABLE, "too many connections"), head=False
                )
                return
            self._connections.add(writer)
            with contextlib.suppress(OSError):
                writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
            await self._converse(reader, writer)
        except (ConnectionError, TimeoutError, asyncio.IncompleteReadError):
            pass  # the client went away, or would not take its answer
        except asyncio.CancelledError:
            # Only shutdown cancels a connection; ending normally keeps Python 3.11's stream callback
            # from logging the cancelled task's CancelledError as an error.
            pass
        finally:
            self._connections.discard(writer)
            self._waiting_for_head.pop(writer, None)
            self._tasks.discard(task)
            _close(writer)

    def _make_room(self) -> bool:
        """Drop the connection that has waited longest for a request head; False if none waits."""
        if not self._waiting_for_head:
            return False
        oldest = next(iter(self._waiting_for_head))
        del self._waiting_for_head[oldest]
        self._connections.discard(oldest)
        oldest.transport.abort()
        return True

    async def _converse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Requests and answers on one connection, until either side closes it."""
        while True:
            self._waiting_for_head[writer] = None
            # A timer, not asyncio.wait_for: no task per waiting connection (thousands may wait).
            late = asyncio.get_running_loop().call_later(self.head_seconds, writer.transport.abort)
            try:
                head = await reader.readuntil(HEAD_END)
            except asyncio.IncompleteReadError:
                return  # closed between requests or in the middle of one, or cut for being late
            except asyncio.LimitOverrunError:
                why = f"the request head is longer than {MAX_HEAD} bytes"
                await self._send(
                    writer, _refusal(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, why), head=False
                )
                return
            finally:
                late.cancel()
                self._waiting_for_head.pop(writer, None)
            try:
                request = parse_head(head[: -len(HEAD_END)])
            except BadRequestError as exc:
                await self._send(writer, _refusal(exc.status, str(exc)), head=False)
                return
            response = await self._respond(request)
            close = response.close or request.has_body or not request.keep_alive
            await self._send(writer, attrs.evolve(response, close=close), head=request.method == "HEAD")
            if close:
                if request.has_body:
                    await _drain(reader, writer)
                return

    @property
    def unsent_bytes(self) -> int:
        """How many bytes of responses clients have not taken yet: at most `send_budget`, and a chunk for
        each connection sending a small one."""
        return self._unsent

    async def _send(self, writer: asyncio.StreamWriter, response: Response, *, head: bool) -> None:
        """Send `response` a chunk at a time, within `WRITE_SECONDS`; a large one past `SEND_BUDGET` is
        answered 503 instead."""
        size = 0 if head else len(response.body)
        if size > SEND_CHUNK and self._unsent + size > self.send_budget:
            response = Response.text(
                HTTPStatus.SERVICE_UNAVAILABLE,
                "busy: other clients have not taken their pages yet; try again in a moment",
                headers=(("Retry-After", "1"),),
                close=response.close,
            )
        headers = [
            ("Content-Type", response.content_type),
            ("Content-Length", str(len(response.body))),
            ("X-Content-Type-Options", "nosniff"),
            ("Cache-Control", "no-store"),
            *response.headers,
        ]
        if response.close:
            headers.append(("Connection", "close"))
        data = memoryview(response_head(response.status, headers) + (b"" if head else response.body))
        self._unsent += len(data)
        try:
            async with asyncio.timeout(WRITE_SECONDS):
                for start in range(0, len(data), SEND_CHUNK):
                    writer.write(data[start : start + SEND_CHUNK])
                    await writer.drain()
        finally:
            self._unsent -= len(data)

    # --- requests ------------------------------------------------------------------------------------

    async def _respond(self, request: Request) -> Response:
        hosts = request.values("host")
        if len(hosts) != 1:
            return _refusal(HTTPStatus.BAD_REQUEST, f"a request names its Host once, not {len(hosts)} times")
        if hosts[0].lower() not in self.allowed_hosts:
            return Response.text(HTTPStatus.FORBIDDEN, "unknown Host: open the URL waybook serve printed")
        if request.method not in ALLOWED_METHODS:
            return Response.text(
                HTTPStatus.METHOD_NOT_ALLOWED,
                "waybook serve is read-only: GET and HEAD only",
                headers=(("Allow", ", ".join(ALLOWED_METHODS)),),
            )
        if request.has_body:
            return _refusal(HTTPStatus.BAD_REQUEST, f"a {request.method} request carries no body here")
        if not request.target.startswith("/"):
            return _refusal(HTTPStatus.BAD_REQUEST, "the target is a path (/...)")
        try:
            return await self._route(request.target)
        except (JournalError, StoreError, NoSuchPageError) as exc:
            return Response.text(HTTPStatus.NOT_FOUND, str(exc))
        except PoolFullError:
            return Response.text(
                HTTPStatus.SERVICE_UNAVAILABLE, "busy: try again in a moment", headers=(("Retry-After", "1"),)
            )
        except ValueError as exc:
            return Response.text(HTTPStatus.BAD_REQUEST, str(exc))
        except Exception:  # a bug: say so to the client, print it for the user
            traceback.print_exc(file=sys.stderr)
            return _refusal(HTTPStatus.INTERNAL_SERVER_ERROR, "the server failed: see its terminal")

    async def _route(self, target: str) -> Response:
        parts = urlsplit(target)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        if parts.path == "/":
            page = _whole_number("page", query.get("page", "1"))
            return _html(await self._in_pool(lambda: self.front_page(page)))
        if parts.path.startswith("/j/") and len(parts.path) > 3:
            journal_id = unquote(parts.path[3:])
            return _html(await self._in_pool(lambda: self.session_page(journal_id)))
        if parts.path == "/api/journal" and "id" in query:
            data = await self._in_pool(lambda: self._with_store(lambda s: served_page_data(s, query["id"])))
            return _json(data)
        if parts.path == "/search":
            return _html(await self._in_pool(lambda: search_page(self.store_url, query.get("q", ""))))
        if parts.path == "/api/wait":
            after = _whole_number("after", query.get("after", "0"), least=0)
            return _json(await self._watch.wait(after, query.get("journal")))
        return Response.text(HTTPStatus.NOT_FOUND, "no such page")

    async def _in_pool(self, work: Callable[[], T]) -> T:
        """`work()` on a page thread; PoolFullError when `PAGE_QUEUE` requests already wait."""
        if self._pending >= PAGE_QUEUE:
            raise PoolFullError
        self._pending += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, work)
        finally:
            self._pending -= 1

    # --- pages (run on a page thread) ----------------------------------------------------------------

    def _with_store(self, use: Callable[[JournalStore], T]) -> T:
        """`use(store)` on the store the server keeps open for its pages (every store is safe across
        threads; one opened per page would read a big directory store's whole catalog on each)."""
        with self._state:
            if self._closed:
                msg = f"{self.store_url}: the server is closed"
                raise StoreError(msg)
            if self._store is None:
                self._store = open_store(self.store_url, create=False)
            store = self._store
        return use(store)

    def front_page(self, page: int = 1) -> str:
        """The journal list, `page_size` journals a page in the store's creation order (page 1 first)."""

        def build(store: JournalStore) -> str:
            total = count_journals(store)  # the page alone is read: a big store's listing is never held
            pages = max(1, math.ceil(total / self.page_size))
            if page > pages:
                msg = f"no page {page}: the store's {total} journals fill {pages} page(s)"
                raise NoSuchPageError(msg)
            start = (page - 1) * self.page_size
            listed = list_from(store, start, limit=self.page_size)
            rows = journal_rows(store, [info.journal_id for info in listed])
            return _LIST_PAGE.render(
                url=self.store_url,
                rows=rows,
                total=total,
                page=page,
                pages=pages,
                first=start + 1,
                last=start + len(rows),
                shown=page_numbers(page, pages),
            )

        return self._with_store(build)

    def session_page(self, journal_id: str) -> str:
        return render_page(self._with_store(lambda s: served_page_data(s, journal_id)), live=True)


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket listening on `host:port`: an IPv6 one for an IPv6 address (`::1`), an IPv4 one where a
    name has an IPv4 address (as `localhost` does). OSError if it cannot listen there."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, protocol, _, address = min(found, key=lambda info: info[0] != socket.AF_INET)
    listener = socket.socket(family, kind, protocol)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        listener.bind(address)
        listener.listen(socket.SOMAXCONN)
        listener.setblocking(False)
    except BaseException:
        listener.close()
        raise
    return listener


def connection_limit() -> int:
    """`MAX_CONNECTIONS`, or fewer where this process may open fewer descriptors."""
    try:
        import resource
    except ImportError:  # not a Unix: no descriptor limit to read
        return MAX_CONNECTIONS
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(16, min(MAX_CONNECTIONS, soft - DESCRIPTOR_RESERVE))


def _close(writer: asyncio.StreamWriter) -> None:
    """Close a connection once what was written to it is sent: within `WRITE_SECONDS`, or it is cut."""
    transport = writer.transport
    if transport.is_closing():
        return
    writer.close()
    asyncio.get_running_loop().call_later(WRITE_SECONDS, transport.abort)


async def _drain(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Close our side, then read and drop what the client still sends (bounded), so that closing does
    not reset the connection before the client has read the answer."""
    with contextlib.suppress(OSError, RuntimeError):
        writer.write_eof()
    left = DRAIN_BYTES
    with contextlib.suppress(OSError, TimeoutError):
        async with asyncio.timeout(DRAIN_SECONDS):
            while left > 0 and (chunk := await reader.read(min(left, 65536))):
                left -= len(chunk)


def _whole_number(name: str, text: str, *, least: int = 1) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 18) or int(text) < least:
        msg = f"{name} must be a whole number of at least {least}, not {text[:40]!r}"
        raise ValueError(msg)
    return int(text)


def _html(text: str) -> Response:
    return Response(HTTPStatus.OK, text.encode(), "text/html; charset=utf-8")


def _json(value: Any) -> Response:
    return Response(HTTPStatus.OK, json.dumps(value, sort_keys=True).encode(), "application/json")


def _refusal(status: HTTPStatus, why: str) -> Response:
    """An answer after which the connection closes: what follows the request cannot be trusted."""
    return Response.text(status, why, close=True)


def _quiet_connection_errors(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """A client that disconnects, and a full descriptor table (the accept retries), are not errors to
    print; anything else is, as asyncio prints it."""
    exception = context.get("exception")
    if isinstance(exception, ConnectionError | TimeoutError):
        return
    if isinstance(exception, OSError) and exception.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS):
        return
    loop.default_exception_handler(context)
