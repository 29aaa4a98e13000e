"""Issue 14: training exports that train correctly: valid rows, pairs, per-turn samples, redaction."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.formats import SHARED_FIXTURES, needs_shared
from tests.helpers.sessions import branching_session
from waybook import JsonlJournal, Session
from waybook.export._cleaning import NO_RESULT, TrainingOptions
from waybook.export._openai_format import problems
from waybook.export.trajectories import Selection, TrajectoryExporter
from waybook.journal import InMemoryJournal, SessionJournal
from waybook.model import BlobBlock, ImageBlock, TextBlock, ThinkingBlock, ToolCallBlock
from waybook.projections import TreeProjection, context_at, replay

REAL = SHARED_FIXTURES / "pi" / "before-compaction.jsonl"


def call(call_id: str, cmd: str = "ls") -> ToolCallBlock:
    return ToolCallBlock(call_id=call_id, name="bash", arguments={"cmd": cmd})


def messy_session(journal: SessionJournal | None = None) -> SessionJournal:
    """What real agent sessions hold: an empty aborted turn, a call never answered, thinking, an image."""
    journal = journal if journal is not None else InMemoryJournal("messy")
    session = Session.create(journal, journal_id="messy")
    session.user(
        [
            TextBlock(text="What is in this picture?"),
            ImageBlock(source="data:image/png;base64,AA==", media_type="image/png"),
        ]
    )
    session.assistant("", stop_reason="aborted")
    session.user("Try again.")
    session.assistant([ThinkingBlock(thinking="let me look"), call("c1"), call("c2")], stop_reason="tool_use")
    session.tool_result("c1", "a.png")
    session.assistant("It is a.png.")
    return journal


def test_default_rows_are_valid_and_say_what_they_left_out() -> None:
    exporter = TrajectoryExporter(messy_session())
    (row,) = exporter.rows("openai", Selection())
    assert problems(row) == []
    assert [m["role"] for m in row["messages"]] == ["user", "user", "assistant", "tool", "assistant"]
    assert row["messages"][0]["content"] == [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}},
    ]
    assert [c["id"] for c in row["messages"][2]["tool_calls"]] == ["c1"]
    assert exporter.dropped == {
        "aborted assistant turns": 1,
        "unanswered tool calls": 1,
        "thinking blocks": 1,
    }


def test_each_choice_is_an_explicit_option() -> None:
    options = TrainingOptions(unanswered="stub", thinking="tag", images="drop", aborted="keep")
    exporter = TrajectoryExporter(messy_session(), options=options)
    (row,) = exporter.rows("openai", Selection())
    assert problems(row) == []
    messages = row["messages"]
    assert messages[0]["content"] == "What is in this picture?"
    assert messages[2]["content"].startswith("<think>\nlet me look\n</think>")
    assert [m.get("tool_call_id") for m in messages[3:5]] == ["c1", "c2"]
    assert messages[4]["content"] == NO_RESULT
    assert exporter.dropped["empty assistant turns"] == 0
    assert exporter.dropped["aborted assistant turns"] == 1, "an empty aborted turn is never a valid target"


def test_sharegpt_rows_follow_the_same_rules_and_alternate_as_llama_factory_requires() -> None:
    (row,) = TrajectoryExporter(messy_session()).rows("sharegpt", Selection())
    assert [c["from"] for c in row["conversations"]] == ["human", "function_call", "observation", "gpt"]
    assert row["conversations"][0]["value"].endswith("Try again.")  # two user messages, one human turn


CALL = {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
USER = {"role": "user", "content": "x"}


@pytest.mark.parametrize(
    ("row", "rule"),
    [
        ({"messages": [{"role": "assistant", "content": ""}]}, "needs content or tool calls"),
        ({"messages": [{"role": "assistant", "content": None, "tool_calls": [CALL]}, USER]}, "not answered"),
        ({"messages": [{"role": "tool", "content": "x", "tool_call_id": "a"}]}, "answers no open tool call"),
        ({"messages": [{"role": "user", "content": "x"}]}, "at least one assistant"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "unknown role"),
        ({"messages": [{"role": "assistant", "content": "x", "extra": 1}]}, "unknown key"),
        ({"messages": [{"role": "assistant", "content": "x"}], "other": 1}, "unknown row key"),
        # Issue 45: rows carried an undocumented `metadata` key and no `tools` beside their calls.
        ({"messages": [{"role": "assistant", "content": "x"}], "metadata": {}}, "unknown row key"),
        ({"messages": [USER, {"role": "assistant", "content": None, "tool_calls": [CALL]}]}, "not defined"),
    ],
)
def test_the_format_checker_catches_what_an_upload_rejects(row: dict[str, Any], rule: str) -> None:
    assert any(rule in p for p in problems(row))


def all_rows(journal: SessionJournal) -> list[dict[str, Any]]:
    exporter = TrajectoryExporter(journal)
    rows = [*exporter.rows("openai", Selection("all")), *exporter.turns(Selection("all"))]
    pairs = list(exporter.pairs())
    return rows + [
        {"messages": p["prompt"] + p["chosen"], **({"tools": p["tools"]} if "tools" in p else {})}
        for p in pairs
        if p["chosen"]
    ]


@pytest.mark.parametrize("build", [branching_session, messy_session])
def test_every_openai_row_of_every_export_is_valid(build: Callable[[], SessionJournal]) -> None:
    rows = all_rows(build())
    assert rows
    for row in rows:
        assert problems(row) == [], row


@needs_shared(REAL.is_file())
def test_every_openai_row_of_a_real_pi_session_is_valid() -> None:
    from waybook.formats.pi._codec import import_pi
    from waybook.model import GENESIS

    journal = InMemoryJournal("real")
    journal.append(list(import_pi(REAL.read_bytes()).records), expected=GENESIS)
    for row in all_rows(journal):
        assert problems(row) == []


# --- per-turn samples -----------------------------------------------------------------------------


def test_each_assistant_turn_is_a_sample_with_the_exact_context_and_its_provenance() -> None:
    journal = branching_session()
    tree = replay(TreeProjection(), journal)
    samples = list(TrajectoryExporter(journal, provenance=True).turns(Selection("all")))
    records = {r.id: r for r in journal.read()}
    excluded = {tree.ids[p] for p in tree.exclusions.values()}  # taken back: never in any sample
    assistants = [r for r in records.values() if r.kind.startswith("waybook.assistant/")]
    expected = sorted(r.id for r in assistants if r.id not in excluded)
    assert sorted(s["metadata"]["turn"]["id"] for s in samples) == expected
    for sample in samples:
        turn = records[sample["metadata"]["turn"]["id"]]
        assert sample["metadata"]["turn"] == {"seq": turn.seq, "id": turn.id, "digest": turn.digest}
        context = [
            m
            for m in context_at(journal, tree, turn.body.parent)  # type: ignore[union-attr]
            if m.record.id not in excluded
        ]
        assert sample["metadata"]["context"]["seqs"] == [m.record.seq for m in context]
        assert len(sample["messages"]) == len(context) + 1
        assert all(m.get("weight") == 0 for m in sample["messages"][:-1] if m["role"] == "assistant")
        assert "weight" not in sample["messages"][-1]
    last = next(s for s in samples if s["metadata"]["turn"]["id"] == "e12")
    assert last["messages"][0]["content"].endswith("The user asked about notes.txt."), "after compaction"
    assert "Also a database URL" not in json.dumps(last["messages"]), "after exclusions"


# --- preference pairs -----------------------------------------------------------------------------


def label(journal: SessionJournal, target: str, value: str | None, kind: str = "waybook.label") -> None:
    key = "targetId" if kind == "pi.label" else "target"
    Session(journal).custom(kind, {key: target, "label": value})


def chosen_and_rejected(journal: SessionJournal) -> list[tuple[str, str]]:
    return [
        (p["metadata"]["leaf"], p["metadata"]["rejected_leaf"])
        for p in TrajectoryExporter(journal, provenance=True).pairs()
    ]


def test_without_labels_no_pair_is_made_the_active_leaf_alone_chooses_nothing() -> None:
    assert chosen_and_rejected(branching_session()) == []


def test_a_chosen_label_makes_its_unlabelled_siblings_rejected() -> None:
    journal = branching_session()
    label(journal, "e05", "chosen")
    leaf = TrajectoryExporter(journal).tree.leaf_id
    assert chosen_and_rejected(journal) == [("e05", leaf)]


def test_a_chosen_label_cleared_later_no_longer_counts() -> None:
    journal = branching_session()
    label(journal, "e05", "chosen")
    label(journal, "e07", "rejected")
    label(journal, "e05", "")
    label(journal, "e07", None, kind="pi.label")
    assert chosen_and_rejected(journal) == []


def test_a_label_on_the_fork_itself_chooses_neither_branch() -> None:
    journal = branching_session()
    label(journal, "e02", "chosen")
    assert chosen_and_rejected(journal) == []


def test_labels_after_the_fork_decide_and_rejected_wins() -> None:
    journal = branching_session()
    label(journal, "e03", "chosen", kind="pi.label")
    label(journal, "e07", "rejected")
    leaf = TrajectoryExporter(journal).tree.leaf_id
    assert chosen_and_rejected(journal) == [("e05", leaf)]


def test_two_chosen_branches_make_no_pair_between_them() -> None:
    journal = branching_session()
    label(journal, "e05", "chosen")
    label(journal, "e07", "chosen")
    assert chosen_and_rejected(journal) == []


# --- redaction ------------------------------------------------------------------------------------

SECRETS = {
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
    "aws-secret-key": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "github-classic": "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
    "github-fine-grained": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEF",
    "openai": "sk-proj-abcdefghijklmnopqrstuvwx1234",
    "anthropic": "sk-ant-api03-abcdefghijklmnopqrstuvwx",
    "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "pem-no-end": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nmore key bytes",
    "pgp": "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----",
    "pgp-no-end": "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBFtruncated",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "url-password": "postgres://admin:hunter2secret@db.internal/shop",
    "url-password-no-user": "redis://:hunter2secret@cache:6379/0",
    "bearer": "Authorization: Bearer abcdef1234567890.xyz",
}
SECRET_PARTS = {  # the part of each example that must not survive
    "aws-secret-key": "wJalrXUtnFEMI",
    "pem": "MIIEowIBAAKCAQEA",
    "pem-no-end": "more key bytes",
    "pgp": "lQOYBF",
    "pgp-no-end": "lQOYBFtruncated",
    "url-password": "hunter2secret",
    "url-password-no-user": "hunter2secret",
    "bearer": "abcdef1234567890",
}


def secret_session(secret: str) -> SessionJournal:
    journal = InMemoryJournal("secrets")
    session = Session.create(journal, journal_id="secrets")
    session.user(f"my key: {secret}")
    session.assistant([call("c1", f"echo {secret}")], stop_reason="tool_use")
    session.tool_result("c1", f"printed {secret} ok")
    session.assistant("done")
    return journal


@pytest.mark.parametrize("name", SECRETS)
def test_each_secret_kind_is_masked_in_text_tool_arguments_and_tool_results(name: str) -> None:
    secret = SECRETS[name]
    exporter = TrajectoryExporter(secret_session(secret), redact=True)
    rows = [
        *exporter.rows("openai", Selection()),
        *exporter.turns(Selection()),
        *exporter.rows("sharegpt", Selection()),
    ]
    part = SECRET_PARTS.get(name, secret)
    for row in rows:
        assert problems(row) == [] or "conversations" in row
        assert part not in json.dumps(row, ensure_ascii=False)
        if "messages" in row:
            for message in row["messages"]:
                for tool_call in message.get("tool_calls", []):
                    json.loads(tool_call["function"]["arguments"])  # still JSON after masking
    assert exporter.redactor is not None
    assert exporter.redactor.total >= 3


def test_export_turns_from_the_cli_reports_what_it_left_out(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        messy_session(journal)
    run = waybook("export", path, "--format", "openai", "--turns", "-o", "-")
    assert run.returncode == 0, run.stderr
    rows = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(rows) == 2
    assert all(problems(r) == [] for r in rows)
    assert "assistant turns with nothing to learn (aborted or empty): 1" in run.stderr
    stub = waybook("export", path, "--format", "openai", "--unanswered", "stub", "-o", "-")
    assert NO_RESULT in stub.stdout


def test_content_excluded_later_never_reaches_a_per_turn_sample() -> None:
    journal = InMemoryJournal("excluded-later")
    session = Session.create(journal, journal_id="excluded-later")
    secret = session.user("my SSN is SECRETSSN 123-45-6789")
    session.assistant("noted")
    session.exclude(secret.id, reason="pii")
    session.user("what next?")
    session.assistant("carry on")
    samples = list(TrajectoryExporter(journal).turns(Selection("all")))
    assert samples
    assert "SECRETSSN" not in json.dumps(samples)


def test_a_blob_block_by_reference_is_a_named_placeholder_never_nothing() -> None:
    journal = InMemoryJournal("blobbed")
    session = Session.create(journal, journal_id="blobbed")
    session.user([BlobBlock(digest="ab" * 32, size=5000, media_type="text/plain", name="log.txt")])
    session.assistant("ok")
    exporter = TrajectoryExporter(journal, options=TrainingOptions(blobs="reference"))
    (row,) = exporter.rows("openai", Selection("active"))
    assert row["messages"][0]["content"] == f"[blob log.txt text/plain, 5000 bytes, sha256:{'ab' * 32}]"
    assert exporter.dropped == {"blobs (as references)": 1}
