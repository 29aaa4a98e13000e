"""Durability policies pay only for the fsyncs they promise: none on an idle close, none at create
under `none`, and under `flush` the creation is synced by the first flush()/close()."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from waybook import GENESIS, JsonlJournal
from waybook.model import Header, NewRecord, UserMessage, text


class FsyncCounter:
    """Counts every real os.fsync in the process (file and directory), still syncing for real."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = os.fsync

        def counting(fd: int) -> None:
            self.count += 1
            real(fd)

        monkeypatch.setattr(os, "fsync", counting)


def user(i: int, parent: str | None) -> NewRecord:
    return NewRecord(
        id=f"u{i}", at="2026-12-01T09:00:00.000Z", body=UserMessage(parent=parent, content=text("x"))
    )


def test_closing_without_writing_pays_no_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    JsonlJournal.create(tmp_path / "s.jsonl", journal_id="s", durability="fsync").close()
    fsyncs = FsyncCounter(monkeypatch)
    with JsonlJournal(tmp_path / "s.jsonl", create=False, durability="flush") as journal:
        assert journal.head().seq == 1
        journal.flush()
    assert fsyncs.count == 0


def test_flush_syncs_once_per_batch_of_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    JsonlJournal.create(tmp_path / "s.jsonl", journal_id="s", durability="fsync").close()
    fsyncs = FsyncCounter(monkeypatch)
    with JsonlJournal(tmp_path / "s.jsonl", create=False, durability="flush") as journal:
        journal.append([user(1, None)], expected=journal.head())
        journal.flush()
        journal.flush()
        assert fsyncs.count == 1
        journal.append([user(2, "u1")], expected=journal.head())
    assert fsyncs.count == 2


def test_create_under_none_pays_no_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fsyncs = FsyncCounter(monkeypatch)
    with JsonlJournal.create(tmp_path / "s.jsonl", journal_id="s", durability="none") as journal:
        journal.append([user(1, None)], expected=journal.head())
        journal.flush()
    with JsonlJournal(tmp_path / "fresh.jsonl", durability="none") as empty:
        empty.append(
            [NewRecord(id="h", at="2026-12-01T09:00:00.000Z", body=Header(journal="f", creator="t"))],
            expected=GENESIS,
        )
    assert fsyncs.count == 0
    with JsonlJournal(tmp_path / "s.jsonl", create=False) as journal:
        assert journal.head().seq == 2


def test_create_under_flush_defers_the_file_and_directory_sync_to_the_first_flush(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fsyncs = FsyncCounter(monkeypatch)
    journal = JsonlJournal.create(tmp_path / "s.jsonl", journal_id="s", durability="flush")
    assert fsyncs.count == 0
    journal.append([user(1, None)], expected=journal.head())
    journal.flush()  # the file and the directory that names it
    assert fsyncs.count == 2
    journal.close()
    assert fsyncs.count == 2
    with JsonlJournal(tmp_path / "empty.jsonl", durability="flush") as empty:
        assert fsyncs.count == 2
        assert empty.head() == GENESIS
    assert fsyncs.count == 3  # only the directory: nothing was written to the empty file


@pytest.mark.parametrize("policy", ["fsync", "group", None])
def test_create_under_a_durable_policy_syncs_the_file_and_directory_before_returning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, policy: str | None
) -> None:
    fsyncs = FsyncCounter(monkeypatch)
    options = {} if policy is None else {"durability": policy}  # None: the default, group
    with JsonlJournal.create(tmp_path / "s.jsonl", journal_id="s", **options):
        assert fsyncs.count == 2
    assert fsyncs.count == 2


def test_a_failed_directory_sync_is_a_durability_error_and_the_journal_refuses_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import waybook.journal._jsonl._journal as jsonl_module
    from waybook.model import DurabilityError, JournalFailedError

    def failing(directory: Path) -> None:
        raise OSError(5, "Input/output error (injected)")

    journal = JsonlJournal.create(tmp_path / "s.jsonl", journal_id="s", durability="flush")
    journal.append([user(1, None)], expected=journal.head())
    monkeypatch.setattr(jsonl_module, "fsync_dir", failing)
    with pytest.raises(DurabilityError, match="fsync failed"):
        journal.flush()
    with pytest.raises(JournalFailedError):
        journal.append([user(2, "u1")], expected=journal.head())
    journal.close()
