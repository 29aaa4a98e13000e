"""Issue 13: canonical memory you can trust. Each test reproduces a point of the issue that failed before."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
import time
import types
from collections.abc import Iterator, Sequence
from typing import Any

import attrs
import pytest

from tests.helpers.authority import WAIT, Probe, asleep_in_line, foreign_write, nominate, pin_of
from tests.helpers.builders import AT
from waybook import Session
from waybook.journal import InMemoryJournal
from waybook.journal._roles.memory_text import content_digest
from waybook.memory import (
    AdoptionConflictError,
    RequestError,
    Route,
    create_async_authority,
    create_authority,
)
from waybook.memory.canonical.receipts import derive_adoption_receipt, derive_pin_receipt
from waybook.model import CapacityError, ConflictError, Head, MemoryWrite, NewRecord, StorageError
from waybook.model._records import MemoryPinMoved, UserMessage, text

ROUTES = [Route("shared", frozenset({"facts"}))]


def journals() -> tuple[InMemoryJournal, InMemoryJournal, InMemoryJournal]:
    return InMemoryJournal("working"), InMemoryJournal("canonical"), InMemoryJournal("pins")


def authority(working: Any, canonical: Any, pins: Any, actor: str = "host") -> Any:
    return create_authority(working=working, canonical=canonical, routes=ROUTES, actor=actor, pins=pins)


def pin_records(pins: InMemoryJournal) -> list[MemoryPinMoved]:
    return [r.body for r in pins.read() if isinstance(r.body, MemoryPinMoved)]


# --- the pin is a projection ----------------------------------------------------------------------


def test_a_new_authority_starts_at_the_recorded_pin_not_at_the_canonical_head() -> None:
    working, canonical, pins = journals()
    first = authority(working, canonical, pins)
    foreign_write(canonical, "/memories/unreviewed.md", "x")
    assert pin_of(authority(working, canonical, pins)) == pin_of(first) != canonical.head()
    reviewed = first.host.advance_canonical(pin_of(first), canonical.head())
    foreign_write(canonical, "/memories/later.md", "y")
    restarted = authority(working, canonical, pins)
    assert pin_of(restarted) == reviewed.new != canonical.head()
    assert [r.key for r in restarted.agent.query().records] == ["/memories/unreviewed.md"]


def test_the_pin_recorded_in_a_session_journal_survives_a_restart() -> None:
    working, canonical, session = InMemoryJournal("w"), InMemoryJournal("c"), InMemoryJournal("s")
    Session.create(session)
    first = create_authority(working=working, canonical=canonical, routes=ROUTES, actor="h", session=session)
    foreign_write(canonical, "/memories/a.md", "x")
    moved = first.host.advance_canonical(pin_of(first), canonical.head())
    again = create_authority(working=working, canonical=canonical, routes=ROUTES, actor="h", session=session)
    assert pin_of(again) == moved.new


def test_a_failed_pin_record_fails_the_call_and_leaves_the_pin() -> None:
    working, canonical, inner = journals()
    pins = Probe(inner)
    host = authority(working, canonical, pins)
    foreign_write(canonical, "/memories/a.md", "x")
    before = pin_of(host)
    pins.before_append = lambda: (_ for _ in ()).throw(StorageError("disk full"))
    with pytest.raises(StorageError):
        host.host.advance_canonical(before, canonical.head())
    assert pin_of(host) == before
    receipt = host.host.advance_canonical(before, canonical.head())  # the retry records the pin then
    assert receipt.status == "advanced"
    assert pin_of(host) == receipt.new
    assert derive_pin_receipt(canonical, inner, receipt) == receipt


def test_a_lost_reply_of_the_pin_record_resolves_unchanged_on_retry() -> None:
    working, canonical, inner = journals()
    pins = Probe(inner)
    host = authority(working, canonical, pins)
    foreign_write(canonical, "/memories/a.md", "x")
    before = pin_of(host)
    pins.after_append = StorageError("reply lost")
    with pytest.raises(StorageError):
        host.host.advance_canonical(before, canonical.head())
    retry = host.host.advance_canonical(before, canonical.head())
    assert (retry.status, retry.new) == ("unchanged", canonical.head())


def test_an_adoption_whose_pin_record_fails_resolves_already_present_on_retry() -> None:
    working, canonical, inner = journals()
    pins = Probe(inner)
    host = authority(working, canonical, pins)
    nomination = nominate(host, {"/memories/a.md": "x"})
    before = pin_of(host)
    pins.before_append = lambda: (_ for _ in ()).throw(StorageError("disk full"))
    with pytest.raises(StorageError):
        host.host.adopt_nomination(before, nomination)
    assert pin_of(host) == before
    retry = host.host.adopt_nomination(before, nomination)
    assert retry.status == "already-present"
    assert pin_of(host) == retry.new == canonical.head()
    assert derive_adoption_receipt(canonical, inner, retry) == retry


def test_losing_the_pin_record_race_16_times_is_a_typed_error_not_a_silent_give_up() -> None:
    working, canonical, _ = journals()
    session_inner = InMemoryJournal("s")
    Session.create(session_inner)
    session = Probe(session_inner)
    host = create_authority(working=working, canonical=canonical, routes=ROUTES, actor="h", session=session)
    foreign_write(canonical, "/memories/a.md", "x")
    before = pin_of(host)

    class Chatty(Probe):
        def append(self, records: Sequence[NewRecord], *, expected: Head) -> Any:
            if isinstance(records[0].body, MemoryPinMoved):
                head = self.inner.head()
                leaf = (
                    next(r.id for r in reversed(list(self.inner.read())) if r.body.IS_NODE)
                    if head.seq > 1
                    else None
                )
                body = UserMessage(parent=leaf, content=text("meanwhile"))
                self.inner.append([NewRecord(id=f"m{head.seq}", at=AT, body=body)], expected=head)
            return self.inner.append(records, expected=expected)

    session.__class__ = Chatty
    with pytest.raises(ConflictError, match="16 times"):
        host.host.advance_canonical(before, canonical.head())
    assert pin_of(host) == before
    assert not [r for r in session_inner.read() if isinstance(r.body, MemoryPinMoved)]


def test_a_head_inside_a_multi_record_adoption_cannot_be_installed() -> None:
    working, canonical, pins = journals()
    adopter = authority(working, canonical, pins)
    receipt = adopter.host.adopt_nomination(
        pin_of(adopter), nominate(adopter, {"/memories/a.md": "x", "/memories/b.md": "y"})
    )
    reader = authority(working, canonical, InMemoryJournal("other-pins"))
    inside = Head.of(next(iter(canonical.read(after=receipt.new.seq - 2, limit=1))))
    with pytest.raises(ConflictError, match="inside adoption"):
        reader.host.advance_canonical(pin_of(reader), inside)
    assert pin_of(reader).seq == 1
    assert reader.host.advance_canonical(pin_of(reader), receipt.new).status == "advanced"


# --- seed rules -----------------------------------------------------------------------------------


def test_a_later_write_that_changes_a_nominated_record_is_an_adoption_conflict() -> None:
    working, inner, pins = journals()
    canonical = Probe(inner)
    host = authority(working, canonical, pins)
    nomination = nominate(host, {"/memories/a.md": "x"})
    real_append = inner.append

    def append_then_overwrite(records: Sequence[NewRecord], *, expected: Head) -> Any:
        result = real_append(records, expected=expected)
        body = MemoryWrite(path="/memories/a.md", text="changed", digest=content_digest("changed"))
        real_append([NewRecord(id="later", at=AT, body=body)], expected=result.head)
        return result

    inner.append = append_then_overwrite  # type: ignore[method-assign]
    before = pin_of(host)
    with pytest.raises(AdoptionConflictError) as caught:
        host.host.adopt_nomination(before, nomination)
    assert caught.value.conflicts == (("/memories/a.md", content_digest("changed"), content_digest("x")),)
    assert pin_of(host) == before


class ShortPages:
    """A canonical journal whose feed answers one record per page."""

    def __init__(self, inner: InMemoryJournal) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        return self.inner.read_lines(after, 1)


def test_a_feed_of_pages_too_short_to_reach_the_head_is_a_capacity_error() -> None:
    working, inner, pins = journals()
    host = authority(working, ShortPages(inner), pins)
    for i in range(65):
        foreign_write(inner, f"/memories/f{i}.md", "x")
    with pytest.raises(CapacityError, match="smaller reviewed chunks"):
        host.host.advance_canonical(pin_of(host), inner.head())


def test_a_second_authority_committing_the_same_operation_first_resolves_already_present() -> None:
    working, inner, _ = journals()
    canonical = Probe(inner)
    one = authority(working, canonical, InMemoryJournal("p1"))
    two = authority(working, canonical, InMemoryJournal("p2"))
    nomination = nominate(one, {"/memories/a.md": "x"})
    start = pin_of(one)

    def one_commits_first() -> None:
        threading.Event().wait(0.003)  # a later timestamp: not an exact retry of two's batch
        one.host.adopt_nomination(start, nomination)

    canonical.before_append = one_commits_first
    receipt = two.host.adopt_nomination(start, nomination)  # two decides, then one commits first
    assert receipt.status == "already-present"
    assert len([r for r in inner.read() if r.kind == "waybook.memory.adoption/1"]) == 1


def test_a_conflict_from_the_race_reports_the_digest_canonical_holds() -> None:
    working, inner, pins = journals()
    canonical = Probe(inner)
    host = authority(working, canonical, pins)
    nomination = nominate(host, {"/memories/a.md": "x"})
    canonical.before_append = lambda: foreign_write(inner, "/memories/a.md", "theirs")
    with pytest.raises(AdoptionConflictError) as caught:
        host.host.adopt_nomination(pin_of(host), nomination)
    assert caught.value.conflicts == (("/memories/a.md", content_digest("theirs"), content_digest("x")),)


def test_a_tombstone_is_nominated_and_adopted_like_a_put() -> None:
    working, canonical, pins = journals()
    host = authority(working, canonical, pins)
    host.host.adopt_nomination(pin_of(host), nominate(host, {"/memories/a.md": "x"}))
    host.agent.remember("forget", {}, tombstones=["/memories/a.md"])
    nomination = host.agent.nominate(["/memories/a.md"], "shared", "facts")
    assert nomination.records[0].is_tombstone
    with pytest.raises(AdoptionConflictError):  # deleting a reviewed record needs the host to name it
        host.host.adopt_nomination(pin_of(host), nomination)
    receipt = host.host.adopt_nomination(
        pin_of(host), nomination, replacements={"/memories/a.md": content_digest("x")}
    )
    assert receipt.status == "adopted"
    assert host.agent.query().records == ()
    assert derive_adoption_receipt(canonical, pins, receipt) == receipt


# --- host calls -----------------------------------------------------------------------------------


def test_a_malformed_head_or_nomination_is_refused_when_the_method_is_called() -> None:
    working, canonical, pins = journals()
    host = authority(working, canonical, pins)
    pin = pin_of(host)
    for bad in (Head(-1, pin.digest), Head(True, pin.digest), Head(1, "XYZ"), Head(1, pin.digest.upper())):  # type: ignore[arg-type]
        with pytest.raises(RequestError):
            host.host.advance_canonical(pin, bad)
    nomination = nominate(host, {"/memories/a.md": "x"})
    for bad_nomination in (
        attrs.evolve(nomination, source_head=Head(1, "nope")),
        attrs.evolve(nomination, records=(attrs.evolve(nomination.records[0], digest=7),)),
        attrs.evolve(nomination, roots=("../etc/passwd",)),
    ):
        with pytest.raises(RequestError):
            host.host.adopt_nomination(pin, bad_nomination)


def async_setup() -> tuple[Any, InMemoryJournal, InMemoryJournal]:
    working, canonical, pins = journals()
    created = create_async_authority(
        working=working, canonical=canonical, routes=ROUTES, actor="h", pins=pins
    )
    return created, canonical, pins


def test_async_host_calls_take_their_place_when_called_not_when_awaited() -> None:
    async def scenario() -> None:
        created, canonical, _ = async_setup()
        pin = (await created.agent.query()).head
        foreign_write(canonical, "/memories/a.md", "1")
        middle = canonical.head()
        foreign_write(canonical, "/memories/b.md", "2")
        first = created.host.advance_canonical(pin, middle)
        second = created.host.advance_canonical(middle, canonical.head())
        assert (await second).status == "advanced"  # awaited first, but it runs second
        assert (await first).new == middle

    asyncio.run(scenario())


def test_async_requests_are_copied_and_validated_at_call_time() -> None:
    async def scenario() -> None:
        created, canonical, _ = async_setup()
        await created.agent.remember("r", {"/memories/a.md": "mine"})
        nomination = await created.agent.nominate(["/memories/a.md"], "shared", "facts")
        foreign_write(canonical, "/memories/a.md", "theirs")
        pin = (await created.agent.query()).head
        await created.host.advance_canonical(pin, canonical.head())
        replacements = [("/memories/a.md", content_digest("theirs"))]
        task = created.host.adopt_nomination(canonical.head(), nomination, replacements)
        replacements.clear()  # changing the caller's objects after the call changes nothing
        assert (await task).status == "adopted"
        with pytest.raises(RequestError):
            created.host.advance_canonical(pin, Head(-1, "z"))  # refused at once, nothing to await

    asyncio.run(scenario())


class SlowFeed:
    """A canonical journal whose feed waits for `gate` once `armed`."""

    def __init__(self, inner: InMemoryJournal) -> None:
        self.inner = inner
        self.gate = threading.Event()
        self.armed = False
        self.started = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        if self.armed:
            self.started.set()
            self.gate.wait(WAIT)  # a bound only: every test opens the gate itself
        return self.inner.read_lines(after, limit)


def test_cancelling_a_running_async_call_finishes_its_turn_before_the_next_call_starts() -> None:
    async def scenario() -> None:
        working, inner, pins = journals()
        canonical = SlowFeed(inner)
        created = create_async_authority(
            working=working, canonical=canonical, routes=ROUTES, actor="h", pins=pins
        )  # type: ignore[arg-type]
        pin = (await created.agent.query()).head
        heads = []
        for i in range(5):
            foreign_write(inner, f"/memories/f{i}.md", "x")
            heads.append(inner.head())
        canonical.armed = True
        first = created.host.advance_canonical(pin, heads[1])
        assert await asyncio.to_thread(canonical.started.wait, WAIT), "the first call never began"
        first.cancel()  # while its journal call is held at the gate
        second = created.host.advance_canonical(pin, heads[4])
        # One pass of the loop (its queue runs in order): the first call takes the cancellation while
        # its journal call is still held, and the second call waits in line behind it.
        await asyncio.sleep(0)
        assert not first.done()
        canonical.gate.set()
        with pytest.raises(asyncio.CancelledError):
            await first
        with pytest.raises(ConflictError):  # the first call's move landed before the second began
            await second
        assert (await created.agent.query()).head == heads[1]
        assert [(p.new_seq, p.status) for p in pin_records(pins)] == [(heads[1].seq, "advanced")]

    asyncio.run(scenario())


def test_cancelling_an_async_call_that_waits_for_its_turn_leaves_the_queue_and_writes_nothing() -> None:
    async def scenario() -> None:
        working, inner, pins = journals()
        canonical = SlowFeed(inner)
        created = create_async_authority(
            working=working, canonical=canonical, routes=ROUTES, actor="h", pins=pins
        )  # type: ignore[arg-type]
        pin = (await created.agent.query()).head
        foreign_write(inner, "/memories/a.md", "x")
        canonical.armed = True
        running = created.host.advance_canonical(pin, inner.head())
        waiting = created.host.advance_canonical(pin, inner.head())
        never_ran = created.host.advance_canonical(pin, inner.head())
        never_ran.cancel()  # cancelled before it ever ran
        # The three tasks take their first step in one pass of the loop, in order: the running call
        # starts its journal call (held at the gate) and the waiting call waits for its turn. This
        # coroutine resumes only on a later pass, once the journal call has begun.
        assert await asyncio.to_thread(canonical.started.wait, WAIT), "the running call never began"
        waiting.cancel()
        canonical.gate.set()
        assert (await running).status == "advanced"
        for task in (waiting, never_ran):
            with pytest.raises(asyncio.CancelledError):
                await task
        canonical.armed = False
        after = await created.host.advance_canonical(inner.head(), inner.head())  # the queue still moves
        assert after.status == "unchanged"
        assert [p.status for p in pin_records(pins)] == ["advanced"]  # unchanged writes nothing

    asyncio.run(scenario())


class Interrupter:
    """A watcher that sends `thread` a real Ctrl-C (SIGINT) once it sleeps waiting for its turn, or
    gives up after WAIT seconds (and sets `then`, so nothing stays held). `seen` says what it saw, for a
    failure's message."""

    def __init__(self, thread: threading.Thread, *, then: threading.Event) -> None:
        self.seen = "nothing yet"
        self._thread = thread
        self._then = then
        self._watcher = threading.Thread(target=self._watch, name="interrupter", daemon=True)
        self._watcher.start()

    def _watch(self) -> None:
        deadline = time.monotonic() + WAIT
        while not asleep_in_line(self._thread):
            if time.monotonic() > deadline:
                frame = sys._current_frames().get(self._thread.ident or -1)
                where = "gone" if frame is None else f"{frame.f_code.co_qualname} line {frame.f_lineno}"
                self.seen = f"never asleep in line within {WAIT:g} s (last in {where})"
                self._then.set()
                return
            time.sleep(0.001)  # polling for the state itself, not waiting for time to pass
        assert self._thread.ident is not None
        self.seen = "asleep in line: sent SIGINT"
        signal.pthread_kill(self._thread.ident, signal.SIGINT)

    def join(self, timeout: float) -> None:
        self._watcher.join(timeout)


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt in this process for the test's length, as in a terminal. A
    process started in the background by a non-interactive shell (`cmd &`, as a CI script may start
    pytest) inherits SIGINT ignored, and Python then keeps it ignored: a Ctrl-C would change nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("ctrl_c_raises")
