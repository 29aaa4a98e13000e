"""`waybook gc` and `waybook verify --blobs`, run as a user would (in-process: tests.helpers.cli_runner)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli_runner import waybook
from waybook import Session
from waybook.stores import open_store


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


def test_gc_and_verify_blobs_work_on_a_postgresql_store(pg_url: str) -> None:
    import psycopg

    with open_store(pg_url) as store:
        session = Session.create(store.create("s"), blobs=store.blobs, inline_limit=8)
        gone = session.tool_result("c1", "a large output").body.content[0].digest
        damaged = session.tool_result("c2", "another large output").body.content[0].digest
        orphan = store.blobs.put(b"stored, never referenced", media_type="text/plain")
        store.blobs.release(orphan)
    with psycopg.connect(pg_url, autocommit=True) as conn:  # two hours pass
        conn.execute("UPDATE waybook_blobs SET stored = stored - interval '2 hours'")
        conn.execute("UPDATE waybook_blob_leases SET taken = taken - interval '2 hours'")
    run = waybook("gc", "--store", pg_url, "--grace", "600", "--json")
    assert run.returncode == 0, run.stderr
    receipt = json.loads(run.stdout)
    assert (receipt["removed"], receipt["referenced"]) == ([orphan.digest], 2)
    assert waybook("verify", "--store", pg_url, "s", "--blobs").returncode == 0
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DELETE FROM waybook_blobs WHERE digest = %s", (gone,))
        conn.execute(
            "UPDATE waybook_blob_parts SET bytes = 'x'::bytea || bytes"
            " WHERE blob = (SELECT id FROM waybook_blobs WHERE digest = %s)",
            (damaged,),
        )
    broken = waybook("verify", "--store", pg_url, "s", "--blobs", "--json")
    assert broken.returncode == 1
    found = json.loads(broken.stdout)[0]["blobs"]
    assert (found["missing"], found["damaged"]) == ([gone], [damaged])
