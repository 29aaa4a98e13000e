"""Issue 43: `waybook serve` against hostile clients on the same machine.

Each case is a break the fourth red team found: a long-poll held a thread each, a stalled connection
was never dropped, a refused POST's body was read as a second request, `--host ::1` could not listen,
HEAD and OPTIONS got 501, a second Host header was taken, and the front page showed "the first 200"
journals with no way to the rest.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT
from tests.helpers.raw_http import connect, exchange, read_to_end, request, responses, wait_until
from waybook import Session
from waybook.stores import open_store
from waybook.view import ViewServer


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    url = f"file:{tmp_path / 'store'}"
    with open_store(url) as store:
        session = Session.create(store.create("first", role="session"), journal_id="first")
        session.user("what is in the store?")
        session.assistant("One journal.")
    return url


@contextlib.contextmanager
def served(server: ViewServer) -> Iterator[ViewServer]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)
        assert not thread.is_alive()


@pytest.fixture
def server(store_url: str) -> Iterator[ViewServer]:
    with served(ViewServer(store_url, port=0, head_seconds=0.5)) as running:
        yield running


def host_of(server: ViewServer) -> str:
    return server.url_for("").removeprefix("http://")


def test_a_refused_post_body_is_never_read_as_a_second_request(server: ViewServer) -> None:
    smuggled = request("GET", "/j/first", host_of(server))
    answers = exchange(
        server.bound,
        request("POST", "/", host_of(server), fields=(f"Content-Length: {len(smuggled)}",), body=smuggled),
    )
    assert [a.status for a in answers] == [405]  # one answer, and the connection closed after it
    assert answers[0].headers["connection"] == "close"
    chunked = request("PUT", "/", host_of(server), fields=("Transfer-Encoding: chunked",), body=b"0\r\n\r\n")
    assert [a.status for a in exchange(server.bound, chunked + smuggled)] == [405]


def test_a_huge_refused_body_is_not_read_to_its_end(server: ViewServer) -> None:
    """A client announcing a 1 GiB body and sending without pause: answered 405, then cut off after a
    bounded drain (what it managed to send is what the two kernels' buffers took)."""
    announced = 1 << 30
    chunk = b"x" * (1 << 16)
    with connect(server.bound) as sock:
        sock.sendall(request("POST", "/", host_of(server), fields=(f"Content-Length: {announced}",)))
        sent = 0
        with contextlib.suppress(OSError):  # a reset or a broken pipe once the server closes
            while sent < announced:
                sent += sock.send(chunk)
        assert sent < 64 << 20, f"{sent} bytes of the body were taken"
        answer = b""
        with contextlib.suppress(OSError):
            answer = read_to_end(sock)
    assert answer == b"" or answer.startswith(b"HTTP/1.1 405")
    wait_until(lambda: server.open_connections == 0, "the connection is let go")


def test_a_get_with_a_body_is_refused_and_its_body_never_read(server: ViewServer) -> None:
    smuggled = request("GET", "/j/first", host_of(server))
    sent = request("GET", "/", host_of(server), fields=(f"Content-Length: {len(smuggled)}",), body=smuggled)
    assert [a.status for a in exchange(server.bound, sent)] == [400]


@pytest.mark.parametrize(
    "method", ["OPTIONS", "POST", "PUT", "PATCH", "DELETE", "TRACE", "CONNECT", "PROPFIND"]
)
def test_every_method_but_get_and_head_is_405_with_allow(server: ViewServer, method: str) -> None:
    (answer,) = exchange(server.bound, request(method, "/", host_of(server), fields=("Connection: close",)))
    assert answer.status == 405
    assert answer.headers["allow"] == "GET, HEAD"


def test_head_answers_as_get_does_without_the_body(server: ViewServer) -> None:
    (got,) = exchange(
        server.bound, request("GET", "/j/first", host_of(server), fields=("Connection: close",))
    )
    sent = request("HEAD", "/j/first", host_of(server), fields=("Connection: close",))
    (head,) = exchange(server.bound, sent, bodies=False)
    assert head.status == got.status == 200
    assert head.headers["content-length"] == str(len(got.body))
    assert head.headers["content-type"] == got.headers["content-type"]


@pytest.mark.parametrize("order", ["good first", "bad first", "both good"])
def test_a_second_host_header_is_refused(server: ViewServer, order: str) -> None:
    good, bad = f"Host: {host_of(server)}", "Host: evil.example"
    fields = {"good first": (bad,), "bad first": (good,), "both good": (good,)}[order]
    first = host_of(server) if order != "bad first" else "evil.example"
    (answer,) = exchange(server.bound, request("GET", "/", first, fields=fields))
    assert answer.status == 400
    assert b"Host" in answer.body


def test_a_request_without_host_is_refused(server: ViewServer) -> None:
    assert [a.status for a in exchange(server.bound, request("GET", "/", ""))] == [400]


@pytest.mark.parametrize(
    ("sent", "status"),
    [
        (b"GET / HTTP/2.0\r\n\r\n", 505),
        (b"GET /\r\n\r\n", 400),
        (b"G\x00T / HTTP/1.1\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nX: 1\r\n folded\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\n" + b"X-Long: " + b"a" * 70_000 + b"\r\n\r\n", 431),
        (b"GET / HTTP/1.1\r\n" + b"X: 1\r\n" * 101 + b"\r\n", 431),
    ],
)
def test_a_malformed_head_is_answered_and_the_connection_closed(
    server: ViewServer, sent: bytes, status: int
) -> None:
    assert [a.status for a in exchange(server.bound, sent)] == [status]


def test_a_stalled_connection_and_an_idle_one_are_dropped(server: ViewServer) -> None:
    with connect(server.bound) as stalled, connect(server.bound) as idle:
        stalled.sendall(b"GET / HTTP/1.1\r\nHost: ")  # and nothing more
        idle.sendall(request("GET", "/", host_of(server)))
        (answer,) = responses(_one_response(idle))
        assert answer.status == 200
        assert read_to_end(stalled) == b""  # the server closed it (head_seconds=0.5)
        assert read_to_end(idle) == b""
    wait_until(lambda: server.open_connections == 0, "the dropped connections are let go")


def _one_response(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))[15:]
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def test_long_polls_hold_no_thread_each_and_all_wake_on_a_commit(store_url: str) -> None:
    polls = 300
    with served(ViewServer(store_url, port=0)) as server:
        threads = threading.active_count()
        with open_store(store_url) as store:
            position = store.feed_head()
        sockets = [connect(server.bound) for _ in range(polls)]
        try:
            target = f"/api/wait?after={position}&journal=first"
            for sock in sockets:
                sock.sendall(request("GET", target, host_of(server), fields=("Connection: close",)))
            wait_until(lambda: server.long_polls == polls, "every long-poll waits")
            assert threading.active_count() <= threads + 2  # the feed's one watching thread, one page thread
            status, _ = _get(server, "/")
            assert status == 200  # the front page answers meanwhile
            with open_store(store_url) as store:
                Session(store.open("first")).user("a new message")
            answers = [responses(read_to_end(sock)) for sock in sockets]
        finally:
            for sock in sockets:
                sock.close()
        assert {(a.status, json.loads(a.body)["changed"]) for (a,) in answers} == {(200, True)}


