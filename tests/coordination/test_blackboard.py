"""The coordination port: a four-worker diamond with no central loop, in one process and across
processes on SQLite and PostgreSQL; deterministic receipts; failure and cancellation propagate; every
publish is a record of the coordination journal, so the run replays."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.coordination.diamond import DEPENDS, work
from tests.helpers.pg_fixtures import pg_store_url
from waybook.coordination import (
    Blackboard,
    DependencyFailedError,
    InvalidNoteError,
    Note,
    NoteExistsError,
    WaitTimeoutError,
    check_receipts,
    open_blackboard,
    replay_notes,
    run_worker,
)
from waybook.journal import InMemoryJournal

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0


def run_diamond(
    board: Blackboard,
    order: str = "DCBA",
    works: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None = None,
    gate: Mapping[str, threading.Event] | None = None,
) -> dict[str, Note]:
    """Start one thread per worker in `order`; each waits for its own dependencies only."""
    results: dict[str, Note] = {}

    def worker(key: str) -> None:
        if gate and key in gate:
            assert gate[key].wait(TIMEOUT)
        results[key] = run_worker(
            board, key, DEPENDS[key], (works or {}).get(key, work(key)), timeout=TIMEOUT
        )

    threads = [threading.Thread(target=worker, args=(key,)) for key in order]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
        assert not thread.is_alive()
    return results


def test_the_diamond_runs_without_a_central_loop() -> None:
    board = Blackboard()
    notes = run_diamond(board)
    assert {key: note.value for key, note in notes.items()} == {
        "A": {"rows": 3},
        "B": {"doubled": 6},
        "C": {"squared": 9},
        "D": {"sum": 15},
    }
    assert all(note.ok for note in notes.values())
    assert dict(notes["D"].depends) == {"B": notes["B"].receipt, "C": notes["C"].receipt}
    published = [note.key for note in board.notes().values()]
    assert published[0] == "A"
    assert published[-1] == "D"


def test_receipts_are_the_same_whatever_order_the_workers_ran_in() -> None:
    first = Blackboard()
    run_diamond(first, order="ABCD")
    # Hold B back until C has published, so the journal's order differs from the first run's.
    second = Blackboard()
    c_done = threading.Event()
    works = {"C": lambda inputs: (work("C")(inputs), c_done.set())[0]}
    run_diamond(second, order="DBCA", works=works, gate={"B": c_done})
    one, two = first.notes(), second.notes()
    assert [n.key for n in one.values()] != [n.key for n in two.values()]
    assert {k: n.receipt for k, n in one.items()} == {k: n.receipt for k, n in two.items()}


def test_the_run_replays_from_its_coordination_journal() -> None:
    journal = InMemoryJournal("coordination")
    board = Blackboard(journal)
    run_diamond(board)
    replayed = replay_notes(journal.read())
    assert replayed == board.notes()
    assert check_receipts(replayed) == []
    assert journal.head().seq == 5  # the header and one record per publish


def test_a_failure_propagates_to_every_dependant() -> None:
    def broken(_inputs: Mapping[str, Any]) -> Any:
        msg = "disk full"
        raise OSError(msg)

    board = Blackboard()
    notes = run_diamond(board, works={"B": broken})
    assert (notes["A"].status, notes["C"].status) == ("done", "done")
    assert notes["B"].status == "failed"
    assert notes["B"].reason == "OSError: disk full"
    assert notes["D"].status == "failed"
    assert notes["D"].reason == "dependency 'B' failed"
    assert dict(notes["D"].depends) == {"B": notes["B"].receipt}


def test_a_cancellation_propagates_and_the_cancelled_worker_does_not_publish() -> None:
    board = Blackboard()
    a_ran = threading.Event()
    board.cancel("A", "the operator stopped the run")
    notes = run_diamond(board, works={"A": lambda _inputs: a_ran.set()})
    assert {key: note.status for key, note in notes.items()} == dict.fromkeys("ABCD", "cancelled")
    assert notes["A"].reason == "the operator stopped the run"  # A's own publish was refused
    assert notes["B"].reason == "dependency 'A' cancelled"
    assert len(board.notes()) == 4


def test_a_key_is_published_once_and_a_second_publish_writes_nothing() -> None:
    board = Blackboard()
    board.publish("A", {"x": 1}, writer="w1")
    head = board.journal.head()
    with pytest.raises(NoteExistsError, match="published already"):
        board.publish("A", {"x": 2}, writer="w2")
    assert board.journal.head() == head
    assert board.get("A").value == {"x": 1}  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("key", "value", "status"),
    [("", None, "done"), (3, None, "done"), ("A", object(), "done"), ("A", None, "maybe")],
)
def test_a_bad_note_is_refused_before_anything_is_written(key: Any, value: Any, status: Any) -> None:
    board = Blackboard()
    with pytest.raises(InvalidNoteError):
        board.publish(key, value, status=status)
    assert board.journal.head().seq == 1


def test_a_wait_ends_typed_at_its_timeout_and_on_a_failed_dependency() -> None:
    board = Blackboard()
    with pytest.raises(WaitTimeoutError, match=r"\['A'\]"):
        board.wait(["A"], timeout=0)
    board.fail("A", "no input")
    with pytest.raises(DependencyFailedError, match="'A' is failed: no input"):
        board.wait(["A"], timeout=0)


def test_a_waiter_wakes_when_another_thread_publishes() -> None:
    board = Blackboard()
    got: list[dict[str, Note]] = []
    waiter = threading.Thread(target=lambda: got.append(board.wait(["A", "B"], timeout=TIMEOUT)))
    waiter.start()
    board.publish("A", 1)
    board.publish("B", 2)
    waiter.join(TIMEOUT)
    assert [note.value for note in got[0].values()] == [1, 2]


def diamond_in_processes(url: str) -> dict[str, dict[str, Any]]:
    command = [sys.executable, "-m", "tests.coordination.diamond", url]
    workers = [
        subprocess.Popen([*command, key], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for key in "DCBA"  # started in reverse: each waits for what it needs
    ]
    results = {}
    for process in workers:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err[-2000:]
        note = json.loads(out)
        results[note["key"]] = note
    return results


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_the_diamond_runs_across_processes_on_a_shared_board(engine: str, tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path}/board.db" if engine == "sqlite" else pg_store_url()
    results = diamond_in_processes(url)
    assert results["D"]["value"] == {"sum": 15}
    in_process = run_diamond(Blackboard())
    assert {k: r["receipt"] for k, r in results.items()} == {k: n.receipt for k, n in in_process.items()}
    with open_blackboard(url) as board:
        replayed = replay_notes(board.journal.read())
        assert replayed == board.notes()
        assert check_receipts(replayed) == []
        assert next(note.key for note in replayed.values()) == "A"


@pytest.mark.parametrize("where", ["memory", "sqlite"])
def test_a_wait_timeout_is_checked_nan_refused_and_infinity_waits_for_the_publish(
    tmp_path: Path, where: str
) -> None:
    """Issue 42.4: `Blackboard.wait(timeout=nan)` hung; infinity and a huge number must wait (never an
    OverflowError), NaN and non-numbers are refused before anything waits, 0 or less looks once."""
    board = Blackboard() if where == "memory" else open_blackboard(f"sqlite:{tmp_path}/b.db")
    with board:
        outcome: list[object] = []

        def wait(timeout: object) -> None:
            try:
                outcome.append(board.wait(["A"], timeout=timeout))  # type: ignore[arg-type]
            except Exception as exc:
                outcome.append(exc)

        for bad in (float("nan"), "1", True):
            thread = threading.Thread(target=wait, args=(bad,), daemon=True)
            thread.start()
            thread.join(TIMEOUT)
            assert not thread.is_alive(), f"wait(timeout={bad!r}) blocked"
            assert isinstance(outcome.pop(), InvalidNoteError)
        with pytest.raises(WaitTimeoutError):
            board.wait(["A"], timeout=-1)
        waiters = [threading.Thread(target=wait, args=(huge,)) for huge in (float("inf"), 1e300, 10**400)]
        for thread in waiters:
            thread.start()
        board.publish("A", 1, writer="a")
        for thread in waiters:
            thread.join(TIMEOUT)
        assert [got["A"].value for got in outcome] == [1, 1, 1]  # type: ignore[index]
