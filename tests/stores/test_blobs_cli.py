"""`waybook gc` and `waybook verify --blobs`, run as a user would."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from waybook import Session
from waybook.stores import open_store

WAYBOOK = shutil.which("waybook")
pytestmark = pytest.mark.skipif(WAYBOOK is None, reason="the console script is not installed")


def waybook(*args: str | Path) -> subprocess.CompletedProcess[str]:
    assert WAYBOOK is not None
    return subprocess.run([WAYBOOK, *map(str, args)], capture_output=True, text=True, check=False)


def test_gc_prints_its_receipt_and_verify_blobs_finds_a_missing_blob(tmp_path: Path) -> None:
    url = f"file:{tmp_path / 'store'}"
    with open_store(url) as store:
        session = Session.create(store.create("s"), blobs=store.blobs, inline_limit=8)
        digest = session.tool_result("c1", "a large output").body.content[0].digest
    assert waybook("verify", "--store", url, "s", "--blobs").returncode == 0
    run = waybook("gc", "--store", url, "--grace", "0", "--json")
    assert run.returncode == 0, run.stderr
    receipt = json.loads(run.stdout)
    assert receipt["removed"] == []
    assert receipt["referenced"] == 1
    assert receipt["catalog_seq"] >= 2
    (tmp_path / "store" / "blobs" / "sha256" / digest[:2] / digest).unlink()
    broken = waybook("verify", "--store", url, "s", "--blobs", "--json")
    assert broken.returncode == 1
    assert json.loads(broken.stdout)[0]["blobs"]["missing"] == [digest]


def test_blob_commands_need_a_store(tmp_path: Path) -> None:
    assert waybook("verify", tmp_path / "x.jsonl", "--blobs").returncode == 2
    assert waybook("gc").returncode == 2
    assert waybook("gc", "--store", f"file:{tmp_path}", "--grace", "-1").returncode == 2
