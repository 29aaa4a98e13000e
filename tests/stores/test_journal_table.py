"""JournalTable and Layered: a catalog fold's maps, over a base (the directory store's index) asked for
any key the fold did not touch."""

from __future__ import annotations

import attrs
import pytest

from waybook.stores._journal_table import JournalTable, Layered
from waybook.stores._values import JournalInfo

BASE = {n: JournalInfo(n, "session", {"n": i}, i + 2, "t", hidden=i == 1) for i, n in enumerate("abc")}


def table(asked: list[str]) -> JournalTable:
    def base(journal_id: str) -> JournalInfo | None:
        asked.append(journal_id)
        return BASE.get(journal_id)

    return JournalTable(base)


def test_a_journal_the_fold_did_not_touch_is_asked_of_the_base() -> None:
    asked: list[str] = []
    journals = table(asked)
    assert "b" in journals
    assert "z" not in journals
    assert journals["b"] == BASE["b"]
    assert journals.get("z") is None
    assert asked == ["b", "z", "b", "z"]
    assert journals.made() == []


def test_a_journal_set_or_popped_by_the_fold_is_never_asked_of_the_base_again() -> None:
    asked: list[str] = []
    journals = table(asked)
    hidden = attrs.evolve(journals["a"], hidden=True)
    journals["a"] = hidden
    assert journals["a"] is hidden
    assert journals.pop("c") == BASE["c"]
    asked.clear()
    assert "c" not in journals
    assert journals.get("c") is None
    assert journals["a"] is hidden
    assert asked == []
    assert journals.made() == [hidden]


def test_a_layered_map_reads_its_own_entries_over_its_base_and_is_never_iterated() -> None:
    fed = Layered({"a": 3, "b": 5}.get)
    fed["b"] = 7
    fed["c"] = 1
    del fed["a"]
    assert (fed.get("a"), fed["b"], fed["c"], fed.get("z", 0)) == (None, 7, 1, 0)
    assert "a" not in fed
    assert fed.own() == {"a": None, "b": 7, "c": 1}
    with pytest.raises(KeyError):
        del fed["z"]
    with pytest.raises(TypeError, match="not iterated"):
        list(fed)
    with pytest.raises(TypeError, match="no length"):
        len(fed)
