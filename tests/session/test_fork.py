"""Forking a session into a new journal: history copied verbatim up to a node, provenance proved."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.sessions import branching_session, fixed_clock
from waybook import InMemoryJournal, JsonlJournal, Session
from waybook.journal import ForkProvenanceError, check_fork, fork_point
from waybook.model import Header, InvalidRecordError, NewRecord, UnknownNodeError
from waybook.projections import TreeProjection, replay


def source() -> tuple[InMemoryJournal, Session]:
    journal = branching_session()
    ids = (f"f{i:02d}" for i in itertools.count())
    return journal, Session(journal, clock=fixed_clock(), ids=lambda: next(ids))  # type: ignore[arg-type]


def test_a_fork_copies_the_history_up_to_the_node_and_names_where_it_came_from() -> None:
    journal, session = source()
    before = list(journal.read_lines())
    node = "e05"  # "It is a shopping note": on the branch the session later left
    target = InMemoryJournal("forked")
    fork = session.fork(node, target, journal_id="forked")
    records = list(target.read())
    header = records[0].body
    assert isinstance(header, Header)
    original = {r.seq: r for r in journal.read()}
    assert header.journal == "forked"
    assert header.metadata["forked_from"] == {
        "journal": "golden",
        "seq": original[6].seq,
        "digest": original[6].digest,
        "node": node,
        "at": header.metadata["forked_from"]["at"],
    }
    assert header.metadata["tools"] == original[1].body.metadata["tools"]  # type: ignore[union-attr]
    assert [(r.seq, r.id, r.at, r.body) for r in records[1:]] == [
        (r.seq, r.id, r.at, r.body) for r in list(journal.read())[1:6]
    ]
    assert fork.leaf == node
    assert list(journal.read_lines()) == before  # the source is untouched
    assert check_fork(target.read(), journal.read(), name="forked") == fork_point(header)


def test_the_forked_session_continues_from_the_node() -> None:
    _journal, session = source()
    target = InMemoryJournal("forked")
    fork = session.fork("e02", target)
    reply = fork.assistant("Let me read it with a different tool.")
    tree = replay(TreeProjection(), target)
    assert tree.path_to(reply.id) == ("e01", "e02", reply.id)
    assert reply.body.parent == "e02"


def test_a_fork_is_written_in_one_batch() -> None:
    _, session = source()
    target = InMemoryJournal("forked")
    session.fork("e05", target)
    places = [r.batch for r in target.read()]
    assert places == [(i, len(places)) for i in range(1, len(places) + 1)]


@pytest.mark.parametrize(
    ("node", "error", "message"),
    [
        ("nope", UnknownNodeError, "is not in the journal"),
        ("e06", UnknownNodeError, "is not a node"),  # the leaf move
    ],
)
def test_a_fork_at_something_that_is_not_a_node_writes_nothing(
    node: str, error: type[Exception], message: str
) -> None:
    _, session = source()
    target = InMemoryJournal("forked")
    with pytest.raises(error, match=message):
        session.fork(node, target)
    assert target.head().seq == 0


def test_a_fork_is_refused_into_a_journal_that_has_records() -> None:
    _, session = source()
    target = InMemoryJournal("taken")
    Session.create(target, journal_id="taken").user("already here")  # more than its own header
    with pytest.raises(InvalidRecordError, match="only its own session header"):
        session.fork("e02", target)
    assert target.head().seq == 2


def test_check_fork_refuses_a_fork_whose_provenance_does_not_match() -> None:
    journal, session = source()
    target = InMemoryJournal("forked")
    session.fork("e05", target)
    records = list(target.read())
    point = records[0].body.metadata["forked_from"]  # type: ignore[union-attr]
    forged_header = Header(
        journal="forged", creator="x", metadata={"forked_from": {**point, "digest": "0" * 64}}
    )
    forged = InMemoryJournal("forged")
    batch = [NewRecord(id="h", at=records[0].at, body=forged_header)]
    batch += [NewRecord(id=r.id, at=r.at, body=r.body) for r in records[1:]]
    forged.append(batch, expected=forged.head())
    with pytest.raises(ForkProvenanceError, match="digest"):
        check_fork(forged.read(), journal.read(), name="forged")
    other, _ = source()
    with pytest.raises(ForkProvenanceError, match="no fork provenance"):
        check_fork(other.read(), journal.read())


def test_a_fork_of_a_fork_names_its_own_source() -> None:
    _, session = source()
    first = InMemoryJournal("first")
    fork = session.fork("e05", first, journal_id="first")
    second = InMemoryJournal("second")
    fork.fork("e03", second, journal_id="second")
    header = next(iter(second.read())).body
    assert fork_point(header).journal == "first"  # type: ignore[arg-type, union-attr]
    assert check_fork(second.read(), first.read()).seq == 4


def waybook(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "waybook.cli", *args], capture_output=True, text=True, check=False
    )


def test_waybook_fork_writes_a_new_file_and_leaves_the_source_alone(tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    with JsonlJournal(path) as journal:
        branching_session(journal)
    before = path.read_bytes()
    out = tmp_path / "retry.jsonl"
    run = waybook("fork", str(path), "e0", "-o", str(out))
    assert run.returncode == 2
    assert "ambiguous" in run.stderr
    run = waybook("fork", str(path), "e05", "-o", str(out), "--json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["leaf"] == "e05"
    assert report["forked_from"]["seq"] == 6
    assert path.read_bytes() == before
    with JsonlJournal(out, readonly=True) as forked, JsonlJournal(path, readonly=True) as original:
        assert check_fork(forked.read(), original.read()).node == "e05"
    again = waybook("fork", str(path), "e05", "-o", str(out))
    assert again.returncode == 2
    assert "already exists" in again.stderr
    assert waybook("verify", str(out)).returncode == 0


def test_waybook_fork_in_a_store(tmp_path: Path) -> None:
    from waybook.stores import open_store

    url = f"sqlite:{tmp_path}/store.db"
    with open_store(url) as store:
        branching_session(store.create("golden", header=False))
    run = waybook("fork", "golden", "e05", "-o", "retry", "--store", url)
    assert run.returncode == 0, run.stderr
    assert "retry: forked golden at e05 (seq 6)" in run.stdout
    with open_store(url) as store:
        assert check_fork(store.open("retry").read(), store.open("golden").read()).seq == 6
    again = waybook("fork", "golden", "e05", "-o", "retry", "--store", url)
    assert again.returncode == 2
    assert "already a journal" in again.stderr