def test_a_full_server_drops_the_connection_that_waited_longest_for_its_request(store_url: str) -> None:
    with served(ViewServer(store_url, port=0, max_connections=8, head_seconds=60)) as server:
        stalled = [connect(server.bound) for _ in range(8)]
        try:
            wait_until(lambda: server.open_connections == 8, "the server holds every connection")
            assert _get(server, "/")[0] == 200  # room was made
            assert read_to_end(stalled[0]) == b""  # by dropping the oldest
        finally:
            for sock in stalled:
                sock.close()


def test_a_server_full_of_long_polls_answers_503(store_url: str) -> None:
    with served(ViewServer(store_url, port=0, max_connections=4)) as server:
        with open_store(store_url) as store:
            position = store.feed_head()
        polls = [connect(server.bound) for _ in range(4)]
        try:
            for sock in polls:
                sock.sendall(request("GET", f"/api/wait?after={position}", host_of(server)))
            wait_until(lambda: server.long_polls == 4, "every long-poll waits")
            (answer,) = exchange(server.bound, request("GET", "/", host_of(server)))
            assert answer.status == 503
        finally:
            for sock in polls:
                sock.close()


def slow_reader(server: ViewServer, target: str) -> tuple[socket.socket, int]:
    """A connection that asks for `target`, reads its status line and nothing more (a small receive
    buffer, so the kernel takes little of the answer off the server's hands)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(30)
    sock.connect(server.bound)
    sock.sendall(request("GET", target, host_of(server)))
    status_line = b""
    while len(status_line) < 12:
        status_line += sock.recv(12 - len(status_line))
    return sock, int(status_line[9:12])


def test_clients_that_do_not_take_their_pages_hold_at_most_the_send_budget(tmp_path: Path) -> None:
    url = f"file:{tmp_path / 'store'}"
    with open_store(url) as store:
        session = Session.create(store.create("big", role="session"), journal_id="big")
        for number in range(150):
            session.user(f"question {number} " + "x" * 4000)
            session.assistant(f"answer {number} " + "y" * 4000)
    budget = 3 << 20
    with served(ViewServer(url, port=0, send_budget=budget)) as server:
        page = len(_get(server, "/j/big")[1].encode())
        assert page > 1 << 20
        held = [slow_reader(server, "/j/big") for _ in range(8)]
        try:
            statuses = [status for _, status in held]
            taken = statuses.count(200)
            assert 1 <= taken <= budget // page
            assert statuses == [200] * taken + [503] * (len(held) - taken)
            assert server.unsent_bytes <= budget
            assert _get(server, "/")[0] == 200  # a small page is never refused for the budget
        finally:
            for sock, _ in held:
                sock.close()
        wait_until(lambda: server.unsent_bytes == 0, "the unsent pages are let go")
        assert _get(server, "/j/big")[0] == 200


def _get(server: ViewServer, path: str) -> tuple[int, str]:
    connection = http.client.HTTPConnection(*server.bound, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


needs_ipv6 = pytest.mark.skipif(not _ipv6_loopback(), reason="this machine has no IPv6 loopback")


@needs_ipv6
def test_it_listens_on_ipv6_when_asked(store_url: str) -> None:
    with served(ViewServer(store_url, host="::1", port=0)) as server:
        assert server.url_for("/").startswith("http://[::1]:")
        status, page = _get(server, "/")
        assert status == 200
        assert "first" in page


@needs_ipv6
def test_the_command_listens_on_ipv6(store_url: str) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "waybook", "serve", "--store", store_url, "--host", "::1", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith(f"serving {store_url} at http://[::1]:"), line + process.stderr.read()  # type: ignore[union-attr]
        port = int(line.split("[::1]:")[1].split("/")[0])
        connection = http.client.HTTPConnection("::1", port, timeout=30)
        connection.request("GET", "/")
        assert connection.getresponse().status == 200
    finally:
        process.terminate()
        process.wait(timeout=30)


# --- the journal list, page by page -----------------------------------------------------------------


def many_journals(tmp_path: Path, count: int) -> str:
    url = f"sqlite:{tmp_path / 'many.db'}"
    with open_store(url) as store:
        for number in range(count):
            Session.create(store.create(f"j{number:05d}", role="session"), journal_id=f"j{number:05d}")
    return url


def listed(page: str) -> list[str]:
    return [part.split('"')[0] for part in page.split('href="/j/')[1:]]


def test_the_front_page_pages_the_journal_list(tmp_path: Path) -> None:
    url = many_journals(tmp_path, 25)
    with served(ViewServer(url, port=0, page_size=10)) as server:
        status, first = _get(server, "/")
        assert status == 200
        assert listed(first) == [f"j{n:05d}" for n in range(10)]
        assert "25 journals: 1-10 on page 1 of 3" in first
        assert 'href="/?page=2"' in first
        assert 'href="/?page=3"' in first
        status, last = _get(server, "/?page=3")
        assert listed(last) == [f"j{n:05d}" for n in range(20, 25)]
        assert 'id="next"' not in last
        assert _get(server, "/?page=4")[0] == 404
        assert _get(server, "/?page=0")[0] == 400
        assert _get(server, "/?page=x")[0] == 400


@pytest.mark.slow
def test_the_front_page_of_ten_thousand_journals_links_to_every_page(tmp_path: Path) -> None:
    url = many_journals(tmp_path, 10_000)
    with served(ViewServer(url, port=0)) as server:
        status, first = _get(server, "/")
        assert status == 200
        assert len(listed(first)) == 100
        assert "10000 journals: 1-100 on page 1 of 100" in first
        assert 'href="/?page=2"' in first
        assert 'href="/?page=100"' in first
        status, last = _get(server, "/?page=100")
        assert listed(last)[-1] == "j09999"


# --- under load: a real `waybook serve` process, thousands of connections -----------------------------

LOAD_POLLS = 2000
LOAD_STALLED = 2000
LOAD_BATCH = 250
LOAD_MEMORY_MIB = 64
"""What holding every load connection may add to the server's resident memory."""


