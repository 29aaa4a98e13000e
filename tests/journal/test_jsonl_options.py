"""`JsonlOptions`: a JSONL journal's options are one frozen value, and every keyword still works.

`JsonlJournal(path, options=JsonlOptions(...))` and `JsonlJournal(path, **keywords)` open the same
journal; both at once is a typed error naming what to do; a bad value is refused before any file exists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from tests.helpers.builders import header, user
from waybook import GENESIS
from waybook.journal import Durability, JsonlJournal, JsonlOptions
from waybook.journal._jsonl._file_ops import OsFileOps
from waybook.model import InvalidArgumentError, StorageError

EACH_OPTION: list[dict[str, Any]] = [
    {"durability": "fsync"},
    {"durability": Durability.GROUP, "group_window": 0.0},
    {"on_torn_tail": "repair"},
    {"read_prefix": True},
    {"create": True},
    {"group_window": 0.5},
    {"exclusive": True},
    {"sidecar": False},
    {"trust_checkpoint": True},
    {"file_ops": OsFileOps()},
]


@pytest.mark.parametrize("keywords", EACH_OPTION, ids=lambda k: ",".join(k))
def test_a_keyword_and_the_same_field_of_an_options_value_open_the_same_journal(
    tmp_path: Path, keywords: dict[str, Any]
) -> None:
    with JsonlJournal(tmp_path / "k.jsonl", **keywords) as by_keyword:
        by_keyword.append([header()], expected=GENESIS)
    with JsonlJournal(tmp_path / "v.jsonl", options=JsonlOptions(**keywords)) as by_value:
        by_value.append([header()], expected=GENESIS)
    assert by_keyword.options == by_value.options == JsonlOptions(**keywords)
    assert by_keyword.durability == by_value.durability
    assert (tmp_path / "k.jsonl").read_bytes().count(b"\n") == (tmp_path / "v.jsonl").read_bytes().count(
        b"\n"
    )


def test_a_readonly_open_through_the_value_refuses_appends_as_the_keyword_does(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    JsonlJournal.create(path, journal_id="s").close()
    for journal in (
        JsonlJournal(path, readonly=True),
        JsonlJournal(path, options=JsonlOptions(readonly=True)),
    ):
        with journal, pytest.raises(StorageError, match="opened read-only"):
            journal.append([user("u1", None)], expected=journal.head())


def test_options_and_a_keyword_together_are_refused_naming_the_keywords_and_nothing_is_created(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    with pytest.raises(InvalidArgumentError) as refused:
        JsonlJournal(path, options=JsonlOptions(readonly=False), durability="fsync", sidecar=False)
    message = str(refused.value)
    assert "options= and the keyword options durability, sidecar" in message
    assert "attrs.evolve(options, durability=..., sidecar=...)" in message
    assert isinstance(refused.value, TypeError)  # a call's arguments were wrong
    assert not path.exists()


def test_create_refuses_options_and_a_keyword_together_before_writing_the_header(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with pytest.raises(InvalidArgumentError, match="pass one or the other"):
        JsonlJournal.create(path, journal_id="s", options=JsonlOptions(), durability="fsync")
    assert not path.exists()


def test_an_option_that_does_not_exist_is_a_typed_error_listing_the_options(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with pytest.raises(InvalidArgumentError) as refused:
        JsonlJournal(path, durabilty="fsync")  # type: ignore[call-arg]
    assert "JsonlJournal has no option durabilty; its options are durability, on_torn_tail" in str(
        refused.value
    )
    assert not path.exists()


def test_options_that_are_not_an_options_value_are_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="options must be a JsonlOptions, not dict"):
        JsonlJournal(tmp_path / "s.jsonl", options={"durability": "fsync"})  # type: ignore[arg-type]
    assert not (tmp_path / "s.jsonl").exists()


BAD_VALUES: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"on_torn_tail": "mend"}, InvalidArgumentError, "on_torn_tail must be 'refuse' or 'repair'"),
    ({"exclusive": True, "readonly": True}, ValueError, "a readonly journal cannot be one"),
    ({"durability": "sometimes"}, ValueError, "'sometimes' is not a valid Durability"),
    ({"group_window": -1.0}, ValueError, "group_window must be None"),
]


@pytest.mark.parametrize(("keywords", "error", "says"), BAD_VALUES, ids=lambda v: str(v))
def test_a_bad_option_is_refused_before_any_file_is_created(
    tmp_path: Path, keywords: dict[str, Any], error: type[Exception], says: str
) -> None:
    path = tmp_path / "s.jsonl"
    with pytest.raises(error, match=says):
        JsonlJournal(path, **keywords)
    assert not path.exists()
    with pytest.raises(error, match=says):
        JsonlJournal.create(path, journal_id="s", **keywords)
    assert not path.exists()
    with pytest.raises(error, match=says):
        JsonlOptions(**keywords)


def test_create_opens_with_the_value_it_was_given_and_create_false(tmp_path: Path) -> None:
    options = JsonlOptions(durability="fsync", sidecar=False)
    with JsonlJournal.create(tmp_path / "s.jsonl", journal_id="s", options=options) as journal:
        assert journal.options == attrs.evolve(options, create=False)
        assert journal.head().seq == 1


def test_open_decoded_takes_the_value_and_the_keywords_alike(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    JsonlJournal.create(path, journal_id="s").close()
    by_value, records = JsonlJournal.open_decoded(path, options=JsonlOptions(readonly=True, sidecar=False))
    by_keyword, again, proved = JsonlJournal.open_decoded_proved(path, readonly=True, sidecar=False)
    with by_value, by_keyword:
        assert by_value.options == by_keyword.options
        assert records == again
        assert proved


def test_an_options_value_is_frozen_and_reads_as_what_it_holds() -> None:
    options = JsonlOptions(durability="none")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        options.readonly = True  # type: ignore[misc]
    assert options.durability is Durability.NONE
    assert "durability=<Durability.NONE: 'none'>" in repr(options)
    assert "file_ops=OsFileOps()" in repr(options)
