"""AsyncSession and the threaded async store: the same semantics and errors as the blocking API."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from waybook import AsyncSession, InMemoryJournal, JsonlJournal, Session, StaleWriterError
from waybook.journal import AsyncSessionJournal
from waybook.model import ParentMismatchError, UserMessage, text
from waybook.stores import AsyncJournalStore, ThreadedJournal, ThreadedStore, open_async_store, open_store

T = TypeVar("T")


def written(journal: InMemoryJournal) -> list[tuple[object, ...]]:
    """What a writer wrote, but for the salts of sealed records (fresh in each journal, so their bytes,
    digests and prevs differ between two journals of the same records: docs/erasure.md)."""
    return [(r.seq, r.id, r.at, r.batch, r.body, r.salt is not None) for r in journal.read()]


def run(make: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(make())  # type: ignore[arg-type]


def test_an_async_session_writes_the_same_records_as_a_blocking_one() -> None:
    clock = lambda: "2026-12-01T09:00:00.000Z"  # noqa: E731
    counter = iter(range(1000))
    ids = lambda: f"r{next(counter)}"  # noqa: E731

    async def write() -> list[bytes]:
        journal = InMemoryJournal()
        session = await AsyncSession.create(journal, journal_id="j", clock=clock, ids=ids)
        first = await session.user("hello")
        await session.assistant("hi", model="m")
        await session.branch_from(first.id, reason="retry")
        await session.assistant("hi again")
        await session.custom("ext.note", {"k": 1})
        await session.reset(reason="new topic")
        await session.system("fresh start")
        return written(journal)

    async_lines = run(write)
    counter = iter(range(1000))
    journal = InMemoryJournal()
    session = Session.create(journal, journal_id="j", clock=clock, ids=ids)
    first = session.user("hello")
    session.assistant("hi", model="m")
    session.branch_from(first.id, reason="retry")
    session.assistant("hi again")
    session.custom("ext.note", {"k": 1})
    session.reset(reason="new topic")
    session.system("fresh start")
    assert async_lines == written(journal)


def test_calls_on_one_session_commit_in_the_order_they_were_made() -> None:
    async def write() -> list[str]:
        session = await AsyncSession.create(InMemoryJournal())
        await asyncio.gather(*(session.user(f"message {i}") for i in range(50)))
        records = [r async for r in session.journal.read(after=1)]
        return [r.body.content[0].text for r in records]  # type: ignore[union-attr]

    assert run(write) == [f"message {i}" for i in range(50)]


def test_a_stale_async_writer_gets_the_same_error_and_sync_recovers(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"

    async def race() -> int:
        first = await AsyncSession.create(JsonlJournal(path), journal_id="j")
        second = await AsyncSession.open(JsonlJournal(path, create=False))
        await first.user("first wins")
        with pytest.raises(StaleWriterError):
            await second.user("second is stale")
        assert await second.sync() == 1
        await second.user("after sync")
        return second.head.seq

    assert run(race) == 3


def test_rule_errors_are_the_blocking_ones() -> None:
    async def bad() -> None:
        session = await AsyncSession.create(InMemoryJournal())
        await session.user("hi")
        await session.append(UserMessage(parent="nobody", content=text("orphan")))

    with pytest.raises(ParentMismatchError):
        run(bad)


def test_threaded_journals_and_stores_satisfy_the_async_protocols(tmp_path: Path) -> None:
    store = ThreadedStore(open_store(f"file:{tmp_path}/store"))
    assert isinstance(store, AsyncJournalStore)
    assert isinstance(ThreadedJournal(InMemoryJournal()), AsyncSessionJournal)
    run(store.close)


def test_an_async_store_creates_lists_feeds_and_tails(tmp_path: Path) -> None:
    async def scenario() -> list[tuple[str, int]]:
        store = await open_async_store(f"file:{tmp_path}/store")
        session = await AsyncSession.open(await store.create("s1", metadata={"user": "ada"}))
        assert [i.journal_id for i in await store.list(metadata={"user": "ada"})] == ["s1"]
        seen: list[tuple[str, int]] = []

        async def follow() -> None:
            async for entry in store.tail():
                if entry.journal_id == "s1":
                    seen.append((entry.journal_id, entry.seq))
                    if entry.seq == 3:
                        return

        follower = asyncio.create_task(follow())
        await session.user("one")
        await session.assistant("two")
        await asyncio.wait_for(follower, timeout=60)
        assert await store.exists("s1")
        receipt = await store.purge("s1", reason="erasure")
        assert receipt.records == 3
        await store.close()
        return seen

    assert run(scenario) == [("s1", 1), ("s1", 2), ("s1", 3)]


def test_reading_in_chunks_returns_every_record_once() -> None:
    async def read() -> tuple[list[int], list[int], int]:
        session = await AsyncSession.create(InMemoryJournal())
        for i in range(1200):
            await session.user(f"m{i}") if i % 2 == 0 else await session.assistant(f"a{i}")
        journal = session.journal
        everything = [r.seq async for r in journal.read()]
        window = [r.seq async for r in journal.read(after=100, limit=700)]
        lines = [line async for line in journal.read_lines(after=5)]
        return everything, window, len(lines)

    everything, window, lines = run(read)
    assert everything == list(range(1, 1202))
    assert window == list(range(101, 801))
    assert lines == 1196


def test_a_turn_and_a_subagent_link_write_what_the_blocking_session_writes() -> None:
    from waybook._session import ToolOutcome
    from waybook.model import ToolCallBlock

    clock = lambda: "2026-12-01T09:00:00.000Z"  # noqa: E731
    call = ToolCallBlock(call_id="c1", name="bash", arguments={"cmd": "ls"})

    def ids_from_zero() -> Callable[[], str]:
        counter = iter(range(1000))
        return lambda: f"r{next(counter)}"

    async def write() -> list[bytes]:
        journal = InMemoryJournal()
        session = await AsyncSession.create(journal, journal_id="j", clock=clock, ids=ids_from_zero())
        await session.user("list the files")
        await session.turn([call], [ToolOutcome("c1", "a.txt")])
        await session.link_subagent("child-journal", call_id="c1", agent="helper")
        await session.assistant("one file: a.txt")
        return written(journal)

    journal = InMemoryJournal()
    session = Session.create(journal, journal_id="j", clock=clock, ids=ids_from_zero())
    session.user("list the files")
    session.turn([call], [ToolOutcome("c1", "a.txt")])
    session.link_subagent("child-journal", call_id="c1", agent="helper")
    session.assistant("one file: a.txt")
    assert run(write) == written(journal)


def test_an_unpaired_async_turn_is_refused_like_a_blocking_one() -> None:
    from waybook.model import ToolCallBlock, ToolPairingError

    async def unpaired() -> None:
        session = await AsyncSession.create(InMemoryJournal())
        await session.user("go")
        await session.turn([ToolCallBlock(call_id="c1", name="bash", arguments={})], [])

    with pytest.raises(ToolPairingError):
        run(unpaired)


def test_an_async_session_keeps_an_oversized_tool_result_as_a_blob_and_refuses_it_without_one(
    tmp_path: Path,
) -> None:
    from waybook.model import BlobBlock
    from waybook.stores._blobs import BlobTooLargeError

    output = "compiler output\n" * 40_000  # 640 KB: over the 256 KiB inline limit

    async def write() -> None:
        with open_store(f"file:{tmp_path / 's'}") as store:
            session = await AsyncSession.create(store.create("with"), blobs=store.blobs)
            await session.user("build it")
            result = await session.tool_result("c1", output, tool_name="bash")
            (block,) = result.body.content  # type: ignore[union-attr]
            assert isinstance(block, BlobBlock)
            assert store.blobs.read(block.digest) == output.encode()
            bare = await AsyncSession.create(store.create("without"))
            head = bare.head
            with pytest.raises(BlobTooLargeError, match=r"blobs=store\.blobs"):
                await bare.tool_result("c1", output)
            assert bare.head == head, "nothing was written"

    run(write)


def test_an_async_compaction_records_the_revision_it_summarized_as_a_blocking_one_does() -> None:
    from waybook.model import Compaction
    from waybook.projections import RequestContext

    plan = RequestContext(model="m-1", system="Be brief.")
    clock = lambda: "2026-12-01T09:00:00.000Z"  # noqa: E731

    def ids_from_zero() -> Callable[[], str]:
        counter = iter(range(1000))
        return lambda: f"r{next(counter)}"

    async def write() -> list[bytes]:
        journal = InMemoryJournal()
        session = await AsyncSession.create(journal, journal_id="j", clock=clock, ids=ids_from_zero())
        await session.user("count the rows")
        await session.assistant("3 rows", usage={"input": 900, "output": 40}, request=plan)
        await session.compact("Counted the rows.", first_kept=None)
        await session.compact("Again, with a revision given.", first_kept=None, revision="r-given")
        return written(journal)

    journal = InMemoryJournal()
    session = Session.create(journal, journal_id="j", clock=clock, ids=ids_from_zero())
    session.user("count the rows")
    session.assistant("3 rows", usage={"input": 900, "output": 40}, request=plan)
    measured = session.compact("Counted the rows.", first_kept=None)
    session.compact("Again, with a revision given.", first_kept=None, revision="r-given")
    assert isinstance(measured.body, Compaction)
    assert measured.body.details is not None
    assert "summarized_revision" in measured.body.details
    assert run(write) == written(journal)


def test_every_method_of_an_async_session_runs_and_checks_only_when_awaited() -> None:
    import inspect

    from waybook.codecs import UnregisteredValueError

    shared = [
        n
        for n in dir(Session)
        if not n.startswith("_") and callable(getattr(Session, n)) and hasattr(AsyncSession, n)
    ]
    assert {"create", "fork", "turn", "user", "custom", "compact", "sync"} <= set(shared)
    assert [n for n in shared if not inspect.iscoroutinefunction(getattr(AsyncSession, n))] == []

    async def write() -> int:
        journal = InMemoryJournal()
        session = await AsyncSession.create(journal, journal_id="j")
        never = session.custom("ext.note", object())  # no check, no write until awaited
        assert journal.head().seq == 1
        with pytest.raises(UnregisteredValueError):
            await never
        return journal.head().seq

    assert run(write) == 1
