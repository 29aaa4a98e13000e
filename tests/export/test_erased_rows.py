"""Issue 46: training exports of a journal with erased content. `TrainingOptions(erased=...)` (CLI
`--erased`): "drop" (the default) leaves out each row that holds erased content, counted; "mark" keeps it
with the placeholder naming the erasure. Either way no neighbour's text is dropped or changed, and every
row written is one the trainers load (their checks: tests/helpers/trainer_checks.py, OpenAI's own rules,
Hugging Face `datasets`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.erased_sessions import (
    CALL,
    NEIGHBOURS,
    RESULT,
    SECRET,
    WELCOME,
    erased_session,
    placeholder,
    tool_session,
)
from tests.helpers.trainer_checks import llama_factory_problems, trl_problems
from waybook import InMemoryJournal
from waybook.export._cleaning import InvalidOptionError, TrainingOptions
from waybook.export._openai_format import problems
from waybook.export.trajectories import ERASED_ROWS, Selection, TrajectoryExporter, encode_row

MARK = TrainingOptions(erased="mark")


def exporter(seqs: list[int] | None, options: TrainingOptions | None = None) -> TrajectoryExporter:
    journal = InMemoryJournal("vault")
    if seqs is None:
        tool_session(journal)
    else:
        erased_session(journal, seqs)
    return TrajectoryExporter(journal, options=options)


def test_the_default_is_drop_and_an_unknown_choice_is_refused_naming_the_choices() -> None:
    assert TrainingOptions().erased == "drop"
    with pytest.raises(InvalidOptionError, match="'drop', 'mark'"):
        TrainingOptions(erased="keep")  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt", ["openai", "sharegpt", "trl-sft"])
def test_drop_leaves_out_each_row_that_holds_erased_content_and_counts_it(fmt: str) -> None:
    erased = exporter([CALL, RESULT])
    assert list(erased.rows(fmt, Selection())) == []  # type: ignore[arg-type]
    assert erased.dropped[ERASED_ROWS] == 1
    turns = list(erased.turns(Selection()))
    assert turns == []  # the erased turn, and the two after it that saw the hole
    assert erased.dropped[ERASED_ROWS] == 1 + 3


def test_drop_keeps_the_turns_whose_context_and_answer_hold_nothing_erased() -> None:
    erased = exporter([WELCOME])
    rows = list(erased.turns(Selection()))
    assert [row["messages"][-1]["content"] for row in rows][-1] == NEIGHBOURS[1]
    assert all(placeholder() not in encode_row(row).decode() for row in rows)
    assert erased.dropped[ERASED_ROWS] == 1


@pytest.mark.parametrize("seqs", [[CALL], [RESULT], [CALL, RESULT]])
def test_mark_keeps_the_row_with_the_placeholder_and_every_neighbour_as_written(seqs: list[int]) -> None:
    (plain,) = exporter(None).rows("openai", Selection())
    (marked,) = exporter(seqs, MARK).rows("openai", Selection())
    assert problems(marked) == []
    assert placeholder() in encode_row(marked).decode()
    assert len(marked["messages"]) == len(plain["messages"])
    erased_at = {seq - 2 for seq in seqs}  # the messages follow the records from seq 2
    for i, (was, now) in enumerate(zip(plain["messages"], marked["messages"], strict=True)):
        if i not in erased_at:
            assert now == was  # a neighbour: as written, to the byte
        else:
            assert now["content"] == placeholder()
    calls = [c for m in marked["messages"] for c in m.get("tool_calls", [])]
    results = [m["tool_call_id"] for m in marked["messages"] if m["role"] == "tool"]
    assert [c["id"] for c in calls] == results == ["c1"]
    if seqs == [CALL, RESULT]:
        assert SECRET not in encode_row(marked).decode()


def test_marked_rows_of_every_format_are_rows_the_trainers_load() -> None:
    marked = exporter([CALL, RESULT], MARK)
    for row in marked.rows("sharegpt", Selection()):
        assert llama_factory_problems(row) == []
    for row in marked.rows("trl-sft", Selection()):
        assert trl_problems(row, "sft") == []
    for row in marked.turns(Selection(), "trl-sft"):
        assert trl_problems(row, "prompt-completion") == []
    for row in marked.turns(Selection()):
        assert problems(row) == []
    assert marked.dropped[ERASED_ROWS] == 0


def test_datasets_loads_the_marked_rows(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    path = tmp_path / "rows.jsonl"
    rows = list(exporter([CALL, RESULT], MARK).rows("trl-sft", Selection()))
    path.write_bytes(b"".join(encode_row(row) + b"\n" for row in rows))
    loaded = datasets.load_dataset("json", data_files=str(path), split="train")
    assert loaded.num_rows == 1
    assert placeholder() in json.dumps(loaded[0]["messages"])
