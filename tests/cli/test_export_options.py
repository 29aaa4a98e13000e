"""`waybook export`'s flags that are TrainingOptions fields, read by name (commands.export._options)."""

from __future__ import annotations

import attrs

from waybook.cli import build_parser
from waybook.commands.export import _options
from waybook.export.trajectories import TrainingOptions


def test_every_training_option_is_the_export_flag_of_its_name() -> None:
    given = ["--aborted", "keep", "--unanswered", "stub", "--thinking", "field", "--images", "drop"]
    given += ["--blobs", "reference", "--harness", "keep", "--erased", "mark"]
    args = build_parser().parse_args(["export", "s.jsonl", "--format", "openai", "-o", "-", *given])
    options = _options(args)
    assert options == TrainingOptions(
        aborted="keep",
        unanswered="stub",
        thinking="field",
        images="drop",
        blobs="reference",
        harness="keep",
        erased="mark",
    )
    assert sorted(given[0::2]) == sorted(f"--{name}" for name in attrs.fields_dict(TrainingOptions))


def test_the_export_flags_default_to_training_options_defaults() -> None:
    args = build_parser().parse_args(["export", "s.jsonl", "--format", "openai", "-o", "-"])
    assert _options(args) == TrainingOptions()
