"""Random command programs read the same through waybook's memory tool and the SDK's reference tool.

Directories are included: both keep a directory after its last file is deleted or moved away, list it,
and rename and delete it. Two differences docs/memory.md lists can arise from these programs, and are
undone in the reference's folder: a file without an allowed extension (a create or a rename onto a
directory-like name) must be refused by waybook with its extension error; and a command the reference
refuses may leave directories it made on the way (a rename of a missing source makes the destination's
parents), where waybook's refusal changes nothing. Everything else must read the same, step by step, and
leave the same files and directories.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("anthropic")

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from tests.memory.anthropic_reference import Pair
from waybook.journal._roles.memory_paths import EXTENSIONS

FILES = ["/memories/a.md", "/memories/b.txt", "/memories/d/c.md", "/memories/d/e/f.md", "/memories/d/e.md"]
DIRECTORIES = ["/memories", "/memories/", "/memories/d", "/memories/d/", "/memories/d/e", "/memories/g"]
PATHS = st.sampled_from(FILES + [f + "/" for f in FILES[:2]] + DIRECTORIES)
TEXTS = st.sampled_from(["", "x", "a\nb", "a\r\nb\r\n", "one\n\n", "é\rz", "x\nx\n", "tail\n"])
NEEDLES = st.sampled_from(["", "x", "a", "b\r", "\n", "one", "é", "zz"])
LINES = st.integers(min_value=-1, max_value=6)
RANGES = st.one_of(
    st.none(), st.tuples(st.integers(-2, 6), st.integers(-1, 7)).map(list), st.just([1]), st.just([])
)


class SameAsTheReference(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.base = Path(tempfile.mkdtemp(prefix="waybook-reference-"))
        self.pair = Pair(self.base)

    def teardown(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)

    def directories(self) -> set[Path]:
        return {p for p in self.pair.root.rglob("*") if p.is_dir()}

    def step(self, tool_input: dict[str, Any]) -> None:
        before = self.directories()
        reference, ours = self.pair.both(tool_input)
        target = tool_input.get("path") if tool_input["command"] == "create" else tool_input.get("new_path")
        made_file = reference[0] == "ok" and (self.pair.root / str(target)[len("/memories/") :]).is_file()
        if (
            tool_input["command"] in ("create", "rename")
            and made_file
            and not str(target).rstrip("/").endswith(EXTENSIONS)
        ):
            assert ours[0] == "error"
            assert "files must end in one of" in ours[1]
            undo = self.pair.root / str(target)[len("/memories/") :]
            if tool_input["command"] == "create":
                undo.unlink()
            else:
                undo.rename(self.pair.root / tool_input["old_path"][len("/memories/") :])
        else:
            assert ours == reference, f"{tool_input!r}:\n ours      {ours!r}\n reference {reference!r}"
            if reference[0] == "ok":
                return
        for made in sorted(self.directories() - before, key=lambda p: -len(p.parts)):
            made.rmdir()  # made on the way by a command that then failed (or that waybook refuses)

    @rule(path=PATHS, text=TEXTS)
    def create(self, path: str, text: str) -> None:
        self.step({"command": "create", "path": path, "file_text": text})

    @rule(path=PATHS, view_range=RANGES)
    def view(self, path: str, view_range: list[int] | None) -> None:
        self.step(
            {
                "command": "view",
                "path": path,
                **({"view_range": view_range} if view_range is not None else {}),
            }
        )

    @rule(path=PATHS, old=NEEDLES, new=TEXTS)
    def str_replace(self, path: str, old: str, new: str) -> None:
        self.step({"command": "str_replace", "path": path, "old_str": old, "new_str": new})

    @rule(path=PATHS, line=LINES, text=TEXTS)
    def insert(self, path: str, line: int, text: str) -> None:
        self.step({"command": "insert", "path": path, "insert_line": line, "insert_text": text})

    @rule(path=PATHS)
    def delete(self, path: str) -> None:
        self.step({"command": "delete", "path": path})

    @rule(old=PATHS, new=PATHS)
    def rename(self, old: str, new: str) -> None:
        self.step({"command": "rename", "old_path": old, "new_path": new})

    @invariant()
    def the_files_and_directories_are_equal(self) -> None:
        assert self.pair.our_files() == self.pair.reference_files()
        ours = sorted(self.pair.ours.memory.state().kept)
        assert ours == sorted(
            "/memories/" + p.relative_to(self.pair.root).as_posix() for p in self.directories()
        )


SameAsTheReference.TestCase.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)
test_random_programs_read_the_same_as_the_reference = SameAsTheReference.TestCase


@pytest.mark.slow
def test_four_hundred_random_programs_read_the_same_as_the_reference() -> None:
    run_state_machine_as_test(
        SameAsTheReference, settings=settings(max_examples=400, stateful_step_count=25, deadline=None)
    )
