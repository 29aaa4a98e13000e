"""Shared by the canonical memory authority's tests: a misbehaving canonical journal, the agent's pin and
nominations, a write that bypasses the authority, and the exact state of a host call waiting its turn."""

from __future__ import annotations

import inspect
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from tests.helpers.builders import AT
from waybook.journal import InMemoryJournal
from waybook.journal._roles.memory_text import content_digest
from waybook.memory import Authority
from waybook.memory.canonical._nominations import Nomination
from waybook.model import Head, MemoryWrite, NewRecord

WAIT = 60.0
"""The bound on every wait for another thread: generous, since it is only reached when a test fails."""


class Probe:
    """A journal wrapper that counts calls and can misbehave once: a racing write, a lost reply, a crash."""

    def __init__(self, inner: InMemoryJournal) -> None:
        self.inner = inner
        self.appends = 0
        self.reads = 0
        self.before_append: Callable[[], None] | None = None
        self.after_append: BaseException | None = None
        self.gate: threading.Event | None = None

    @property
    def name(self) -> str:
        return self.inner.name

    def head(self) -> Head:
        return self.inner.head()

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> Any:
        self.appends += 1
        if self.gate is not None:
            self.gate.wait(WAIT)  # a bound only: the test opens the gate itself
        if self.before_append is not None:
            hook, self.before_append = self.before_append, None
            hook()
        result = self.inner.append(records, expected=expected)
        if self.after_append is not None:
            error, self.after_append = self.after_append, None
            raise error
        return result

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Any]:
        self.reads += 1
        return self.inner.read(after, limit)

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        self.reads += 1
        return self.inner.read_lines(after, limit)

    def flush(self) -> None: ...
    def close(self) -> None: ...


def pin_of(authority: Authority) -> Head:
    return authority.agent.query().head  # type: ignore[attr-defined, no-any-return]


def nominate(authority: Authority, facts: dict[str, str], request: str = "r1") -> Nomination:
    authority.agent.remember(request, facts)  # type: ignore[attr-defined]
    return authority.agent.nominate(sorted(facts), "shared", "facts")  # type: ignore[attr-defined, no-any-return]


def foreign_write(journal: InMemoryJournal, path: str, text: str) -> None:
    prior = None
    body = MemoryWrite(path=path, text=text, digest=content_digest(text), prior=prior, command="foreign")
    journal.append([NewRecord(id=f"foreign-{journal.head().seq}", at=AT, body=body)], expected=journal.head())


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll for `condition` (a state, never the passing of time) for WAIT seconds at most."""
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen within {WAIT:.0f} s"
        time.sleep(0.001)


def blocking_wait_line() -> int:
    """The line of `threading.Condition.wait` where a waiter sleeps until notified (after its lock is
    released, inside the `try` that restores it)."""
    lines, first = inspect.getsourcelines(threading.Condition.wait)
    opened = next(i for i, line in enumerate(lines) if line.strip().startswith("try:"))
    return first + next(i for i in range(opened, len(lines)) if "waiter.acquire()" in lines[i])


def asleep_in_line(thread: threading.Thread) -> bool:
    """Whether `thread` sleeps waiting for its turn: its innermost frame is Condition.wait's blocking
    acquire, called (through `Condition.wait_for` and `TicketLine.wait`) from `Turns.turn`, and (where
    /proc tells) the kernel has the thread asleep, so a signal now interrupts that wait and nothing
    else."""
    frame = sys._current_frames().get(thread.ident or -1)
    if frame is None or frame.f_code is not threading.Condition.wait.__code__:
        return False
    if frame.f_lineno != blocking_wait_line():
        return False
    callers = []
    caller = frame.f_back
    while caller is not None and len(callers) < 3:
        callers.append(caller.f_code.co_qualname)
        caller = caller.f_back
    if callers != ["Condition.wait_for", "TicketLine.wait", "Turns.turn"]:
        return False
    stat = Path(f"/proc/self/task/{thread.native_id}/stat")
    return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "S"
