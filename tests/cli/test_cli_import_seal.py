"""`waybook import ... --seal` (issue 46): an import written sealed (schema 2) can erase its content; a
store's journal begun by an import that did not seal is continued in schema 1 when its source grows,
and a sealed one keeps growing sealed. (Imports do not seal by default: docs/erasure.md, "Not built
yet", says why.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.paths import SHARED_FIXTURES
from waybook.model import Header
from waybook.stores import open_store

pytestmark = pytest.mark.skipif(
    not SHARED_FIXTURES.is_dir(), reason="shared/fixtures is not beside this checkout"
)
SOURCE = SHARED_FIXTURES / "claude-code" / "spotter" / "short.jsonl"


def first_lines(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "src" / "session.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(SOURCE.read_text().splitlines(keepends=True)[:count]))
    return path


def schema(url: str, journal_id: str) -> int:
    with open_store(url) as store, store.open(journal_id) as journal:
        (header,) = journal.read(limit=1)
    assert isinstance(header.body, Header)
    return header.body.schema


def test_a_sealed_import_can_erase_its_content_and_verifies(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    assert waybook("import", "claude-code", SOURCE, "-o", out, "--seal").returncode == 0
    header = json.loads(out.read_text().splitlines()[0])
    assert header["body"]["schema"] == 2
    seqs = [r["seq"] for r in map(json.loads, out.read_text().splitlines()) if r.get("salt")]
    erased = waybook("erase", out, "--seq", str(seqs[0]), "--reason", "test", "--json")
    assert erased.returncode == 0, erased.stderr
    assert waybook("verify", out).returncode == 0


def test_an_import_without_seal_still_writes_schema_1(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    assert waybook("import", "claude-code", SOURCE, "-o", out).returncode == 0
    assert "schema" not in json.loads(out.read_text().splitlines()[0])["body"]


def test_a_journal_begun_unsealed_is_continued_in_schema_1_by_a_sealing_import(tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path}/s.db"
    assert waybook("import", "claude-code", first_lines(tmp_path, 4), "--store", url, "chat").returncode == 0
    grown = first_lines(tmp_path, 100)
    run = waybook("import", "claude-code", grown, "--store", url, "chat", "--seal", "--json")
    assert run.returncode == 0, run.stderr
    assert schema(url, "chat") == 1
    assert waybook("verify", "--store", url, "chat").returncode == 0
    assert waybook("import", "claude-code", grown, "--store", url, "whole").returncode == 0
    with open_store(url) as store, store.open("chat") as grew, store.open("whole") as once:
        assert [(r.id, r.at) for r in grew.read()][1:] == [(r.id, r.at) for r in once.read()][1:]
        assert not any(line.startswith(b'{"salt"') for line in grew.read_lines())  # type: ignore[attr-defined]


def test_a_sealed_journal_in_a_store_keeps_growing_sealed(tmp_path: Path) -> None:
    url = f"file:{tmp_path}/store"
    first = waybook("import", "claude-code", first_lines(tmp_path, 4), "--store", url, "chat", "--seal")
    assert first.returncode == 0, first.stderr
    run = waybook("import", "claude-code", first_lines(tmp_path, 100), "--store", url, "chat", "--seal")
    assert run.returncode == 0, run.stderr
    assert schema(url, "chat") == 2
    assert waybook("verify", "--store", url, "chat").returncode == 0
