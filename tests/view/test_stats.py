"""`waybook stats`: turns, tool calls, tokens by model and latency, per branch and in total."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from waybook import InMemoryJournal, JsonlJournal, Session
from waybook.cli import main
from waybook.commands.ids import short_ids
from waybook.model import ToolCallBlock
from waybook.projections import session_stats
from waybook.stores import open_store


def two_branch_session(session: Session) -> None:
    question = session.user("How many rows?")
    session.assistant(
        [ToolCallBlock(call_id="c1", name="bash", arguments={"cmd": "wc -l"})],
        model="m1",
        usage={"input_tokens": 100, "output_tokens": 10},
        stop_reason="tool_use",
    )
    session.tool_result("c1", "boom", tool_name="bash", is_error=True)
    session.assistant("Three.", model="m1", usage={"input_tokens": 120, "output_tokens": 5})
    session.branch_from(question.id, reason="try another model")
    session.assistant("3", model="m2", usage={"input_tokens": 90, "output_tokens": 1})


def test_totals_count_every_node_and_each_branch_counts_its_own_path() -> None:
    journal = InMemoryJournal("s")
    two_branch_session(Session.create(journal, journal_id="s"))
    stats = session_stats(list(journal.read()))
    assert stats.total.turns == 1
    assert stats.total.replies == 3
    assert stats.total.tool_calls == {"bash": 1}
    assert stats.total.tool_errors == 1
    assert stats.total.tokens == {
        "m1": {"input_tokens": 220, "output_tokens": 15},
        "m2": {"input_tokens": 90, "output_tokens": 1},
    }
    by_activity = {b.active: b.tally for b in stats.branches}
    assert by_activity[True].tokens == {"m2": {"input_tokens": 90, "output_tokens": 1}}
    assert by_activity[False].tool_calls == {"bash": 1}
    assert stats.total.latency is not None
    assert stats.total.latency["p50"] >= 0


def test_the_command_prints_json_for_a_file_and_for_every_session_of_a_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two_branch_session(Session.create(JsonlJournal(tmp_path / "s.jsonl"), journal_id="s"))
    assert main(["stats", str(tmp_path / "s.jsonl"), "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert one[str(tmp_path / "s.jsonl")]["total"]["turns"] == 1

    url = f"file:{tmp_path / 'store'}"
    with open_store(url) as store:
        for name in ("a", "b"):
            two_branch_session(Session.create(store.create(name, role="session"), journal_id=name))
    assert main(["stats", "--store", url, "--json"]) == 0
    assert sorted(json.loads(capsys.readouterr().out)) == ["a", "b"]
    assert main(["stats", "--store", url, "a"]) == 0
    assert "tools: bash 1" in capsys.readouterr().out


def test_stats_without_a_journal_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats"]) == 2
    assert "--store URL" in capsys.readouterr().err


def test_short_ids_are_unique_prefixes_never_cut_to_ambiguity() -> None:
    ids = ["abcdefgh1234", "abcdefgh1299", "abcdefgh12", "zz"]
    short = short_ids(ids)
    for one in ids:
        assert [other for other in ids if other.startswith(short[one])] == [one] or short[one] == one
    assert short["zz"] == "zz"
    assert short["abcdefgh1234"] == "abcdefgh123"
