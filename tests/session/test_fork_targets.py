"""Forks into the journals a runtime naturally has (issue 41): a journal that holds only its own header
(the fork takes its id, an annotation names the source), and `fork_to`, which creates the target itself
(a path, or a store and an id). The same for `AsyncSession`."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest

from tests.helpers.sessions import branching_session, fixed_clock
from waybook import GENESIS, AsyncSession, InMemoryJournal, JsonlJournal, Session
from waybook.journal import SessionJournal, check_fork, verify_file
from waybook.model import (
    Annotation,
    Header,
    InvalidArgumentError,
    InvalidRecordError,
    NewRecord,
    StorageError,
    UnknownNodeError,
)
from waybook.stores import JournalExistsError, open_async_store, open_store


def source() -> tuple[SessionJournal, Session]:
    journal = branching_session()
    ids = (f"f{i:02d}" for i in itertools.count())
    return journal, Session(journal, clock=fixed_clock(), ids=lambda: next(ids))


def copies_of(fork: SessionJournal) -> list[str]:
    return [r.id for r in fork.read() if not isinstance(r.body, Header | Annotation)]


def test_a_fork_into_a_journal_holding_only_its_header_takes_its_id(tmp_path: Path) -> None:
    journal, session = source()
    target = JsonlJournal.create(tmp_path / "retry.jsonl", journal_id="retry")  # today: refused
    fork = session.fork("e02", target)
    assert fork.leaf == "e02"
    records = list(target.read())
    assert isinstance(records[0].body, Header)
    assert records[0].body.journal == "retry"  # the header it had, kept
    assert [r.seq for r in records if r.id in ("e01", "e02")] == [2, 3]  # the source's seqs
    point = check_fork(target.read(), journal.read(), name="retry")
    assert (point.node, point.seq, point.journal) == ("e02", 3, "golden")
    reply = fork.assistant("Again.")
    assert reply.body.parent == "e02"  # type: ignore[union-attr]
    target.close()
    assert verify_file(tmp_path / "retry.jsonl").ok


def test_a_store_journal_created_with_its_header_takes_a_fork(tmp_path: Path) -> None:
    journal, session = source()
    with open_store(f"file:{tmp_path}/store") as store:
        fork = session.fork("e02", store.create("retry"))
        assert fork.journal.name
        point = check_fork(store.open("retry").read(), journal.read(), name="retry")
        assert point.node == "e02"


def test_a_fork_refuses_a_journal_id_other_than_its_headers_and_writes_nothing(tmp_path: Path) -> None:
    _, session = source()
    target = JsonlJournal.create(tmp_path / "retry.jsonl", journal_id="retry")
    with pytest.raises(InvalidArgumentError, match="already names itself 'retry'"):
        session.fork("e02", target, journal_id="other")
    assert target.head().seq == 1


@pytest.mark.parametrize(
    "header",
    [
        Header(journal="memory", creator="tests", role="working_memory"),
        Header(journal="old", creator="tests", metadata={"forked_from": {"journal": "x", "seq": 2}}),
    ],
    ids=["not a session", "names a fork already"],
)
def test_a_header_only_journal_that_cannot_take_a_fork_is_refused(header: Header) -> None:
    _, session = source()
    target = InMemoryJournal("taken")
    target.append([NewRecord(id="h", at="2026-12-01T09:00:00.000Z", body=header)], expected=GENESIS)
    with pytest.raises(InvalidRecordError, match="only its own session header"):
        session.fork("e02", target)
    assert target.head().seq == 1


def test_fork_to_a_path_creates_the_file_with_the_fork(tmp_path: Path) -> None:
    journal, session = source()
    path = tmp_path / "retry.jsonl"
    fork = session.fork_to("e02", path)
    assert fork.leaf == "e02"
    assert isinstance(fork.journal, JsonlJournal)
    header = next(iter(fork.journal.read())).body
    assert isinstance(header, Header)
    assert header.journal == "retry"  # the file's stem
    assert check_fork(fork.journal.read(), journal.read()).node == "e02"
    fork.journal.close()
    assert verify_file(path).ok


def test_fork_to_decides_first_and_creates_nothing_for_a_bad_node_or_a_taken_path(tmp_path: Path) -> None:
    _, session = source()
    path = tmp_path / "retry.jsonl"
    with pytest.raises(UnknownNodeError):
        session.fork_to("no-such-node", path)
    assert not path.exists()
    path.write_text("")
    with pytest.raises(StorageError, match="already exists"):
        session.fork_to("e02", path)
    assert path.read_text() == ""


def test_fork_to_a_store_creates_the_journal_under_the_given_id(tmp_path: Path) -> None:
    journal, session = source()
    with open_store(f"file:{tmp_path}/store") as store:
        fork = session.fork_to("e02", (store, "retry"))
        assert fork.leaf == "e02"
        header = next(iter(store.open("retry").read())).body
        assert isinstance(header, Header)
        assert header.journal == "retry"
        assert check_fork(store.open("retry").read(), journal.read()).node == "e02"
        with pytest.raises(JournalExistsError):
            session.fork_to("e02", (store, "retry"))
        with pytest.raises(UnknownNodeError):
            session.fork_to("no-such-node", (store, "other"))
        assert not store.exists("other")
        with pytest.raises(InvalidArgumentError, match="leave journal_id= out"):
            session.fork_to("e02", (store, "third"), journal_id="fourth")


@pytest.mark.parametrize("target", [None, 3, ("store", "id"), b"bytes.jsonl"])
def test_fork_to_refuses_what_is_not_a_path_or_a_store_and_an_id(target: object) -> None:
    _, session = source()
    with pytest.raises(InvalidArgumentError, match="fork_to takes"):
        session.fork_to("e02", target)


def test_the_async_session_forks_into_a_header_only_journal_and_to_new_targets(tmp_path: Path) -> None:
    journal = branching_session()

    async def scenario() -> None:
        session = await AsyncSession.open(journal, clock=fixed_clock())
        header_only = JsonlJournal.create(tmp_path / "kept.jsonl", journal_id="kept")
        kept = await session.fork("e02", header_only)
        assert kept.leaf == "e02"
        assert check_fork(header_only.read(), journal.read()).node == "e02"
        made = await session.fork_to("e02", tmp_path / "made.jsonl")
        assert made.leaf == "e02"
        with open_store(f"file:{tmp_path}/store") as store:
            in_store = await session.fork_to("e02", (store, "sync-store"))
            assert in_store.leaf == "e02"
            assert store.exists("sync-store")
        async_store = await open_async_store(f"sqlite:{tmp_path}/s.db")
        try:
            awaited = await session.fork_to("e02", (async_store, "async-store"))
            assert awaited.leaf == "e02"
            with pytest.raises(UnknownNodeError):
                await session.fork_to("nope", (async_store, "never"))
            assert not await async_store.exists("never")
        finally:
            await async_store.close()

    asyncio.run(scenario())
    assert verify_file(tmp_path / "made.jsonl").ok
