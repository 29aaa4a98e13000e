"""A whole home imported (issue 50): each new journal written whole, proved, and crash safe.

A folder import writes each new journal of a `file:` store whole from the lines its check sealed
(`DirectoryStore.create_sealed`). Its bytes must be those the store's one-record-per-append path gives,
and a SIGKILL anywhere in the write must leave each journal absent or whole, with a rerun finishing it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.paths import ROOT, SHARED_FIXTURES
from waybook.commands.growth import append_records
from waybook.model import GENESIS, Header, NewRecord
from waybook.stores import DirectoryStore, JournalStore, open_store

pytestmark = pytest.mark.skipif(
    not SHARED_FIXTURES.is_dir(), reason="shared/fixtures is not beside this checkout"
)
FOLDERS = {"claude-code": SHARED_FIXTURES / "claude-code", "codex": SHARED_FIXTURES / "codex"}


def journal_files(store: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((store / "journals").glob("*.jsonl"))}


def appended_one_record_at_a_time(source: JournalStore, target: Path) -> None:
    """Every journal of `source` written again into a new store at `target` the way the growing import
    writes: `create(header=False)`, then one record an append (each sealed record with its salt)."""
    with DirectoryStore(target) as store:
        for info in source.list(limit=1000).journals:
            with source.open(info.journal_id) as journal:
                records = [NewRecord(id=r.id, at=r.at, body=r.body, salt=r.salt) for r in journal.read()]
            header = records[0].body
            assert isinstance(header, Header)
            with store.create(
                info.journal_id, role=header.role, metadata=dict(header.metadata), header=False
            ) as journal:
                head = append_records(journal, records, head=GENESIS)
                assert head.seq == len(records)


@pytest.mark.parametrize("seal", [False, True], ids=["plain", "sealed"])
@pytest.mark.parametrize("source", sorted(FOLDERS))
def test_a_folder_import_writes_each_journal_byte_for_byte_as_one_record_an_append_writes_it(
    tmp_path: Path, source: str, seal: bool
) -> None:
    store = tmp_path / "imported"
    options = ["--seal"] if seal else []
    run = waybook("import", "auto", FOLDERS[source], "--store", f"file:{store}", "--json", *options)
    assert run.returncode == 0, run.stderr
    with open_store(f"file:{store}") as imported:
        appended_one_record_at_a_time(imported, tmp_path / "appended")
    ours, theirs = journal_files(store), journal_files(tmp_path / "appended")
    assert len(ours) == len(json.loads(run.stdout)["journals"]) >= 1
    assert ours == theirs


def killed_import(folder: Path, store: Path, step: str, count: int) -> subprocess.CompletedProcess[str]:
    helper = "tests.helpers.killed_importer"
    return subprocess.run(
        [sys.executable, "-m", helper, str(folder), f"file:{store}", step, f"{count}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    ("step", "count", "whole"),
    [
        ("written", 1, 0),  # the first batch's temp files written, nothing linked
        ("linked", 1, 1),  # one file of the first batch linked: an orphan, not catalogued
        ("directory synced", 2, 4),  # the second batch linked and durable, not catalogued
        ("created", 2, 4),  # two batches catalogued and fed, the rest not begun
    ],
)
def test_a_killed_folder_import_leaves_each_journal_absent_or_whole_and_a_rerun_finishes_it(
    tmp_path: Path, step: str, count: int, whole: int
) -> None:
    folder = FOLDERS["claude-code"]  # nine journals: five batches of two
    reference = tmp_path / "reference"
    uninterrupted = waybook("import", "auto", folder, "--store", f"file:{reference}", "--json")
    assert uninterrupted.returncode == 0, uninterrupted.stderr
    expected = journal_files(reference)
    assert len(expected) == 9

    store = tmp_path / "store"
    killed = killed_import(folder, store, step, count)
    assert killed.returncode == -9, killed.stderr
    left = journal_files(store)
    assert len(left) == whole
    for name, data in left.items():
        assert data == expected[name], f"{name} is not whole"

    rerun = waybook("import", "auto", folder, "--store", f"file:{store}", "--json")
    assert rerun.returncode == 0, rerun.stderr
    report = {j["journal"]: j for j in json.loads(rerun.stdout)["journals"]}
    assert {f"{journal_id}.jsonl" for journal_id, j in report.items() if j["held"]} == set(left)
    assert journal_files(store) == expected
    assert sorted((store / "journals").glob(".*.tmp")) == []  # the killed run's temp files swept
    verified = waybook("verify", "--store", f"file:{store}", "--json")
    proofs = [r for r in json.loads(verified.stdout) if r["path"] != "_catalog"]
    assert sorted(f"{r['path']}.jsonl" for r in proofs) == sorted(expected)
    assert all(r["ok"] for r in proofs), proofs
