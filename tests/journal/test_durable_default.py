"""Acknowledged means durable by default (issue 41): an append to a `JsonlJournal` opened with no
options is fsynced before it returns, alone or with company (group commit); `flush` and `none` are
explicit, named options that say what they give up."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.faults import SyncTrackingFileOps
from waybook import JsonlJournal, Session
from waybook.journal import Durability, JsonlOptions


def test_twenty_acknowledged_appends_made_twenty_fsyncs_by_default(tmp_path: Path) -> None:
    ops = SyncTrackingFileOps()
    with JsonlJournal(tmp_path / "s.jsonl", file_ops=ops) as journal:
        assert journal.durability is Durability.GROUP
        session = Session.create(journal, journal_id="s")
        before = ops.fsyncs
        for n in range(20):
            session.user(f"message {n}")
            assert ops.synced(journal.path), f"append {n} returned before its bytes were fsynced"
        assert ops.fsyncs - before >= 20


def test_the_default_options_value_is_durable() -> None:
    assert JsonlOptions().durability is Durability.GROUP
    with pytest.raises(ValueError, match="'sometimes' is not a valid Durability"):
        JsonlOptions(durability="sometimes")


@pytest.mark.parametrize("policy", ["flush", "none"])
def test_flush_and_none_are_named_options_that_return_before_the_disk_has_it(
    tmp_path: Path, policy: str
) -> None:
    ops = SyncTrackingFileOps()
    with JsonlJournal(tmp_path / "f.jsonl", file_ops=ops, durability=policy) as journal:
        assert journal.durability == policy
        Session.create(journal, journal_id="f").user("hi")
        assert not ops.synced(journal.path)