def process_figures(pid: int) -> tuple[float, int, int, int]:
    """CPU seconds used so far, threads, open descriptors and resident memory (MiB) of the process `pid`
    (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    status = Path(f"/proc/{pid}/status").read_text()
    fields_of = dict(line.partition(":")[::2] for line in status.splitlines())
    threads, resident = int(fields_of["Threads"]), int(fields_of["VmRSS"].split()[0]) // 1024
    return cpu, threads, len(os.listdir(f"/proc/{pid}/fd")), resident


@contextlib.contextmanager
def descriptors(count: int) -> Iterator[None]:
    """This process (and the server it starts) may open `count` descriptors, for the test's length."""
    resource = pytest.importorskip("resource")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < count:
        pytest.skip(f"the descriptor limit ({hard}) is below the {count} this test opens")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, count), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the server's figures from /proc")
def test_under_thousands_of_stalled_connections_and_long_polls_the_front_page_answers_within_a_second(
    store_url: str,
) -> None:
    with descriptors(2 * (LOAD_POLLS + LOAD_STALLED) + 1024):
        process = subprocess.Popen(
            [sys.executable, "-m", "waybook", "serve", "--store", store_url, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    held: list[socket.socket] = []
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        address = ("127.0.0.1", int(line.split("127.0.0.1:")[1].split("/")[0]))
        host = f"127.0.0.1:{address[1]}"
        latencies: list[float] = []

        def front_page() -> None:
            started = time.perf_counter()
            (answer,) = exchange(address, request("GET", "/", host, fields=("Connection: close",)))
            latencies.append(time.perf_counter() - started)
            assert answer.status == 200

        front_page()
        resident_before = process_figures(process.pid)[3]
        with descriptors(2 * (LOAD_POLLS + LOAD_STALLED) + 1024):
            stalled = []
            for _ in range(0, LOAD_STALLED, LOAD_BATCH):
                for _ in range(LOAD_BATCH):
                    sock = connect(address)
                    sock.sendall(b"GET / HTTP/1.1\r\nHost: ")  # and nothing more
                    stalled.append(sock)
                front_page()
            with open_store(store_url) as store:
                position = store.feed_head()
            polls = []
            wait = request(
                "GET", f"/api/wait?after={position}&journal=first", host, fields=("Connection: close",)
            )
            for _ in range(0, LOAD_POLLS, LOAD_BATCH):
                for _ in range(LOAD_BATCH):
                    sock = connect(address)
                    sock.sendall(wait)
                    polls.append(sock)
                front_page()
            held = stalled + polls
            wait_until(
                lambda: process_figures(process.pid)[2] >= len(held), "the server holds every connection"
            )
            cpu_before, threads, _, resident = process_figures(process.pid)
            idle_from = time.monotonic()
            for sock in stalled:  # the server drops each stalled connection by itself
                assert read_to_end(sock) == b""
            cpu_after, _, _, _ = process_figures(process.pid)
            idle_for = time.monotonic() - idle_from
            front_page()
            with open_store(store_url) as store:
                Session(store.open("first")).user("a new message")
            answers = [responses(read_to_end(sock)) for sock in polls]
            front_page()
        assert {(a.status, json.loads(a.body)["changed"]) for (a,) in answers} == {(200, True)}
        print(
            f"front page: {len(latencies)} answers, slowest {max(latencies) * 1000:.0f} ms; "
            f"{threads} threads; {(cpu_after - cpu_before) / idle_for:.3f} of a core while holding "
            f"{len(polls)} long-polls; resident memory {resident_before} MiB idle, {resident} MiB "
            f"holding {len(held)} connections"
        )
        assert threads <= 8, f"{threads} threads for {len(held)} connections"
        assert max(latencies) < 1.0, [round(x * 1000) for x in latencies]
        assert (cpu_after - cpu_before) / idle_for < 0.1
        assert resident - resident_before < LOAD_MEMORY_MIB
    finally:
        for sock in held:
            sock.close()
        process.terminate()
        process.wait(timeout=30)
