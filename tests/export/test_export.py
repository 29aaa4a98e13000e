"""Trajectory and archival exports: branch choice, formats, provenance, determinism and redaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.sessions import GOLDEN, branching_session, chosen_retry, golden_exports
from waybook._redact import KINDS, Redactor
from waybook.export.trajectories import Selection, TrajectoryExporter, encode_row
from waybook.journal import InMemoryJournal, JsonlJournal, verify


def lines(rows: list[dict]) -> bytes:  # type: ignore[type-arg]
    return b"".join(encode_row(r) + b"\n" for r in rows)


@pytest.mark.parametrize(
    "name", ["openai-all.jsonl", "openai-active-redacted.jsonl", "sharegpt-all.jsonl", "pairs.jsonl"]
)
def test_exports_match_the_golden_files(name: str) -> None:
    rows = golden_exports(branching_session(), TrajectoryExporter, Selection)[name]
    assert lines(rows) == (GOLDEN / name).read_bytes()


def test_the_same_journal_always_exports_the_same_bytes(tmp_path: Path) -> None:
    memory = branching_session()
    on_disk = branching_session(JsonlJournal(tmp_path / "s.jsonl"))
    for journal in (memory, on_disk):
        rows = list(TrajectoryExporter(journal).rows("openai", Selection("all")))
        assert lines(rows) == (GOLDEN / "openai-all.jsonl").read_bytes()


def test_one_trajectory_per_leaf_and_abandoned_entries_never_leak() -> None:
    journal = branching_session()
    rows = list(TrajectoryExporter(journal, provenance=True).rows("openai", Selection("all")))
    assert [r["metadata"]["leaf"] for r in rows] == ["e05", "e12"]
    active = [m.get("content") for m in rows[1]["messages"]]
    assert "It is a shopping note: buy milk." not in active
    abandoned = [m.get("content") for m in rows[0]["messages"]]
    assert "Nothing else." not in abandoned


def test_openai_rows_pair_tool_calls_with_tool_messages_and_carry_provenance() -> None:
    journal = branching_session()
    (row,) = TrajectoryExporter(journal, provenance=True).rows("openai", Selection("e05"))
    call = row["messages"][2]
    assert call["role"] == "assistant"
    assert call["tool_calls"][0]["id"] == "t1"
    assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {"cmd": "cat notes.txt"}
    assert row["messages"][3] == {
        "role": "tool",
        "content": "buy milk\ndb: postgres://admin:hunter2@db.internal/shop",
        "tool_call_id": "t1",
    }
    assert [t["function"]["name"] for t in row["tools"]] == ["bash", "edit"]
    head = journal.head()
    assert row["metadata"] == {
        "journal": "golden",
        "leaf": "e05",
        "head": {"seq": head.seq, "digest": head.digest},
    }


def test_exclusions_and_compactions_stay_out_of_trajectories() -> None:
    (row,) = TrajectoryExporter(branching_session()).rows("openai", Selection("active"))
    contents = [m["content"] for m in row["messages"]]
    assert "Also a database URL with a password." not in contents
    assert not any("asked about notes.txt" in (c or "") for c in contents)


def test_sibling_branches_become_a_preference_pair_with_the_labelled_branch_chosen() -> None:
    (pair,) = TrajectoryExporter(chosen_retry(branching_session()), provenance=True).pairs()
    assert [m["role"] for m in pair["prompt"]] == ["system", "user"]
    assert pair["chosen"][0]["content"] == "I need to read the file first."
    assert pair["rejected"][-1]["content"] == "It is a shopping note: buy milk."
    assert pair["metadata"]["fork"] == "e02"


def test_a_label_record_can_choose_the_other_branch() -> None:
    journal = branching_session()
    from waybook import Session

    Session(journal).custom("waybook.label", {"target": "e05", "label": "chosen"})
    Session(journal).custom("waybook.label", {"target": "e07", "label": "rejected"})
    (pair,) = TrajectoryExporter(journal).pairs()
    assert pair["chosen"][-1]["content"] == "It is a shopping note: buy milk."


def test_archival_export_re_imports_to_an_identical_journal(tmp_path: Path) -> None:
    journal = branching_session()
    archive = b"".join(line + b"\n" for line in journal.read_lines())
    (tmp_path / "archive.jsonl").write_bytes(archive)
    with JsonlJournal(tmp_path / "archive.jsonl", create=False) as restored:
        assert verify(restored).ok
        assert restored.head() == journal.head()
        assert list(restored.read()) == list(journal.read())
    assert list(InMemoryJournal.from_lines(archive.splitlines()).read_lines()) == list(journal.read_lines())


# --- redaction ------------------------------------------------------------------------------------

SECRETS = {
    "private-key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    "url-password": "postgres://admin:hunter2@db.internal/shop",
    "bearer-token": "Authorization: Bearer abcdef1234567890.xyz",
    "stripe-key": "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "anthropic-key": "sk-ant-api03-abcdefghijklmnop",
    "openai-key": "sk-proj-abcdefghijklmnopqrstuvwx",
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
    "github-token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
    "slack-token": "xoxb-1234567890-abcdefghij",
    "google-api-key": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
    "basic-auth": "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l",
    "aws-secret-key": "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "assigned-secret": "DB_PASSWORD=hunter2",
}


def test_these_examples_name_kinds_the_detector_has() -> None:
    assert set(SECRETS) <= set(KINDS)  # tests/helpers/secret_corpus.py has an example of every kind


@pytest.mark.parametrize(("name", "secret"), sorted(SECRETS.items()))
def test_each_secret_kind_is_masked_and_counted(name: str, secret: str) -> None:
    redactor = Redactor()
    masked = redactor.text(f"before {secret} after")
    assert redactor.counts == {name: 1}
    assert f"[REDACTED:{name}]" in masked
    assert masked.startswith("before ")
    assert masked.endswith(" after")


def test_plain_text_is_left_alone() -> None:
    redactor = Redactor()
    text = "skip this: sk-short, https://example.com/a:b, bearer of news"
    assert redactor.text(text) == text
    assert redactor.total == 0


def test_redacted_exports_mask_secrets_in_every_message_but_not_provenance() -> None:
    exporter = TrajectoryExporter(branching_session(), redact=True, provenance=True)
    (row,) = exporter.rows("openai", Selection("e05"))
    text = json.dumps(row["messages"])
    assert "ghp_" not in text
    assert "hunter2" not in text
    assert exporter.redactor is not None
    assert exporter.redactor.counts == {"github-token": 1, "url-password": 1}
    assert row["metadata"]["leaf"] == "e05"


def test_an_exclusion_on_one_branch_does_not_shift_the_pair_split_and_keeps_the_entry_out() -> None:
    """Issue 45: chosen and rejected share one prompt; an entry a branch of the fork excluded (a leaked
    secret taken back) stays out of that shared prompt."""
    from waybook import Session
    from waybook.model._records import Annotation

    journal = InMemoryJournal()
    session = Session.create(journal)
    system = session.system("sensitive system prompt")
    question = session.user("q")
    session.assistant("rejected answer")
    session.exclude(system.id, reason="hide it on this branch")
    session.branch_from(question.id, reason="retry")
    chosen = session.assistant("chosen answer")
    session.append(Annotation(target=chosen.id, type="waybook.preference", data={"label": "chosen"}))
    (pair,) = TrajectoryExporter(journal).pairs()
    assert [m["content"] for m in pair["prompt"]] == ["q"]
    assert [m["content"] for m in pair["chosen"]] == ["chosen answer"]
    assert [m["content"] for m in pair["rejected"]] == ["rejected answer"]
