"""`waybook erase` and `waybook migrate` (docs/erasure.md): the receipt as JSON recomputes from the
journal, usage errors name the flags, an old journal is refused naming migrate, and migrate writes a
sealed copy of a real imported session whose header names the old head, that then erases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.paths import ROOT
from waybook import JsonlJournal, Session
from waybook.journal import erasure_receipt, verify_file

SECRET = "cli-erased-secret-93ad"
REAL = Path("/work/shared/fixtures/claude-code/codemie/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl")
OLD_JOURNAL = ROOT / "fixtures" / "values" / "plan-v1.jsonl"


def chat(path: Path) -> None:
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="chat")
        session.user("hello")
        session.user(SECRET)
        session.assistant(f"you said {SECRET}")


def test_erase_prints_a_receipt_that_recomputes_and_the_text_is_gone(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    chat(path)
    ran = waybook("erase", path, "--seq", "3..4", "--reason", "the user asked", "--actor", "desk", "--json")
    assert ran.returncode == 0, ran.stderr
    receipt = json.loads(ran.stdout)
    assert [e["seq"] for e in receipt["erased"]] == [3, 4]
    assert SECRET.encode() not in path.read_bytes()
    assert waybook("verify", path).returncode == 0
    with JsonlJournal(path, readonly=True) as journal:
        assert erasure_receipt(journal, receipt["erasures"][0][0]).sha256 == receipt["sha256"]


def test_erase_on_a_store_by_id(tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path}/store.db"
    from waybook.stores import open_store

    with open_store(url) as store, store.create("chat") as journal:
        Session(journal).user(SECRET)
    ran = waybook("erase", "--store", url, "chat", "--seq", "2", "--reason", "asked")
    assert ran.returncode == 0, ran.stderr
    assert "erased records 2" in ran.stdout
    assert waybook("verify", "--store", url, "chat").returncode == 0
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert SECRET.encode() not in raw


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--seq", "3"], "--reason"),
        (["--reason", "x"], "--seq"),
        (["--seq", "3..x", "--reason", "x"], "--seq '3..x'"),
        (["--seq", "4..3", "--reason", "x"], "4..3"),
        (["--resume", "--seq", "3"], "--resume"),
    ],
)
def test_a_bad_command_line_is_a_usage_error_that_changes_nothing(
    tmp_path: Path, args: list[str], says: str
) -> None:
    path = tmp_path / "s.jsonl"
    chat(path)
    before = path.read_bytes()
    ran = waybook("erase", path, *args)
    assert ran.returncode == 2
    assert says in ran.stderr
    assert path.read_bytes() == before


def test_an_old_journal_opens_verifies_unchanged_and_erase_names_migrate(tmp_path: Path) -> None:
    old = tmp_path / "old.jsonl"
    old.write_bytes(OLD_JOURNAL.read_bytes())
    assert verify_file(old).ok
    ran = waybook("erase", old, "--seq", "2", "--reason", "asked")
    assert ran.returncode == 1
    assert "waybook migrate" in ran.stderr
    assert old.read_bytes() == OLD_JOURNAL.read_bytes()


@pytest.mark.skipif(not REAL.exists(), reason="the shared real sessions are not on this machine")
def test_migrate_writes_a_sealed_copy_of_a_real_session_naming_the_old_head_and_it_erases(
    tmp_path: Path,
) -> None:
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    assert waybook("import", "claude-code", REAL, "-o", old).returncode == 0
    old_bytes = old.read_bytes()
    ran = waybook("migrate", old, "-o", new, "--json")
    assert ran.returncode == 0, ran.stderr
    provenance = json.loads(ran.stdout)["migrated_from"]
    with JsonlJournal(old, readonly=True) as journal:
        records = list(journal.read())
    assert (provenance["seq"], provenance["digest"]) == (records[-1].seq, records[-1].digest)
    assert old.read_bytes() == old_bytes  # left as it was
    with JsonlJournal(new, readonly=True) as journal:
        copied = list(journal.read())
    assert [(r.id, r.at, r.body) for r in copied[1:]] == [(r.id, r.at, r.body) for r in records[1:]]
    assert copied[0].body.schema == 2  # type: ignore[union-attr]
    assert verify_file(new).ok
    user = next(r for r in copied if r.kind == "waybook.user/2" and r.salt is not None)
    ran = waybook("erase", new, "--seq", str(user.seq), "--reason", "asked")
    assert ran.returncode == 0, ran.stderr
    assert verify_file(new).ok
    assert waybook("migrate", old, "-o", new).returncode == 2  # never over an existing file


def test_reading_commands_over_erased_records_run_and_show_no_erased_text(tmp_path: Path) -> None:
    """Until the placeholders (issue 46, part b), an erased record reads as its kind with empty content."""
    path = tmp_path / "s.jsonl"
    chat(path)
    assert waybook("erase", path, "--seq", "3..4", "--reason", "asked").returncode == 0
    for args in (["show", path], ["log", path], ["tree", path], ["view", path, "-o", tmp_path / "v.html"]):
        ran = waybook(*args)
        assert ran.returncode == 0, (args, ran.stderr)
        assert SECRET not in ran.stdout
    for fmt in ("openai", "archival", "sharegpt"):
        out = tmp_path / f"{fmt}.jsonl"
        ran = waybook("export", path, "--format", fmt, "-o", out)
        assert ran.returncode == 0, (fmt, ran.stderr)
        assert SECRET.encode() not in out.read_bytes()
    assert SECRET.encode() not in (tmp_path / "v.html").read_bytes()