def test_a_sync_call_interrupted_while_waiting_gives_up_its_place() -> None:
    working, inner, pins = journals()
    canonical = SlowFeed(inner)
    host = authority(working, canonical, pins)
    pin = pin_of(host)
    foreign_write(inner, "/memories/a.md", "x")
    canonical.armed = True
    holder = threading.Thread(target=lambda: host.host.advance_canonical(pin, inner.head()), daemon=True)
    holder.start()
    assert canonical.started.wait(WAIT), "the holder never began its journal call"
    watcher = Interrupter(threading.main_thread(), then=canonical.gate)
    try:
        host.host.advance_canonical(pin, inner.head())  # waits behind the holder, then is interrupted
    except KeyboardInterrupt:
        pass
    else:
        pytest.fail(f"the call returned, not interrupted; the interrupter saw: {watcher.seen}")
    watcher.join(WAIT)
    assert not canonical.gate.is_set(), "the interrupt came while the holder still held its turn"
    canonical.armed = False
    canonical.gate.set()
    holder.join(WAIT)
    assert not holder.is_alive()
    done: list[str] = []
    follower = threading.Thread(
        target=lambda: done.append(host.host.advance_canonical(pin, inner.head()).status), daemon=True
    )
    follower.start()
    follower.join(WAIT)
    assert done == ["unchanged"], "the interrupted call kept its place in line"


