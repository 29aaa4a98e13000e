"""Issue 33, point 8: preference pairs people can make (`waybook label`, Pi labels), and rows sized to
what a trainer wants (--max-rows, --last-turns, --stats)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.formats import pi_journal
from tests.helpers.paths import SHARED_FIXTURES
from tests.helpers.pi import HEADER_V3, answer, entry, user
from tests.helpers.sessions import branching_session
from waybook import JsonlJournal
from waybook.export.trajectories import TrajectoryExporter
from waybook.formats.pi._codec import import_pi


def pairs_of(path: Path, tmp_path: Path, *extra: str) -> tuple[list[dict], str]:  # type: ignore[type-arg]
    out = tmp_path / "pairs.jsonl"
    out.unlink(missing_ok=True)
    run = waybook("export", path, "--format", "openai", "--pairs", "-o", out, *extra)
    assert run.returncode == 0, run.stderr
    return [json.loads(line) for line in out.read_text().splitlines()], run.stderr


def test_pairs_without_labels_say_why_there_are_none(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    branching_session(JsonlJournal(path))
    rows, said = pairs_of(path, tmp_path)
    assert rows == []
    assert "no branch is labelled chosen" in said
    assert "waybook label PATH NODE chosen" in said


def test_waybook_label_records_a_preference_the_pairs_come_from(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    branching_session(JsonlJournal(path))
    before = path.read_bytes()
    run = waybook("label", path, "e05", "chosen", "--reason", "the better answer")
    assert run.returncode == 0, run.stderr
    assert path.read_bytes().startswith(before)  # appended, nothing rewritten
    (pair,), _ = pairs_of(path, tmp_path, "--metadata")
    assert pair["metadata"]["leaf"] == "e05"
    again, _ = pairs_of(path, tmp_path, "--metadata")
    assert again == [pair]  # from the journal, reproducibly
    assert waybook("verify", path).returncode == 0
    rejected = waybook("label", path, "e05", "rejected")
    assert rejected.returncode == 0
    assert pairs_of(path, tmp_path)[0] == []


def test_label_refuses_a_node_that_is_not_there(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    branching_session(JsonlJournal(path))
    before = path.read_bytes()
    run = waybook("label", path, "nope", "chosen")
    assert run.returncode == 2
    assert "NODE 'nope'" in run.stderr
    assert path.read_bytes() == before


def test_a_pi_chosen_label_on_the_first_of_two_answers_gives_a_pair() -> None:
    data = "\n".join(
        json.dumps(e)
        for e in (
            HEADER_V3,
            user("q", None, "which is right?"),
            answer("a1", "q", "the first answer"),
            answer("a2", "q", "the second answer"),
            entry("label", "l1", "a2", targetId="a1", label="chosen"),
        )
    )
    (pair,) = TrajectoryExporter(pi_journal(import_pi(data + "\n"))).pairs()
    assert pair["chosen"][-1]["content"] == "the first answer"
    assert pair["rejected"][-1]["content"] == "the second answer"


def test_max_rows_last_turns_and_stats(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    branching_session(JsonlJournal(path))
    out = tmp_path / "t.jsonl"
    run = waybook(
        "export", path, "--format", "openai", "--turns", "--max-rows", "1", "--last-turns", "1", "--stats",
        "-o", out,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert [m["role"] for m in row["messages"]].count("user") == 1
    assert "stopped at --max-rows 1" in run.stderr
    assert "stats: 1 rows" in run.stderr
    assert "tokens (estimated" in run.stderr
    bad = waybook("export", path, "--format", "openai", "--max-rows", "0", "-o", tmp_path / "x.jsonl")
    assert bad.returncode == 2


def rebuilt(rows: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    by_id: dict[str, list] = {}  # type: ignore[type-arg]
    out = []
    for row in rows:
        messages = row["messages"]
        if "prefix" in row:
            messages = by_id[row["prefix"]["row"]][: row["prefix"]["messages"]] + messages
        by_id[row["id"]] = messages
        out.append({k: v for k, v in row.items() if k not in ("id", "prefix")} | {"messages": messages})
    return out


def test_dedupe_prefix_rows_name_the_shared_prefix_once_and_rebuild_exactly(tmp_path: Path) -> None:
    fixtures = SHARED_FIXTURES / "codex"
    rollouts = sorted(fixtures.glob("rollout-*.jsonl"))
    if not rollouts:
        pytest.skip("shared/fixtures is not beside this checkout")
    path = tmp_path / "s.jsonl"
    assert waybook("import", "codex", rollouts[0], "-o", path).returncode == 0
    full, small = tmp_path / "full.jsonl", tmp_path / "small.jsonl"
    assert waybook("export", path, "--format", "openai", "--turns", "-o", full).returncode == 0
    run = waybook("export", path, "--format", "openai", "--turns", "--dedupe-prefix", "-o", small)
    assert run.returncode == 0, run.stderr
    plain = [json.loads(line) for line in full.read_text().splitlines()]
    deduped = [json.loads(line) for line in small.read_text().splitlines()]
    assert any("prefix" in row for row in deduped)
    assert rebuilt(deduped) == plain
    assert small.stat().st_size < full.stat().st_size
    refused = waybook("export", path, "--format", "openai", "--dedupe-prefix", "-o", tmp_path / "x.jsonl")
    assert refused.returncode == 2
