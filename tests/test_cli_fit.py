"""A CLI that fits 80 columns (`ls`, `log`, `tree`, `search`, `show --context`) and `verify --store URL`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli_runner import on_terminal, waybook
from waybook import Session
from waybook.journal import verify
from waybook.stores import CATALOG_ID, ReservedJournalError, open_store

FIXTURES = Path("/work/shared/fixtures")
CLAUDE = FIXTURES / "claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def shown(raw: bytes) -> list[str]:
    return ANSI.sub("", raw.decode()).replace("\r", "").splitlines()


@pytest.fixture(scope="module")
def real_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Claude Code session with its two sub-agents, and a Pi session, imported into a directory store."""
    if not CLAUDE.is_file():
        pytest.skip("the shared fixtures are not on this machine")
    url = f"file:{tmp_path_factory.mktemp('real')}/store"
    assert waybook("import", "claude-code", CLAUDE, "--store", url, "-o", "cc").returncode == 0
    pi = FIXTURES / "pi/before-compaction.jsonl"
    assert waybook("import", "pi", pi, "--store", url, "-o", "pi").returncode == 0
    return url


@pytest.fixture(params=["file", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    url = f"file:{tmp_path}/store" if request.param == "file" else f"sqlite:{tmp_path}/store.db"
    with open_store(url) as store:
        session = Session(store.create("s1", metadata={"user": "ada", "notes": "x" * 500}))
        session.user("where is the oat milk?")
        session.assistant("in the fridge")
        store.create("gone")
        store.purge("gone", reason="asked to forget")
        store.create("old")
        store.hide("old", reason="archived")
    return url


def test_ls_shows_id_records_last_activity_and_title_in_80_columns(real_store: str) -> None:
    status, raw = on_terminal("ls", "--store", real_store, columns=80)
    assert status == 0
    lines = shown(raw)
    assert all(len(line) <= 80 for line in lines), lines
    text = "\n".join(lines)
    for column in ("ID", "RECORDS", "LAST ACTIVITY", "TITLE"):
        assert column in text
    assert "258c7280-ae70-4798-800f-63464d01a85d.agent-a881341" in text  # never cut
    assert "Implement spotter-gqc" in text  # the first user message
    assert "claude_code" not in text  # no metadata without --long
    assert len(lines) <= 2 * 4 + 2  # header, then at most two lines a journal


def test_ls_into_a_pipe_is_one_bounded_line_a_journal(real_store: str) -> None:
    run = waybook("ls", "--store", real_store)
    lines = run.stdout.splitlines()
    assert len(lines) == 1 + 4
    assert all(len(line) <= 130 for line in lines), [len(line) for line in lines]


def test_ls_long_and_json_carry_the_metadata(real_store: str) -> None:
    long = waybook("ls", "--store", real_store, "--long")
    assert long.returncode == 0
    assert "claude_code" in long.stdout
    listed = json.loads(waybook("ls", "--store", real_store, "--json").stdout)["journals"]
    first = listed[0]
    assert first["id"] == "cc"
    assert first["title"] == "Implement spotter-gqc"
    assert first["records"] > 1000
    assert first["last_activity"].startswith("2026-02-11T")
    assert "claude_code" in first["metadata"]


def test_ls_names_an_untitled_journal_by_its_role(url: str) -> None:
    with open_store(url) as store:
        store.create("m1", role="working_memory")
    run = waybook("ls", "--store", url)
    assert "s1  " in run.stdout
    assert "where is the oat milk?" in run.stdout
    assert "(working_memory, untitled)" in run.stdout


def test_verify_a_store_without_ids_proves_every_journal_and_the_catalog(url: str) -> None:
    run = waybook("verify", "--store", url, "--json")
    assert run.returncode == 0, run.stderr
    reports = json.loads(run.stdout)
    assert [r["path"] for r in reports] == ["s1", "old", CATALOG_ID]  # hidden ones too, never purged
    catalog = reports[-1]
    assert catalog["ok"]
    assert catalog["records"] == 6  # header, three creations, the purge receipt, the hiding


def test_verify_the_catalog_by_its_id(url: str) -> None:
    run = waybook("verify", "--store", url, CATALOG_ID)
    assert run.returncode == 0, run.stderr
    assert "ok, 6 records" in run.stdout


def test_a_damaged_catalog_fails_verify_of_the_store(tmp_path: Path) -> None:
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        store.create("s1")
        store.create("s2")
    catalog = tmp_path / "store/catalog.jsonl"
    lines = catalog.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b"s2", b"s9")
    catalog.write_bytes(b"".join(lines))
    run = waybook("verify", "--store", url)
    assert run.returncode == 1
    assert "seq 3" in run.stdout + run.stderr, (run.stdout, run.stderr)


def test_verify_without_paths_or_store_is_a_usage_error() -> None:
    run = waybook("verify")
    assert run.returncode == 2
    assert "--store URL" in run.stderr


@pytest.mark.parametrize("kind", ["memory", "sqlite", "file"])
def test_every_store_shows_its_catalog_read_only(kind: str, tmp_path: Path) -> None:
    url = {"memory": "memory:", "sqlite": f"sqlite:{tmp_path}/s.db", "file": f"file:{tmp_path}/d"}[kind]
    with open_store(url) as store:
        store.create("a")
        store.purge("a", reason="test")
        with store.open_catalog() as catalog:  # type: ignore[attr-defined]
            assert verify(catalog).ok
            head = catalog.head()
            assert head.seq == 3
            with pytest.raises(ReservedJournalError):
                catalog.append([], expected=head)
        assert not store.exists("a")  # the store goes on after its catalog view is closed
        store.create("b")
