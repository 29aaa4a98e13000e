"""Differential test: waybook's memory tool answers exactly what the SDK's reference tool answers.

Every sequence runs through the SDK's `BetaLocalFilesystemMemoryTool` (a real directory) and through
`WaybookMemoryTool` (a journal); each step must read the same to the model, and the files must end equal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("anthropic")

from tests.memory.anthropic_reference import Pair

M = "/memories"


def create(path: str, text: str) -> dict[str, Any]:
    return {"command": "create", "path": path, "file_text": text}


def view(path: str, view_range: Any = None) -> dict[str, Any]:
    return {"command": "view", "path": path, **({"view_range": view_range} if view_range is not None else {})}


def insert(path: str, line: Any, text: Any) -> dict[str, Any]:
    return {"command": "insert", "path": path, "insert_line": line, "insert_text": text}


def replace(path: str, old: Any, new: Any) -> dict[str, Any]:
    return {"command": "str_replace", "path": path, "old_str": old, "new_str": new}


def delete(path: str) -> dict[str, Any]:
    return {"command": "delete", "path": path}


def rename(old: str, new: str) -> dict[str, Any]:
    return {"command": "rename", "old_path": old, "new_path": new}


SEQUENCES: dict[str, list[dict[str, Any]]] = {
    "insert splits lines at \\n only": [
        create(f"{M}/a.md", "one\ntwo"),
        insert(f"{M}/a.md", 1, "x\ny\n\n"),
        insert(f"{M}/a.md", 0, ""),
        insert(f"{M}/a.md", 5, "end"),
        view(f"{M}/a.md"),
        create(f"{M}/empty.md", ""),
        insert(f"{M}/empty.md", 0, "first"),
        view(f"{M}/empty.md"),
        create(f"{M}/blank.md", "a\n\n\n"),
        insert(f"{M}/blank.md", 3, "z"),
        view(f"{M}/blank.md"),
        create(f"{M}/ends-blank.md", "one\n\n"),
        insert(f"{M}/ends-blank.md", 0, ""),  # found by the state machine: the port would add a line
        view(f"{M}/ends-blank.md"),
    ],
    "CRLF and CR files keep their carriage returns": [
        create(f"{M}/crlf.md", "a\r\nb\r\n"),
        view(f"{M}/crlf.md"),
        insert(f"{M}/crlf.md", 1, "x"),
        insert(f"{M}/crlf.md", 0, "y\r\n"),
        insert(f"{M}/crlf.md", 4, "m\rn"),
        view(f"{M}/crlf.md"),
        create(f"{M}/cr.md", "a\rb\rc"),
        insert(f"{M}/cr.md", 1, "x"),
        insert(f"{M}/cr.md", 2, "x"),
        view(f"{M}/cr.md", [1, 1]),
        replace(f"{M}/crlf.md", "b\r", "B"),
        view(f"{M}/crlf.md"),
    ],
    "insert ranges": [
        create(f"{M}/r.md", "1\n2\n3"),
        insert(f"{M}/r.md", -1, "x"),
        insert(f"{M}/r.md", 4, "x"),
        insert(f"{M}/r.md", 3, "x"),
        insert(f"{M}/r.md", 5, "x"),
        insert(f"{M}/r.md", 0, "x"),
        view(f"{M}/r.md"),
    ],
    "view ranges": [
        create(f"{M}/v.md", "1\n2\n3\n4\n"),
        view(f"{M}/v.md", [2, 3]),
        view(f"{M}/v.md", [3, -1]),
        view(f"{M}/v.md", [0, 2]),
        view(f"{M}/v.md", [4, 2]),
        view(f"{M}/v.md", [9, 12]),
        view(f"{M}/v.md", [-5, -2]),
        view(f"{M}/v.md", []),
        view(f"{M}", [1, 2]),
    ],
    "directory listing order and sizes": [
        create(f"{M}/b.md", "b" * 1536),
        create(f"{M}/a.md", ""),
        create(f"{M}/a/x.md", "x" * 1024),
        create(f"{M}/A.md", "caps"),
        create(f"{M}/a-b.md", "dash"),
        create(f"{M}/a/b/c/deep.md", "too deep to list"),
        create(f"{M}/a/b/z.md", "z"),
        create(f"{M}/9.txt", "digits sort first"),
        view(M),
        view(f"{M}/"),
        view(f"{M}/a"),
        view(f"{M}/a/"),
        view(f"{M}/a/b"),
    ],
    "trailing slashes": [
        create(f"{M}/t.md/", "slash"),
        view(f"{M}/t.md/"),
        replace(f"{M}/t.md/", "slash", "SLASH"),
        insert(f"{M}/t.md/", 1, "more"),
        rename(f"{M}/t.md/", f"{M}/u.md/"),
        view(f"{M}/u.md"),
        create(f"{M}/d/in.md", "in"),
        rename(f"{M}/d/", f"{M}/e/"),
        view(f"{M}/e/"),
        delete(f"{M}/u.md/"),
        delete(f"{M}/e/"),
        view(M),
    ],
    "renames of the root and around it": [
        create(f"{M}/d/f.md", "f"),
        rename(M, f"{M}/x"),
        rename(f"{M}/", f"{M}/x"),
        rename(f"{M}/d", M),
        rename(f"{M}/d", f"{M}/"),
        rename(f"{M}/d", f"{M}/d/inner"),
        rename(f"{M}/d/f.md", f"{M}/d/f.md"),
        rename(f"{M}/missing.md", f"{M}/n.md"),
        rename(f"{M}/d/f.md", f"{M}/d/f.md/g.md"),
        rename(f"{M}/d/f.md/g.md", f"{M}/g.md"),
        rename(f"{M}/d", f"{M}/p/q"),
        view(M),
        rename(f"{M}/gone", f"{M}/gone/inside.md"),  # the reference makes `gone` (left empty) on the way
    ],
    "directories outlive their files": [
        create(f"{M}/d/e/a.md", "a"),
        create(f"{M}/d/b.md", "b"),
        delete(f"{M}/d/e/a.md"),
        view(f"{M}/d"),
        view(f"{M}/d/e"),
        view(M),
        rename(f"{M}/d/e", f"{M}/x/y"),
        rename(f"{M}/d/b.md", f"{M}/b.md"),
        view(M),
        rename(f"{M}/d", f"{M}/x/y"),
        rename(f"{M}/d", f"{M}/x/z"),
        create(f"{M}/x/y", "over an empty directory"),
        create(f"{M}/x/y/c.md", "c"),
        delete(f"{M}/x/y/c.md"),
        delete(f"{M}/x"),
        view(f"{M}/x/y"),
        view(M),
        delete(f"{M}/d"),
        create(f"{M}/d/again.md", "again"),
        view(M),
    ],
    "create over a directory, the root, a file and below a file": [
        create(f"{M}/d/f.md", "f"),
        create(f"{M}/d", "over a directory"),
        create(f"{M}/d/", "over a directory"),
        create(M, "over the root"),
        create(f"{M}/", "over the root"),
        create(f"{M}/d/f.md", "again"),
        create(f"{M}/d/f.md/below.md", "below a file"),
        create(f"{M}/d/f.md/deeper/below.md", "below a file"),
        view(f"{M}/d/f.md"),
        view(f"{M}/d/f.md/below.md"),
    ],
    "str_replace outcomes": [
        create(f"{M}/s.md", "x\ny\nx\nlong\n1\n2\n3\n4\n5\n"),
        replace(f"{M}/s.md", "zz", "q"),
        replace(f"{M}/s.md", "x", "q"),
        replace(f"{M}/s.md", "", "q"),
        replace(f"{M}/s.md", "long", "LONG\nER"),
        replace(f"{M}/s.md", "y\n", ""),
        replace(f"{M}/s.md", "5\n", "five"),
        create(f"{M}/e.md", ""),
        replace(f"{M}/e.md", "", "filled"),
        view(f"{M}/e.md"),
        replace(M, "a", "b"),
        replace(f"{M}/none.md", "a", "b"),
        create(f"{M}/aaa.md", "aaaa"),
        replace(f"{M}/aaa.md", "aa", "b"),
        replace(f"{M}/aaa.md", "aaa", "b"),
    ],
    "every not-found, not-a-file and path error": [
        create(f"{M}/f.md", "f"),
        view(f"{M}/none.md"),
        view(f"{M}/f.md/x.md"),
        insert(f"{M}/none.md", 0, "x"),
        insert(M, 0, "x"),
        insert(f"{M}/f.md/x.md", 0, "x"),
        replace(f"{M}/f.md/x.md", "a", "b"),
        delete(M),
        delete(f"{M}/"),
        delete(f"{M}/none.md"),
        delete(f"{M}/f.md/x.md"),
        view("/etc/passwd"),
        view("memories/f.md"),
        view(""),
        view(f"{M}/../etc"),
        view(f"{M}/../../etc/passwd"),
        create(f"{M}/../x.md", "x"),
        rename(f"{M}/f.md", "/tmp/x.md"),
        rename("/tmp/x.md", f"{M}/f.md"),
        rename(f"{M}/f.md", f"{M}/../x.md"),
        view(f"{M}/a\x00b.md"),
    ],
    "malformed model input gets the reference's error": [
        create(f"{M}/a.md", "1\n2\n3\n"),
        None,  # type: ignore[list-item]
        {},
        "view",  # type: ignore[list-item]
        [1, 2],  # type: ignore[list-item]
        {"command": None},
        {"command": "fly"},
        {"command": "view"},
        view(None),  # type: ignore[arg-type]
        view(5),  # type: ignore[arg-type]
        view(f"{M}/a.md", [1]),
        view(f"{M}/a.md", [1, 2, 3]),
        view(f"{M}/a.md", "12"),
        view(f"{M}/a.md", [None, 2]),
        view(f"{M}/a.md", ["1", "2"]),
        view(f"{M}/a.md", [1.5, 2]),
        view(f"{M}/a.md", [2, 1.5]),
        view(f"{M}/a.md", 5),
        view(f"{M}/a.md", {"a": 1}),
        view(f"{M}/a.md", {"a": 1, "b": 2}),
        view(f"{M}/a.md", [True, 2]),
        replace(f"{M}/a.md", 5, "x"),
        replace(f"{M}/a.md", None, "x"),
        replace(f"{M}/a.md", ["1"], "x"),
        replace(f"{M}/a.md", "1", None),
        replace(f"{M}/a.md", "1", 7),
        {"command": "str_replace", "path": f"{M}/a.md", "old_str": "1"},
        insert(f"{M}/a.md", 1, None),
        insert(f"{M}/a.md", 1.5, None),
        insert(f"{M}/a.md", "1", "x"),
        insert(f"{M}/a.md", None, "x"),
        insert(f"{M}/a.md", 1.5, "x"),
        insert(f"{M}/a.md", True, "x"),
        insert(f"{M}/a.md", 1, 5),
        {"command": "insert", "path": f"{M}/a.md", "insert_text": "x"},
        rename(None, f"{M}/x.md"),  # type: ignore[arg-type]
        {"command": "rename", "old_path": f"{M}/a.md"},
        delete(None),  # type: ignore[arg-type]
        {"command": "delete"},
        view(f"{M}/a.md"),
    ],
    "text that cannot be stored as UTF-8": [
        create(f"{M}/a.md", "ok"),
        replace(f"{M}/a.md", "ok", "\ud800"),
        insert(f"{M}/a.md", 0, "\udfff"),
        view(f"{M}/a.md"),
    ],
}


LEFTOVERS = {"renames of the root and around it": [f"{M}/gone"]}
"""Directories the reference made on the way in a command that then failed (waybook's refusal makes none)."""


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_each_step_reads_the_same_and_the_files_end_equal(name: str, tmp_path: Path) -> None:
    pair = Pair(tmp_path)
    for step in SEQUENCES[name]:
        pair.same(step)
    assert pair.our_files() == pair.reference_files()
    assert sorted([*pair.our_directories(), *LEFTOVERS.get(name, [])]) == pair.reference_directories()


def test_malformed_input_never_raises_anything_but_tool_error(tmp_path: Path) -> None:
    # Pair.same runs waybook's tool strictly: any exception other than ToolError fails the test.
    pair = Pair(tmp_path)
    for step in SEQUENCES["malformed model input gets the reference's error"]:
        pair.same(step)


def test_clear_all_memory_reads_the_same_and_leaves_no_file(tmp_path: Path) -> None:
    pair = Pair(tmp_path)
    for step in (create(f"{M}/a.md", "a"), create(f"{M}/d/b.md", "b"), create(f"{M}/e/c.md", "c")):
        pair.same(step)
    pair.same(delete(f"{M}/e/c.md"))  # leaves the empty directory e
    assert pair.ours.clear_all_memory() == pair.reference.clear_all_memory() == "All memory cleared"
    assert pair.our_files() == pair.reference_files() == {}
    assert pair.our_directories() == pair.reference_directories() == []
    pair.same(view(M))
