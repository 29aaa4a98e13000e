"""waybook -> Pi -> waybook through the command line keeps every digest (issue 41): the export carries
each record's batch place (inside the bytes its digest covers) in the `waybook` field Pi keeps and
ignores, and the import appends the records in those batches."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli_runner import waybook
from waybook import JsonlJournal, Session, ToolOutcome
from waybook.model import ToolCallBlock
from waybook.stores import open_store


def digests(path: Path) -> list[tuple[int, str]]:
    return [(r["seq"], r["digest"]) for r in map(json.loads, path.read_text().splitlines())]


def batched_session(path: Path) -> Path:
    """A session of records appended alone and in batches: tool turns, a branch, trailing records."""
    with JsonlJournal.create(path, journal_id="batched", metadata={"cwd": "/w"}) as journal:
        session = Session(journal, actor="tests")
        session.system("Be brief.")
        question = session.user("list the files")
        calls = [
            ToolCallBlock(call_id="c1", name="bash", arguments={"cmd": "ls"}),
            ToolCallBlock(call_id="c2", name="bash", arguments={"cmd": "pwd"}),
        ]
        session.turn(calls, [ToolOutcome("c1", "a.py"), ToolOutcome("c2", "/w")])  # one batch of three
        session.assistant("two files")
        session.branch_from(question.id, reason="try again")
        session.turn(
            [ToolCallBlock(call_id="c3", name="bash", arguments={"cmd": "ls -a"})], [ToolOutcome("c3", ".")]
        )
        session.reset(reason="new topic")  # a record after the last node
    return path


def round_trip(source: Path, tmp_path: Path) -> Path:
    exported = tmp_path / "session.pi.jsonl"
    ran = waybook("export", source, "--format", "pi", "-o", exported)
    assert ran.returncode == 0, ran.stderr
    back = tmp_path / "back.jsonl"
    ran = waybook("import", "pi", exported, "-o", back)
    assert ran.returncode == 0, ran.stderr
    return back


def test_pi_export_then_import_through_the_cli_keeps_every_digest(tmp_path: Path) -> None:
    source = batched_session(tmp_path / "source.jsonl")
    places = [r.get("batch") for r in map(json.loads, source.read_text().splitlines())]
    assert [3, 3] in places, "the session has batches"
    assert None in places, "and records appended alone"
    assert digests(round_trip(source, tmp_path)) == digests(source)


def test_the_demo_session_comes_back_with_every_digest(tmp_path: Path) -> None:
    assert waybook("demo", tmp_path / "demo").returncode == 0
    source = tmp_path / "demo" / "session.jsonl"
    assert digests(round_trip(source, tmp_path)) == digests(source)


def test_a_fork_whose_header_shares_a_batch_comes_back_with_every_digest(tmp_path: Path) -> None:
    with JsonlJournal.create(tmp_path / "parent.jsonl", journal_id="parent") as journal:
        session = Session(journal)
        node = session.user("hello")
        session.assistant("hi")
        with JsonlJournal(tmp_path / "fork.jsonl") as target:
            session.fork(node.id, target, journal_id="fork")  # the header and its copies: one batch
    source = tmp_path / "fork.jsonl"
    assert json.loads(source.read_text().splitlines()[0])["batch"] == [1, 2]
    assert digests(round_trip(source, tmp_path)) == digests(source)


def test_an_import_into_a_store_keeps_the_digests_too(tmp_path: Path) -> None:
    source = batched_session(tmp_path / "source.jsonl")
    exported = tmp_path / "session.pi.jsonl"
    assert waybook("export", source, "--format", "pi", "-o", exported).returncode == 0
    url = f"file:{tmp_path}/store"
    ran = waybook("import", "pi", exported, "--store", url, "-o", "batched")
    assert ran.returncode == 0, ran.stderr
    with open_store(url) as store, store.open("batched") as journal:
        assert [r.digest for r in journal.read()][1:] == [d for _, d in digests(source)][1:]


def test_a_session_pi_continued_keeps_the_exported_digests_and_adds_its_entries(tmp_path: Path) -> None:
    source = batched_session(tmp_path / "source.jsonl")
    exported = tmp_path / "session.pi.jsonl"
    assert waybook("export", source, "--format", "pi", "-o", exported).returncode == 0
    lines = exported.read_text().splitlines()
    last = json.loads(lines[-1])
    continued = {
        "type": "message",
        "id": "pi-new",
        "parentId": last["id"] if last.get("customType") != "waybook.records" else last["parentId"],
        "timestamp": "2026-12-31T09:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "and now?"}], "timestamp": 1},
    }
    exported.write_text("\n".join([*lines, json.dumps(continued)]) + "\n")
    back = tmp_path / "back.jsonl"
    ran = waybook("import", "pi", exported, "-o", back)
    assert ran.returncode == 0, ran.stderr
    kept = digests(back)
    assert kept[: len(digests(source))] == digests(source)
    assert len(kept) > len(digests(source))


def test_places_that_no_longer_fit_are_reported_and_the_import_batches_on_its_own(tmp_path: Path) -> None:
    source = batched_session(tmp_path / "source.jsonl")
    exported = tmp_path / "session.pi.jsonl"
    assert waybook("export", source, "--format", "pi", "-o", exported).returncode == 0
    entries = [json.loads(line) for line in exported.read_text().splitlines()]
    cut = next(i for i, e in enumerate(entries) if e.get("waybook", {}).get("batch") == [2, 3])
    del entries[cut]  # an edit took the middle record of a batch away
    exported.write_text("".join(json.dumps(e) + "\n" for e in entries))
    back = tmp_path / "back.jsonl"
    ran = waybook("import", "pi", exported, "-o", back)
    assert ran.returncode == 0, ran.stderr
    assert "batch places" in ran.stderr
    assert waybook("verify", back).returncode == 0
