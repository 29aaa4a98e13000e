"""Optional abilities are typed protocols checked with isinstance (not probed with getattr), store
bases are abstract, and a bad option is a typed error."""

from __future__ import annotations

from pathlib import Path

import pytest

from waybook import GENESIS, JsonlJournal
from waybook.journal import InMemoryJournal
from waybook.journal._protocol import DamageReporting, PositionedJournal, SelfChecking, SessionJournal
from waybook.model import InvalidArgumentError
from waybook.stores import open_store
from waybook.stores._base import CatalogStore


def test_every_adapter_and_store_journal_says_which_abilities_it_has(tmp_path: Path) -> None:
    with JsonlJournal(tmp_path / "j.jsonl") as jsonl:
        assert isinstance(jsonl, PositionedJournal)
        assert isinstance(jsonl, DamageReporting)
        assert isinstance(jsonl, SelfChecking)
    memory = InMemoryJournal("m")
    assert isinstance(memory, PositionedJournal)
    assert not isinstance(memory, DamageReporting)
    for url in ("memory:", f"file:{tmp_path / 'store'}"):
        with open_store(url) as store:
            journal = store.create("s")
            assert isinstance(journal, PositionedJournal)
            assert journal.position() == (journal.head(), None)
            assert isinstance(journal, DamageReporting)
            assert journal.damage is None
            journal.close()


def test_a_journal_without_position_is_not_taken_for_one() -> None:
    class Plain:
        name = "plain"

        def __init__(self) -> None:
            self._inner = InMemoryJournal("plain")

        def head(self) -> object:
            return self._inner.head()

        def append(self, records: object, *, expected: object) -> object:
            return self._inner.append(records, expected=expected)  # type: ignore[arg-type]

        def read(self, after: int = 0, limit: int | None = None) -> object:
            return self._inner.read(after, limit)

        def read_lines(self, after: int = 0, limit: int | None = None) -> object:
            return self._inner.read_lines(after, limit)

        def flush(self) -> None: ...
        def close(self) -> None: ...
        def __enter__(self) -> Plain:
            return self

        def __exit__(self, *exc: object) -> None: ...

    plain = Plain()
    assert isinstance(plain, SessionJournal)
    assert not isinstance(plain, PositionedJournal)
    from waybook import Session

    session = Session.create(plain, journal_id="p")  # type: ignore[arg-type]
    session.user("hello")
    assert Session(plain).head.seq == 2  # type: ignore[arg-type]  # replayed: no position to start from


def test_a_catalog_store_without_its_hooks_cannot_be_built() -> None:
    class Incomplete(CatalogStore):
        pass

    with pytest.raises(TypeError, match="abstract"):
        Incomplete("x:")  # type: ignore[abstract]


def test_an_unknown_torn_tail_policy_is_a_typed_error_and_opens_nothing(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with pytest.raises(InvalidArgumentError, match="on_torn_tail"):
        JsonlJournal(path, on_torn_tail="x")
    assert not path.exists()
    with JsonlJournal(path) as journal:
        assert journal.head() == GENESIS


class Forwarding:
    """A journal of no waybook class: every attribute but those `hidden` is the wrapped journal's, and
    reads are counted."""

    def __init__(self, inner: object, *, hidden: frozenset[str] = frozenset()) -> None:
        self._inner = inner
        self._hidden = hidden
        self.reads: list[tuple[int, int | None]] = []

    def read(self, after: int = 0, limit: int | None = None) -> object:
        self.reads.append((after, limit))
        return self._inner.read(after, limit)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        if name in self._hidden:
            raise AttributeError(name)
        return getattr(self._inner, name)


def written_journal() -> tuple[InMemoryJournal, str]:
    from waybook import Session

    journal = InMemoryJournal("positioned")
    last = Session.create(journal, journal_id="p").user("hello")
    return journal, last.id


def test_a_journal_of_any_class_with_position_is_joined_at_its_head_without_a_replay() -> None:
    from waybook import Session

    inner, last = written_journal()
    journal = Forwarding(inner)
    assert isinstance(journal, PositionedJournal)
    session = Session(journal)  # type: ignore[arg-type]
    assert (session.head, session.leaf) == (inner.head(), last)
    assert journal.reads == [(1, 1)]  # only the last record, whose time the clock must not run behind


def test_whether_a_journal_has_position_is_asked_of_the_journal_not_remembered_for_its_class() -> None:
    from waybook import Session

    inner, last = written_journal()
    Session(Forwarding(inner))  # type: ignore[arg-type]
    without = Forwarding(inner, hidden=frozenset({"position"}))  # the same class, without position()
    assert not isinstance(without, PositionedJournal)
    session = Session(without)  # type: ignore[arg-type]
    assert (session.head, session.leaf) == (inner.head(), last)
    assert without.reads == [(0, None)]  # replayed from the start
