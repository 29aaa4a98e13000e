"""Issue 42.7: what a caller gets wrong is a typed error that says what to pass, never a raw
AttributeError, and never a journal created where the caller expected one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.ids import stable_id
from waybook import JsonlJournal, Session, resume
from waybook.model import Head, InvalidArgumentError, StorageError
from waybook.stores import StoreArgumentError, copy_records, open_store, tail


def test_resume_of_a_missing_path_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="no such journal; pass create=True"):
        resume(tmp_path / "typo.jsonl")
    assert list(tmp_path.iterdir()) == []


def test_resume_with_create_true_starts_an_empty_session(tmp_path: Path) -> None:
    resumed = resume(tmp_path / "new.jsonl", create=True)
    with resumed.journal:
        assert list(resumed.context) == []
    assert (tmp_path / "new.jsonl").exists()


@pytest.mark.parametrize("thing", [None, object(), "s.jsonl", 3], ids=stable_id)
def test_tail_of_something_that_is_not_a_store_is_a_typed_error(thing: object) -> None:
    with pytest.raises(StoreArgumentError, match="tail takes a JournalStore"):
        tail(thing)  # type: ignore[arg-type]


def written(path: Path) -> JsonlJournal:
    journal = JsonlJournal(path)
    session = Session.create(journal, journal_id="s")
    session.user("hello")
    return journal


@pytest.mark.parametrize("target", [None, object(), "t.jsonl", [1, 2]], ids=stable_id)
def test_copy_records_to_something_that_is_not_a_journal_is_a_typed_error(
    tmp_path: Path, target: object
) -> None:
    with (
        written(tmp_path / "s.jsonl") as source,
        pytest.raises(InvalidArgumentError, match="copy_records appends to a journal"),
    ):
        copy_records(source.read(), target)  # type: ignore[arg-type]


@pytest.mark.parametrize("records", [None, 3, "abc", [object()]], ids=stable_id)
def test_copy_records_of_something_that_is_not_records_is_a_typed_error_and_writes_nothing(
    tmp_path: Path, records: object
) -> None:
    with open_store(f"file:{tmp_path}/store") as store:
        target = store.create("t")
        before = target.head()
        with pytest.raises(InvalidArgumentError, match="copy_records copies"):
            copy_records(records, target)  # type: ignore[arg-type]
        assert target.head() == before


def test_copy_records_with_an_expected_that_is_not_a_head_is_a_typed_error(tmp_path: Path) -> None:
    with written(tmp_path / "s.jsonl") as source, JsonlJournal(tmp_path / "t.jsonl") as target:
        with pytest.raises(InvalidArgumentError, match="expected is the target's Head"):
            copy_records(source.read(), target, expected="0")  # type: ignore[arg-type]
        assert isinstance(copy_records(source.read(), target), Head)
