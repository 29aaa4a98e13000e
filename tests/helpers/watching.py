"""Replaying real sessions into a watched folder as their agents wrote them, and a `waybook watch` process
to kill and start again (issue 47's tests).

`interleaved(groups)` orders the lines of several session files as their agents wrote them: each file's
lines in order, the files merged by the lines' timestamps (a line without one takes its file's previous),
so a sub-agent's first line comes before the session line written after it. `WatchProcess` runs the
command in its own process (this checkout's code first on PYTHONPATH) and collects its `--json` events.
`await_until` polls a condition until it holds or a deadline passes: tests wait for exact state, never
for a time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from tests.helpers.paths import ROOT
from waybook.stores import open_store


def interleaved(files: Sequence[tuple[Path, Path]]) -> list[tuple[Path, bytes]]:
    """(target, line with its newline) for every line of each (source, target) file, merged by time."""
    queues: list[list[tuple[str, bytes]]] = []
    for source, _ in files:
        stamped, last = [], ""
        for line in source.read_bytes().splitlines(keepends=True):
            try:
                value = json.loads(line)
            except ValueError:
                value = {}
            stamp = value.get("timestamp") if isinstance(value, dict) else None
            last = stamp if isinstance(stamp, str) and stamp else last
            stamped.append((last, line))
        queues.append(stamped)
    heads = [0] * len(files)
    order: list[tuple[Path, bytes]] = []
    while True:
        live = [i for i in range(len(files)) if heads[i] < len(queues[i])]
        if not live:
            return order
        pick = min(live, key=lambda i: (queues[i][heads[i]][0], i))
        order.append((files[pick][1], queues[pick][heads[pick]][1]))
        heads[pick] += 1


def await_until(check: Callable[[], Any], *, timeout: float = 120.0, what: str = "the state") -> Any:
    """Poll `check` until it returns something true (returned), or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            found = check()
        except Exception as exc:  # the store or a file mid-change: look again
            last_error, found = exc, None
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(
        f"{what} did not come within {timeout:g} s" + (f" ({last_error!r})" if last_error else "")
    )


def journal_lines(url: str) -> dict[str, list[bytes]]:
    """Every session journal of the store at `url`: its lines, by journal id."""
    with open_store(url, create=False) as store:
        out: dict[str, list[bytes]] = {}
        cursor = None
        while True:
            page = store.list(role="session", after=cursor, limit=500)
            for info in page:
                with store.open(info.journal_id) as journal:
                    out[info.journal_id] = list(journal.read_lines())
            cursor = page.cursor
            if cursor is None:
                return out


def catalog_metadata(url: str, journal_id: str) -> dict[str, Any]:
    with open_store(url, create=False) as store:
        for info in store.list(limit=1000):
            if info.journal_id == journal_id:
                return dict(info.metadata)
    raise KeyError(journal_id)


class WatchProcess:
    """`waybook watch ARGS --json` in its own process, started again after each kill."""

    def __init__(self, args: Sequence[str], *, cwd: Path) -> None:
        self.args = list(args)
        self.cwd = cwd
        self.events: list[dict[str, Any]] = []
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self._lock = threading.Lock()

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        with (self.cwd / "watch.stderr").open("ab") as stderr:  # every start appends: shown on a failure
            self.process = subprocess.Popen(
                [sys.executable, "-m", "waybook", "watch", *self.args, "--json"],
                cwd=self.cwd,
                env=env,
                stdout=subprocess.PIPE,
                stderr=stderr,
            )
        self.starts += 1
        threading.Thread(target=self._read, args=(self.process,), daemon=True).start()

    def stderr_tail(self, size: int = 4000) -> str:
        try:
            return (self.cwd / "watch.stderr").read_bytes()[-size:].decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def _read(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            with self._lock:
                self.events.append(json.loads(line))

    def kill(self) -> None:
        """SIGKILL: no cleanup of any kind runs."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=60)

    def stop(self) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=60)

    def seen(self, **fields: Any) -> list[dict[str, Any]]:
        with self._lock:
            return [e for e in self.events if all(e.get(k) == v for k, v in fields.items())]

    def await_event(self, *, timeout: float = 120.0, **fields: Any) -> dict[str, Any]:
        found = await_until(lambda: self.seen(**fields), timeout=timeout, what=f"a watch event {fields}")
        return found[0]  # type: ignore[no-any-return]


def write_lines(target: Path, lines: Iterable[bytes]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("ab") as out:
        for line in lines:
            out.write(line)