# --- the agent face -------------------------------------------------------------------------------


def reachable(root: object) -> Iterator[object]:
    """Everything ordinary introspection reaches from `root`: attributes, slots, class members,
    closures, defaults, bound methods' `__self__`/`__func__`, `__wrapped__` chains and containers.
    (A function's `__globals__` is left out: it is the module, which any code can import anyway.)"""
    seen: set[int] = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, str | int | float | bytes | type(None)):
            continue
        seen.add(id(obj))
        yield obj
        if isinstance(obj, type):
            if obj.__module__ != "builtins":
                stack.extend(vars(obj).values())
                stack.extend(obj.__mro__)
            continue
        if isinstance(obj, types.CellType):
            with contextlib.suppress(ValueError):  # an empty cell
                stack.append(obj.cell_contents)
            continue
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
            continue
        if isinstance(obj, list | tuple | set | frozenset):
            stack.extend(obj)
            continue
        stack.append(type(obj))
        for name in ("__closure__", "__defaults__", "__kwdefaults__", "__wrapped__", "__self__", "__func__"):
            if hasattr(obj, name):
                stack.append(getattr(obj, name))
        for name in dir(obj):
            if name.startswith("__") and name not in ("__wrapped__", "__dict__"):
                continue
            with contextlib.suppress(Exception):  # a property may refuse; that reaches nothing
                stack.append(getattr(obj, name))


