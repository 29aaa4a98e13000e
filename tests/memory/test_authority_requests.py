"""What the canonical authority takes and reads, as the design says (issue 40): requests carry `v: 1`,
the canonical feed is read page by page with every malformed page an IntegrityError and every page
bounded as it is read, and two handles on one physical store are refused by the design's message."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.authority import Probe, foreign_write, nominate, pin_of
from waybook.journal import InMemoryJournal, JsonlJournal
from waybook.memory import AUTHORITY_LIMITS, ProfileError, RequestError, Route, create_async_authority
from waybook.memory import create_authority as make
from waybook.model import CapacityError, Head, IntegrityError
from waybook.stores import open_store

ROUTES = [Route("shared", frozenset({"facts"}))]
NOT_DISTINCT = "Working and canonical memory must be distinct physical authorities"


def authority(canonical: Any = None, **journals: Any) -> Any:
    return make(
        working=journals.get("working", InMemoryJournal("working")),
        canonical=canonical if canonical is not None else InMemoryJournal("canonical"),
        routes=ROUTES,
        actor="host",
        pins=journals.get("pins", InMemoryJournal("pins")),
    )


# --- v: 1 -------------------------------------------------------------------------------------------


def test_every_call_takes_v_1() -> None:
    canonical = InMemoryJournal("canonical")
    mine = authority(canonical)
    agent, host = mine.agent, mine.host
    agent.remember("r1", {"/memories/a.md": "a"}, v=1)
    nomination = agent.nominate(["/memories/a.md"], "shared", "facts", v=1)
    assert agent.query(v=1).records == ()
    assert agent.explain("/memories/a.md", v=1).present is False
    receipt = host.adopt_nomination(pin_of(mine), nomination, v=1)
    foreign_write(canonical, "/memories/b.md", "b")
    assert host.advance_canonical(receipt.new, canonical.head(), v=1).status == "advanced"


@pytest.mark.parametrize("version", [2, 0, "1", 1.0, True, None])
def test_a_request_of_another_version_is_refused_with_the_designs_type_error(version: Any) -> None:
    canonical = InMemoryJournal("canonical")
    mine = authority(canonical)
    nomination = nominate(mine, {"/memories/a.md": "a"})
    pin = pin_of(mine)
    with pytest.raises(TypeError, match=r"^Invalid canonical memory advance request: v must be 1"):
        mine.host.advance_canonical(pin, pin, v=version)
    with pytest.raises(RequestError, match=r"^Invalid memory adoption request: v must be 1"):
        mine.host.adopt_nomination(pin, nomination, v=version)
    for call, args in (
        ("remember", ("r2", {"/memories/b.md": "b"})),
        ("query", ()),
        ("explain", ("/memories/a.md",)),
        ("nominate", (["/memories/a.md"], "shared", "facts")),
    ):
        with pytest.raises(RequestError, match=rf"^Invalid memory {call} request: v must be 1"):
            getattr(mine.agent, call)(*args, v=version)
    assert canonical.head().seq == 1
    assert pin_of(mine) == pin


def test_the_async_faces_take_v_1_and_refuse_other_versions() -> None:
    async def scenario() -> None:
        canonical = InMemoryJournal("canonical")
        mine = create_async_authority(
            working=InMemoryJournal("w"),
            canonical=canonical,
            routes=ROUTES,
            actor="h",
            pins=InMemoryJournal("p"),
        )
        await mine.agent.remember("r1", {"/memories/a.md": "a"}, v=1)
        nomination = await mine.agent.nominate(["/memories/a.md"], "shared", "facts", v=1)
        pin = (await mine.agent.query(v=1)).head
        assert (await mine.host.adopt_nomination(pin, nomination, v=1)).status == "adopted"
        with pytest.raises(RequestError, match=r"^Invalid canonical memory advance request"):
            mine.host.advance_canonical(pin, pin, v=2)
        with pytest.raises(RequestError, match=r"^Invalid memory explain request"):
            await mine.agent.explain("/memories/a.md", v=2)

    asyncio.run(scenario())


# --- the feed, page by page --------------------------------------------------------------------------


class Feed(Probe):
    """A canonical journal whose `read_lines` returns what a test gives it (once), else the real lines."""

    def __init__(self, inner: InMemoryJournal) -> None:
        super().__init__(inner)
        self.page: Any = None
        self.pulled = 0

    def read_lines(self, after: int = 0, limit: int | None = None) -> Any:
        if self.page is None:
            return self.inner.read_lines(after, limit)
        page, self.page = self.page, None
        return page


def advanced_over_a_bad_page(page: Any, *, records: int = 2) -> tuple[Any, Feed, Head]:
    feed = Feed(InMemoryJournal("canonical"))
    mine = authority(feed)
    for i in range(records):
        foreign_write(feed.inner, f"/memories/f{i}.md", f"fact {i}")
    feed.page = page(feed) if callable(page) else page
    return mine, feed, pin_of(mine)


def real_lines(feed: Feed) -> list[bytes]:
    return list(feed.inner.read_lines(1))


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(lambda feed: [line.decode() for line in real_lines(feed)], id="str items"),
        pytest.param(lambda feed: [real_lines(feed)[0], None], id="a None item"),
        pytest.param(42, id="not iterable"),
        pytest.param(object(), id="an object, not a page"),
        pytest.param(lambda feed: [*real_lines(feed), real_lines(feed)[0]], id="more records than asked"),
        pytest.param(lambda feed: [bytearray(line) for line in real_lines(feed)], id="bytearray items"),
    ],
)
def test_a_malformed_feed_page_is_an_integrity_error_and_the_pin_stays(page: Any) -> None:
    mine, feed, pin = advanced_over_a_bad_page(page)
    with pytest.raises(IntegrityError, match=r"^The canonical change feed returned an invalid page"):
        mine.host.advance_canonical(pin, feed.head())
    assert pin_of(mine) == pin
    assert mine.host.advance_canonical(pin, feed.head()).status == "advanced"  # a good page goes through


def test_a_page_is_bounded_as_it_is_read_not_after() -> None:
    chunk = b"x" * (8 * 1024 * 1024)
    pulled: list[int] = []

    def huge(_feed: Feed) -> Iterator[bytes]:
        for i in range(1_000):
            pulled.append(i)
            yield chunk  # one object, yielded again and again: 8 GiB if it were all read

    mine, feed, pin = advanced_over_a_bad_page(huge, records=20)
    with pytest.raises(CapacityError, match=r"^The canonical change-feed page exceeds its byte bound"):
        mine.host.advance_canonical(pin, feed.head())
    bound = AUTHORITY_LIMITS.page_bytes // len(chunk) + 1
    assert len(pulled) == bound  # refused at the item that passed 64 MiB; the rest never read
    assert pin_of(mine) == pin


# --- one physical store -----------------------------------------------------------------------------


def test_two_handles_on_one_jsonl_file_are_refused_with_the_design_message(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    with JsonlJournal(path) as first:
        os.link(path, tmp_path / "alias.jsonl")  # another name for the same file
        for other in (tmp_path / "alias.jsonl", tmp_path / "." / "memory.jsonl"):
            with JsonlJournal(other) as second:
                with pytest.raises(ProfileError) as caught:
                    authority(second, working=first)
                assert str(caught.value).startswith(NOT_DISTINCT)
        assert first.head().seq == 0  # refused before any header was written


@pytest.mark.parametrize("scheme", ["file", "sqlite"])
def test_two_handles_on_one_store_journal_are_refused_with_the_design_message(
    tmp_path: Path, scheme: str
) -> None:
    url = f"file:{tmp_path / 'store'}" if scheme == "file" else f"sqlite:{tmp_path / 'store.db'}"
    with open_store(url) as store, open_store(url) as again:
        store.create("memory", role="working_memory", metadata={"scope": "a"})
        with store.open("memory") as first, again.open("memory") as second:
            with pytest.raises(ProfileError) as caught:
                authority(second, working=first, pins=InMemoryJournal("p"))
            assert str(caught.value).startswith(NOT_DISTINCT)
        store.create("canonical", role="canonical_memory", metadata={"scope": "a"})
        with store.open("memory") as working, again.open("canonical") as canonical:
            assert authority(canonical, working=working).agent.query().records == ()
