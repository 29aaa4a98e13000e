"""`AsyncSession.fork`: `Session.fork` awaited, with the same records, semantics and errors
(tests/session/test_fork.py holds the blocking twins)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from tests.helpers.sessions import branching_session, fixed_clock
from waybook import AsyncSession, InMemoryJournal, JsonlJournal, Session
from waybook.journal import check_fork, fork_point, verify_file
from waybook.model import Header, InvalidArgumentError, InvalidRecordError, UnknownNodeError
from waybook.projections import TreeProjection, replay
from waybook.stores import ThreadedJournal

T = TypeVar("T")


def run(make: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(make())  # type: ignore[arg-type]


def fork_ids() -> Callable[[], str]:
    ids = (f"f{i:02d}" for i in itertools.count())
    return lambda: next(ids)


async def async_source(journal: InMemoryJournal) -> AsyncSession:
    return await AsyncSession.open(journal, clock=fixed_clock(), ids=fork_ids())


def test_an_async_fork_writes_the_records_a_blocking_fork_writes() -> None:
    journal = branching_session()
    before = list(journal.read_lines())
    blocking = InMemoryJournal("forked")
    Session(journal, clock=fixed_clock(), ids=fork_ids()).fork("e05", blocking, journal_id="forked")

    async def fork() -> tuple[InMemoryJournal, str | None]:
        target = InMemoryJournal("forked")
        forked = await (await async_source(journal)).fork("e05", target, journal_id="forked")
        return target, forked.leaf

    target, leaf = run(fork)
    assert list(target.read_lines()) == list(blocking.read_lines())
    assert leaf == "e05"
    header = next(iter(target.read())).body
    assert isinstance(header, Header)
    assert header.metadata["forked_from"]["node"] == "e05"
    assert check_fork(target.read(), journal.read(), name="forked") == fork_point(header)
    assert list(journal.read_lines()) == before  # the source is untouched


def test_the_async_forked_session_continues_from_the_node() -> None:
    journal = branching_session()

    async def continue_fork() -> tuple[InMemoryJournal, str, str | None]:
        target = InMemoryJournal("forked")
        fork = await (await async_source(journal)).fork("e02", target)
        reply = await fork.assistant("Let me read it with a different tool.")
        return target, reply.id, reply.body.parent  # type: ignore[union-attr]

    target, reply, parent = run(continue_fork)
    assert replay(TreeProjection(), target).path_to(reply) == ("e01", "e02", reply)
    assert parent == "e02"


def test_an_async_fork_is_written_in_one_batch() -> None:
    journal = branching_session()
    target = InMemoryJournal("forked")

    async def fork() -> None:
        await (await async_source(journal)).fork("e05", target)

    run(fork)
    places = [r.batch for r in target.read()]
    assert places == [(i, len(places)) for i in range(1, len(places) + 1)]


@pytest.mark.parametrize(
    ("node", "error", "message"),
    [
        ("nope", UnknownNodeError, "is not in the journal"),
        ("e06", UnknownNodeError, "is not a node"),  # the leaf move
    ],
)
def test_an_async_fork_at_something_that_is_not_a_node_writes_nothing(
    node: str, error: type[Exception], message: str
) -> None:
    journal = branching_session()
    target = InMemoryJournal("forked")

    async def fork() -> None:
        await (await async_source(journal)).fork(node, target)

    with pytest.raises(error, match=message):
        run(fork)
    assert target.head().seq == 0


def test_an_async_fork_is_refused_into_a_journal_that_has_records() -> None:
    journal = branching_session()
    target = InMemoryJournal("taken")
    Session.create(target, journal_id="taken").user("already here")  # more than its own header

    async def fork() -> None:
        await (await async_source(journal)).fork("e02", target)

    with pytest.raises(InvalidRecordError, match="only its own session header"):
        run(fork)
    assert target.head().seq == 2


def test_an_async_fork_of_a_fork_names_its_own_source() -> None:
    journal = branching_session()
    first, second = InMemoryJournal("first"), InMemoryJournal("second")

    async def forks() -> None:
        fork = await (await async_source(journal)).fork("e05", first, journal_id="first")
        await fork.fork("e03", second, journal_id="second")

    run(forks)
    header = next(iter(second.read())).body
    assert fork_point(header).journal == "first"  # type: ignore[arg-type]
    assert check_fork(second.read(), first.read()).seq == 4


def test_an_async_fork_takes_an_awaited_journal_as_well_as_a_blocking_one(tmp_path: Path) -> None:
    journal = branching_session()
    path = tmp_path / "forked.jsonl"

    async def fork() -> None:
        with JsonlJournal(path) as target:
            forked = await (await async_source(journal)).fork("e05", ThreadedJournal(target))
            assert isinstance(forked.journal, ThreadedJournal)
            await forked.user("Try again, briefly.")

    run(fork)
    with JsonlJournal(path, readonly=True) as forked:
        assert check_fork(forked.read(), journal.read()).node == "e05"
        assert forked.head().seq == 7
    assert verify_file(path).ok


@pytest.mark.parametrize("target", ["retry.jsonl", None], ids=["a path", "None"])
def test_a_fork_into_something_that_is_not_a_journal_is_refused_typed(target: object) -> None:
    journal = branching_session()
    with pytest.raises(InvalidArgumentError, match=r"^Session\.fork takes a journal"):
        Session(journal).fork("e05", target)  # type: ignore[arg-type]

    async def fork() -> None:
        await (await AsyncSession.open(journal)).fork("e05", target)  # type: ignore[arg-type]

    with pytest.raises(InvalidArgumentError, match=r"^AsyncSession\.fork takes a journal"):
        run(fork)