@pytest.mark.parametrize("make", [create_authority, create_async_authority])
def test_no_attribute_closure_or_wrapper_of_the_agent_face_leads_to_the_core(make: Any) -> None:
    working, canonical, pins = journals()
    created = make(working=working, canonical=canonical, routes=ROUTES, actor="h", pins=pins)
    found = list(reachable(created.agent))
    assert len(found) > 5
    forbidden = {id(working), id(canonical), id(pins), id(created.host), id(created)}
    assert not [o for o in found if id(o) in forbidden]
    assert not [o for o in found if type(o).__name__ in ("Core", "_Core", "HostFace", "AsyncHostFace")]


def test_writes_past_16384_after_an_adoption_are_a_capacity_error_and_the_pin_stays() -> None:
    working, inner, pins = journals()
    canonical = Probe(inner)
    host = authority(working, canonical, pins)
    nomination = nominate(host, {"/memories/a.md": "x"})
    real_append = inner.append

    def append_then_many(records: Sequence[NewRecord], *, expected: Head) -> Any:
        result = real_append(records, expected=expected)
        texts = [str(i % 7) for i in range(16_400)]
        later = [
            NewRecord(
                id=f"later-{i}",
                at=AT,
                body=MemoryWrite(path="/memories/z.md", text=t, digest=content_digest(t)),
            )
            for i, t in enumerate(texts)
        ]
        real_append(later, expected=result.head)
        return result

    inner.append = append_then_many  # type: ignore[method-assign]
    pin = pin_of(host)
    with pytest.raises(CapacityError, match=r"^The canonical memory advance exceeds its total proof bound"):
        host.host.adopt_nomination(pin, nomination)  # proving 16,402 records: over the bound (issue 40)
    assert pin_of(host) == pin
    inner.append = real_append  # type: ignore[method-assign]
    middle = Head.of(next(iter(inner.read(after=pin.seq + 16_000, limit=1))))
    moved = host.host.advance_canonical(pin, middle).new  # the host reviews in chunks, then retries
    receipt = host.host.adopt_nomination(moved, nomination)
    assert receipt.status == "already-present"
    assert pin_of(host) == receipt.new == inner.head()
    assert {r.key for r in host.agent.query().records} == {"/memories/a.md", "/memories/z.md"}
