"""Issue 45: training rows every trainer loads, proven by the trainers' own code or their cited rules.

LLaMA-Factory's ShareGPT rules, TRL's documented shapes, OpenAI's SFT and DPO checks (tests/helpers/
trainer_checks.py cites each) over every real session; Hugging Face `datasets` loading every JSONL output
(one file, and several in one call) and the Parquet dataset folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.formats import real_session, real_session_files
from tests.helpers.sessions import branching_session, chosen_retry
from tests.helpers.trainer_checks import (
    llama_factory_problems,
    openai_dpo_problems,
    trl_problems,
)
from waybook import InMemoryJournal, JsonlJournal, Session
from waybook.export._cleaning import TrainingOptions
from waybook.export._openai_format import problems
from waybook.export.trajectories import Selection, TrajectoryExporter, encode_row
from waybook.journal import SessionJournal
from waybook.model import TextBlock, ThinkingBlock, ToolCallBlock
from waybook.model._records import Annotation

datasets = pytest.importorskip("datasets")
from waybook.export import hf  # noqa: E402

REAL = real_session_files()
needs_real = pytest.mark.skipif(not REAL, reason="no real session files")


def ids(path: Path) -> str:
    return f"{path.parent.name}/{path.name[:40]}"


def call(call_id: str, name: str = "bash", **arguments: Any) -> ToolCallBlock:
    return ToolCallBlock(call_id=call_id, name=name, arguments=arguments or {"cmd": "ls"})


def parallel_session() -> SessionJournal:
    """What broke LLaMA-Factory's alternation: text beside calls, parallel calls, an empty result, two
    user messages in a row."""
    journal = InMemoryJournal("parallel")
    session = Session.create(journal, journal_id="parallel")
    session.system("Be brief.")
    session.user("Look around.")
    session.user("Both folders.")
    session.assistant([TextBlock(text="Listing both."), call("a"), call("b")], stop_reason="tool_use")
    session.tool_result("a", "x.txt")
    session.tool_result("b", "")
    session.assistant("One file, and an empty folder.")
    return journal


# --- ShareGPT as LLaMA-Factory's converter takes it -----------------------------------------------


def test_the_llama_factory_checker_skips_what_the_converter_skips() -> None:
    broken = {
        "conversations": [
            {"from": "human", "value": "q"},
            {"from": "gpt", "value": "let me look"},
            {"from": "function_call", "value": '{"name": "f", "arguments": {}}'},
        ],
        "system": "",
        "tools": "",
    }
    assert any("Invalid role tag" in p for p in llama_factory_problems(broken))


def test_text_beside_parallel_calls_and_an_empty_result_alternate_as_llama_factory_requires() -> None:
    exporter = TrajectoryExporter(parallel_session())
    (row,) = exporter.rows("sharegpt", Selection())
    assert llama_factory_problems(row) == []
    assert [c["from"] for c in row["conversations"]] == ["human", "function_call", "observation", "gpt"]
    calls = json.loads(row["conversations"][1]["value"])
    assert [c["name"] for c in calls] == ["bash", "bash"]
    assert row["conversations"][2]["value"] == "x.txt\n</tool_response>\n<tool_response>\n(no output)"
    assert row["system"] == "Be brief."
    assert json.loads(row["tools"])[0]["function"]["name"] == "bash"
    assert exporter.dropped["empty tool results (ShareGPT: written (no output))"] == 1


@needs_real
@pytest.mark.parametrize("path", REAL, ids=ids)
def test_every_sharegpt_row_of_a_real_session_is_one_llama_factory_trains_on(path: Path) -> None:
    rows = list(TrajectoryExporter(real_session(path)).rows("sharegpt", Selection("all")))
    for row in rows:
        assert llama_factory_problems(row) == []


# --- OpenAI SFT and DPO, TRL's shapes, on real sessions ----------------------------------------------


@needs_real
@pytest.mark.parametrize("path", REAL, ids=ids)
def test_every_row_of_every_format_of_a_real_session_is_valid(path: Path) -> None:
    exporter = TrajectoryExporter(real_session(path), options=TrainingOptions(thinking="field"))
    for row in exporter.rows("trl-sft", Selection("all")):
        assert trl_problems(row, "sft") == []
    for row in exporter.turns(Selection("all"), "trl-sft"):
        assert trl_problems(row, "prompt-completion") == []
        assert not any("weight" in m for m in [*row["prompt"], *row["completion"]])
    plain = TrajectoryExporter(real_session(path))
    for row in plain.rows("openai", Selection("all")):
        assert problems(row) == []
        if any(m.get("tool_calls") for m in row["messages"]):
            assert row["tools"]
            assert isinstance(row["parallel_tool_calls"], bool)


def test_openai_rows_carry_no_undocumented_key_unless_asked() -> None:
    (row,) = TrajectoryExporter(parallel_session()).rows("openai", Selection())
    assert set(row) == {"messages", "tools", "parallel_tool_calls"}
    assert row["parallel_tool_calls"] is True
    assert row["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "bash",
                "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
            },
        }
    ]
    assert problems(row) == []
    (with_metadata,) = TrajectoryExporter(parallel_session(), provenance=True).rows("openai", Selection())
    assert problems(with_metadata, extra=frozenset({"metadata"})) == []


def test_thinking_becomes_reasoning_content_in_trl_rows() -> None:
    journal = InMemoryJournal()
    session = Session.create(journal)
    session.user("2+2?")
    session.assistant([ThinkingBlock(thinking="add them"), TextBlock(text="4")])
    exporter = TrajectoryExporter(journal, options=TrainingOptions(thinking="field"))
    (row,) = exporter.rows("trl-sft", Selection())
    assert row["messages"][-1] == {"role": "assistant", "content": "4", "reasoning_content": "add them"}
    assert trl_problems(row, "sft") == []


def test_per_turn_trl_rows_are_prompt_and_completion_not_weights() -> None:
    journal = branching_session()
    rows = list(TrajectoryExporter(journal).turns(Selection("all"), "trl-sft"))
    assert rows
    for row in rows:
        assert set(row) == {"prompt", "completion", "tools"}
        assert [m["role"] for m in row["completion"]] == ["assistant"]
        assert trl_problems(row, "prompt-completion") == []


def test_the_outcome_column_is_the_label_on_the_branch() -> None:
    journal = chosen_retry(branching_session())
    rows = list(TrajectoryExporter(journal).rows("trl-sft", Selection("all")))
    assert [row["outcome"] for row in rows] == [None, "chosen"]


# --- pairs ----------------------------------------------------------------------------------------


def crashed_fork() -> tuple[SessionJournal, str]:
    """A question answered twice (one answer chosen), and a third try that crashed before any answer."""
    journal = InMemoryJournal("fork")
    session = Session.create(journal, journal_id="fork")
    ask = session.user("Which is right?")
    session.assistant("The first answer.")
    session.branch_from(ask.id, reason="retry")
    chosen = session.assistant("The second answer.")
    session.append(Annotation(target=chosen.id, type="waybook.preference", data={"label": "chosen"}))
    session.branch_from(None, reason="a crashed try")
    session.user("Which is right?")  # the process died before the answer
    return journal, ask.id


def test_a_branch_without_an_assistant_turn_is_never_a_completion() -> None:
    journal, _ = crashed_fork()
    session = Session(journal)
    first = next(r for r in journal.read() if r.kind.startswith("waybook.user"))
    session.branch_from(first.id, reason="another crash")
    session.user("still there?")  # a sibling of the answers with no assistant turn
    exporter = TrajectoryExporter(journal)
    pairs = list(exporter.pairs("trl-dpo"))
    assert [(p["chosen"][-1]["content"], p["rejected"][-1]["content"]) for p in pairs] == [
        ("The second answer.", "The first answer.")
    ]
    assert exporter.dropped["branches with no assistant turn after the fork (never a completion)"] == 1


def fork_on_an_assistant_message() -> SessionJournal:
    """The assistant asked; the user answered two ways on two branches, and one outcome is chosen."""
    journal = InMemoryJournal()
    session = Session.create(journal)
    session.user("Plan the trip.")
    plan = session.assistant("Train or plane?")
    session.user("Train.")
    session.assistant("Booked the 9:00 train.")
    session.branch_from(plan.id, reason="other choice")
    session.user("Plane.")
    chosen = session.assistant("Booked the 7:00 flight.")
    session.append(Annotation(target=chosen.id, type="waybook.preference", data={"label": "chosen"}))
    return journal


def test_branches_that_answer_different_messages_make_no_pair() -> None:
    """The finding: at a fork on an assistant message, chosen and rejected started from different
    prompts (each answered its own user reply): that is no preference between two answers."""
    exporter = TrajectoryExporter(fork_on_an_assistant_message())
    assert list(exporter.pairs("trl-dpo")) == []
    assert exporter.dropped["pairs whose branches answer different messages (no shared prompt)"] == 1
    kto = list(TrajectoryExporter(fork_on_an_assistant_message()).pairs("trl-kto"))
    assert [([m["content"] for m in r["prompt"]], r["label"]) for r in kto] == [
        (["Plan the trip.", "Train or plane?", "Plane."], True),
        (["Plan the trip.", "Train or plane?", "Train."], False),
    ]
    for row in kto:
        assert trl_problems(row, "kto") == []
        assert [m["role"] for m in row["completion"]] == ["assistant"]


def test_a_question_asked_again_word_for_word_is_part_of_the_shared_prompt() -> None:
    journal = InMemoryJournal()
    session = Session.create(journal)
    greet = session.assistant("Hello, what do you need?")
    session.user("The time.")
    session.assistant("Noon.")
    session.branch_from(greet.id, reason="retry")
    session.user("The time.")
    chosen = session.assistant("It is 12:00 UTC.")
    session.append(Annotation(target=chosen.id, type="waybook.preference", data={"label": "chosen"}))
    (pair,) = TrajectoryExporter(journal).pairs("trl-dpo")
    assert [m["content"] for m in pair["prompt"]] == ["Hello, what do you need?", "The time."]
    assert [m["content"] for m in pair["chosen"]] == ["It is 12:00 UTC."]
    assert [m["content"] for m in pair["rejected"]] == ["Noon."]
    assert trl_problems(pair, "preference") == []


def test_a_fork_on_an_assistant_turn_with_calls_keeps_the_calls_in_each_kto_prompt() -> None:
    """The tool ran again on another branch: each answer responds to its own result, so no DPO pair;
    as KTO rows each prompt holds the calls and its own results (before, both were dropped)."""
    journal = InMemoryJournal()
    session = Session.create(journal)
    session.user("Run it.")
    run = session.assistant([call("c1", cmd="make")], stop_reason="tool_use")
    session.tool_result("c1", "error")
    session.assistant("It failed.")
    session.branch_from(run.id, reason="rerun")
    session.tool_result("c1", "ok")
    chosen = session.assistant("It passed.")
    session.append(Annotation(target=chosen.id, type="waybook.preference", data={"label": "chosen"}))
    assert list(TrajectoryExporter(journal).pairs("openai")) == []
    rows = list(TrajectoryExporter(journal).pairs("trl-kto"))
    assert [[m["role"] for m in r["prompt"]] for r in rows] == [["user", "assistant", "tool"]] * 2
    assert [r["prompt"][2]["content"] for r in rows] == ["ok", "error"]
    assert [r["completion"][0]["content"] for r in rows] == ["It passed.", "It failed."]
    for row in rows:
        assert trl_problems(row, "kto") == []


def test_openai_dpo_rows_compare_one_assistant_message_after_the_shared_input() -> None:
    (row,) = TrajectoryExporter(chosen_retry(branching_session())).pairs("openai-dpo")
    assert openai_dpo_problems(row) == []
    assert row["preferred_output"][0]["content"] == "I need to read the file first."
    assert row["non_preferred_output"][0]["tool_calls"][0]["function"]["name"] == "bash"
    assert [m["role"] for m in row["input"]["messages"]] == ["system", "user"]


# --- Hugging Face datasets ----------------------------------------------------------------------


def export_files(tmp_path: Path, fmt: str, turns: bool) -> list[Path]:
    """The golden session and real sessions (Claude Code, Codex, Pi), each exported to its own file."""
    journals = [chosen_retry(branching_session()), *(real_session(p) for p in [*REAL[:3], *REAL[-5:]])]
    if turns:  # a row per turn repeats its context: the two long sessions would be 20 MB of rows
        journals = [journal for journal in journals if journal.head().seq < 400]
    outputs = []
    for n, journal in enumerate(journals):
        exporter = TrajectoryExporter(journal)
        if turns:
            rows = exporter.turns(Selection("all"), "openai" if fmt == "openai" else "trl-sft")
        else:
            rows = exporter.rows(fmt, Selection("all"))  # type: ignore[arg-type]
        out = tmp_path / f"{fmt}-{n}.jsonl"
        out.write_bytes(b"".join(encode_row(row) + b"\n" for row in rows))
        if out.stat().st_size:
            outputs.append(out)
    return outputs


SHAPES = [
    ("openai", False, "openai"),
    ("openai", True, "openai"),
    ("sharegpt", False, "sharegpt"),
    ("trl-sft", False, "trl-sft"),
    ("trl-sft", True, "trl-turns"),
]


@needs_real
@pytest.mark.parametrize(("fmt", "turns", "shape"), SHAPES, ids=[f"{s[0]}{'-turns' * s[1]}" for s in SHAPES])
def test_datasets_loads_every_export_file_alone_and_all_of_them_in_one_call(
    tmp_path: Path, fmt: str, turns: bool, shape: str
) -> None:
    files = export_files(tmp_path, fmt, turns)
    assert len(files) > 2
    total = 0
    for path in files:
        rows = datasets.load_dataset("json", data_files=str(path), split="train")
        total += rows.num_rows
        assert rows.num_rows == len(path.read_text().splitlines())  # U+2028 in a text is written escaped
    features = hf.features(shape)
    together = datasets.load_dataset(
        "json", data_files=[str(p) for p in files], split="train", features=features
    )
    assert together.num_rows == total
    first = json.loads(files[0].read_text().splitlines()[0])
    assert {k: v for k, v in together[0].items() if v is not None} == {
        k: v for k, v in first.items() if v is not None
    }


def test_two_sessions_one_with_tools_one_without_load_in_one_call(tmp_path: Path) -> None:
    """The finding: a file whose rows carry no `tools` first, then one whose rows do (or a `metadata`
    key), and `datasets` refused the second file."""
    plain = InMemoryJournal()
    session = Session.create(plain)
    session.user("hi")
    session.assistant("hello")
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(
        b"".join(encode_row(r) + b"\n" for r in TrajectoryExporter(plain).rows("openai", Selection()))
    )
    rows = TrajectoryExporter(parallel_session()).rows("openai", Selection())
    second.write_bytes(b"".join(encode_row(r) + b"\n" for r in rows))
    loaded = datasets.load_dataset(
        "json", data_files=[str(first), str(second)], split="train", features=hf.features("openai")
    )
    assert loaded.num_rows == 2
    assert loaded[1]["tools"][0]["function"]["name"] == "bash"


def rows_of(journal: SessionJournal) -> Iterator[dict[str, Any]]:
    return TrajectoryExporter(journal).rows("trl-sft", Selection("all"))


def test_a_dataset_folder_has_parquet_shards_and_a_card_datasets_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hf, "SHARD_ROWS", 1)
    journal = chosen_retry(branching_session())
    folder = tmp_path / "dataset"
    card = {"title": "golden", "provenance": ["journal golden"], "redaction": "Not redacted."}
    count = hf.write_dataset(rows_of(journal), folder, fmt="trl-sft", card=card)
    shards = sorted((folder / "data").glob("*.parquet"))
    assert count == 2
    assert [s.name for s in shards] == ["train-00000-of-00002.parquet", "train-00001-of-00002.parquet"]
    loaded = datasets.load_dataset(str(folder), split="train")
    assert loaded.num_rows == 2
    assert loaded[1]["outcome"] == "chosen"
    assert loaded[1]["messages"] == list(rows_of(journal))[1]["messages"]
    several = datasets.load_dataset("parquet", data_files=[str(s) for s in shards], split="train")
    assert several.num_rows == 2
    text = (folder / "README.md").read_text()
    header = json.loads(text.split("---\n")[1])
    assert header["dataset_info"]["splits"] == [{"name": "train", "num_examples": 2}]
    assert [f["name"] for f in header["dataset_info"]["features"]] == ["messages", "tools", "outcome"]
    assert "journal golden" in text
    assert "Not redacted." in text
    assert {p.stat().st_mode & 0o777 for p in [*shards, folder / "README.md"]} == {0o600}


@needs_real
def test_waybook_export_format_hf_writes_a_folder_of_every_kind_of_row(tmp_path: Path) -> None:
    source = tmp_path / "s.jsonl"
    chosen_retry(branching_session(JsonlJournal(source)))
    for flags, columns in (
        ((), {"messages", "tools", "outcome"}),
        (("--turns",), {"prompt", "completion", "tools"}),
        (("--pairs",), {"prompt", "chosen", "rejected", "tools"}),
    ):
        folder = tmp_path / ("hf" + "".join(flags))
        run = waybook(
            "export", source, "--format", "hf", "--branches", "all", "--redact", *flags, "-o", folder
        )
        assert run.returncode == 0, run.stderr
        loaded = datasets.load_dataset(str(folder), split="train")
        assert set(loaded.column_names) == columns
        card = (folder / "README.md").read_text()
        assert "journal `golden`" in card
        assert "Redacted: masked" in card
    again = waybook("export", source, "--format", "hf", "-o", tmp_path / "hf")
    assert again.returncode == 2
    assert "--force" in again.stderr


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--format", "hf", "-o", "-"), "give -o DIR"),
        (
            ("--format", "openai", "--thinking", "field", "-o", "x.jsonl"),
            "--thinking field writes reasoning_content",
        ),
        (("--format", "sharegpt", "--pairs", "-o", "x.jsonl"), "use --format trl-dpo"),
        (("--format", "trl-dpo", "--turns", "-o", "x.jsonl"), "--turns writes one row per assistant turn"),
        (("--format", "archival", "--metadata", "-o", "x.jsonl"), "--metadata"),
    ],
)
def test_flags_that_do_not_fit_the_format_are_refused_naming_them(
    tmp_path: Path, flags: tuple[str, ...], said: str
) -> None:
    source = tmp_path / "s.jsonl"
    branching_session(JsonlJournal(source))
    run = waybook("export", source, *flags)
    assert run.returncode == 2
    assert said in run.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_a_unicode_line_separator_in_a_text_never_splits_a_row() -> None:
    """Found on a real Claude Code session: a U+2028 in a user's text split the row for any reader that
    splits lines by Unicode's rules."""
    line = encode_row({"messages": [{"role": "user", "content": "a\u2028b\u2029c"}]})
    assert len(line.decode().splitlines()) == 1
    assert json.loads(line)["messages"][0]["content"] == "a\u2028b\u2029c"
