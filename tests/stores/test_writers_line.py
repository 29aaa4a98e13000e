"""The SQLite store's writers take turns in one process too (waybook/stores/_writer_queue.py): a writer
back for its next turn stands behind the threads already waiting, whoever the kernel runs first. A
full run on a loaded machine once left one of eight writer threads of one process with 10 appends
while another made 154: the writer that released the `flock` was still on its core and took it again
before the woken waiters ran."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from waybook._tickets import TicketLine
from waybook.stores._writer_queue import WritersQueue, _line_of

WAIT = 60.0
"""A bound only: reached when a test fails."""


def test_a_writer_back_for_its_next_turn_waits_behind_the_writers_already_waiting() -> None:
    line = TicketLine()
    first = line.take()
    assert line.wait(first, WAIT)
    waiting = [line.take(), line.take()]  # two writers came while the first wrote
    served: list[str] = []

    def writer(name: str, ticket: int) -> None:
        assert line.wait(ticket, WAIT)
        served.append(name)
        line.leave(ticket)

    threads = [threading.Thread(target=writer, args=(n, t)) for n, t in zip("BC", waiting, strict=True)]
    for thread in threads:
        thread.start()
    line.leave(first)
    again = line.take()  # the first writer, straight back for its next append
    assert line.wait(again, WAIT)
    served.append("A")
    line.leave(again)
    for thread in threads:
        thread.join(WAIT)
    assert served == ["B", "C", "A"]


def test_a_wait_that_timed_out_leaves_the_line_without_holding_up_the_writers_behind_it() -> None:
    line = TicketLine()
    first, gives_up, after = line.take(), line.take(), line.take()
    assert line.wait(first, WAIT)
    assert not line.wait(gives_up, 0.0)  # its turn has not come: it gives up
    line.leave(gives_up)
    line.leave(first)
    assert line.wait(after, 0.0)  # served at once: the abandoned ticket is skipped
    line.leave(after)


def test_a_turn_that_timed_out_holds_nothing_and_the_next_writer_gets_the_lock(tmp_path: Path) -> None:
    queue = WritersQueue(tmp_path / "store.db")
    took = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with queue.turn(WAIT) as held:
            assert held
            took.set()
            release.wait(WAIT)

    thread = threading.Thread(target=holder)
    thread.start()
    assert took.wait(WAIT)
    with queue.turn(0.0) as held:
        assert not held  # its turn did not come in time
    release.set()
    thread.join(WAIT)
    with queue.turn(WAIT) as held:
        assert held


def test_a_child_made_by_fork_starts_with_no_line_of_its_parents_threads(tmp_path: Path) -> None:
    queue = WritersQueue(tmp_path / "store.db")
    with queue.turn(WAIT) as held:
        assert held
        pid = os.fork()
        if pid == 0:  # the child: its parent's turn is not in its line (only in the flock it waits on)
            line = _line_of(queue.path)
            ticket = line.take()
            os._exit(0 if ticket == 0 and line.wait(ticket, 0.0) else 1)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
