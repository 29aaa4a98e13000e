"""The Codex `apply_patch` format: parsing a patch and applying update hunks to a file's lines.

Grammar (the one OpenAI's Codex CLI gives its models)::

    Patch      := "*** Begin Patch" NL { FileOp } "*** End Patch" [NL]
    FileOp     := AddFile | DeleteFile | UpdateFile
    AddFile    := "*** Add File: " path NL { "+" line NL }
    DeleteFile := "*** Delete File: " path NL
    UpdateFile := "*** Update File: " path NL [ "*** Move to: " path NL ] { Hunk }
    Hunk       := ( "@@" | "@@ " context ) NL { (" " | "-" | "+") line NL } [ "*** End of File" NL ]

As in Codex: the first hunk of an update may omit its `@@` line; an empty line inside a hunk is an empty
context line; a hunk's `@@ context` line is found first (at or after the previous hunk), then its old
lines; matching tries exact lines, then lines without trailing spaces, then stripped lines; a hunk
ending in `*** End of File` matches at the end of the file. Pure: nothing here touches a journal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import attrs

BEGIN: Final = "*** Begin Patch"
END: Final = "*** End Patch"
ADD: Final = "*** Add File: "
DELETE: Final = "*** Delete File: "
UPDATE: Final = "*** Update File: "
MOVE: Final = "*** Move to: "
END_OF_FILE: Final = "*** End of File"


class PatchError(ValueError):
    """A patch that is not in the format, or whose hunks do not match the file (with the port's code)."""

    def __init__(self, code: str, message: str, path: str | None = None) -> None:
        self.code = code
        self.path = path
        super().__init__(message)


@attrs.frozen
class Hunk:
    context: str | None
    old: tuple[str, ...]
    new: tuple[str, ...]
    end_of_file: bool = False


@attrs.frozen
class AddFile:
    path: str
    text: str


@attrs.frozen
class DeleteFile:
    path: str


@attrs.frozen
class UpdateFile:
    path: str
    move_to: str | None
    hunks: tuple[Hunk, ...]


FileOp = AddFile | DeleteFile | UpdateFile


def parse_patch(text: str) -> tuple[FileOp, ...]:
    """The file operations of a patch, in order; PatchError (INVALID_ARGUMENT) if it is not one."""
    lines = text.strip().splitlines()
    if not lines or lines[0].strip() != BEGIN:
        raise PatchError("INVALID_ARGUMENT", f"a patch starts with the line {BEGIN!r}")
    if lines[-1].strip() != END:
        raise PatchError("INVALID_ARGUMENT", f"a patch ends with the line {END!r}")
    body, index = lines[1:-1], 0
    ops: list[FileOp] = []
    while index < len(body):
        line = body[index].strip()
        if line.startswith(ADD.strip()):
            path = _path_of(line, ADD)
            index += 1
            added = []
            while index < len(body) and body[index].startswith("+"):
                added.append(body[index][1:])
                index += 1
            ops.append(AddFile(path, "".join(f"{a}\n" for a in added)))
        elif line.startswith(DELETE.strip()):
            ops.append(DeleteFile(_path_of(line, DELETE)))
            index += 1
        elif line.startswith(UPDATE.strip()):
            path = _path_of(line, UPDATE)
            index += 1
            move_to = None
            if index < len(body) and body[index].startswith(MOVE.strip()):
                move_to = _path_of(body[index].strip(), MOVE)
                index += 1
            hunks, index = _hunks(body, index, path)
            if not hunks and move_to is None:
                raise PatchError("INVALID_ARGUMENT", f"update of {path} needs at least one hunk", path)
            ops.append(UpdateFile(path, move_to, hunks))
        else:
            msg = (
                f"line {index + 2} of the patch is {body[index]!r}; expected '*** Add File: ', "
                "'*** Delete File: ' or '*** Update File: '"
            )
            raise PatchError("INVALID_ARGUMENT", msg)
    if not ops:
        raise PatchError("INVALID_ARGUMENT", "the patch holds no file operation")
    return tuple(ops)


def _path_of(line: str, prefix: str) -> str:
    path = line[len(prefix.strip()) :].strip()
    if not path:
        raise PatchError("INVALID_ARGUMENT", f"{prefix.strip()!r} needs a path")
    return path


def _hunks(body: Sequence[str], index: int, path: str) -> tuple[tuple[Hunk, ...], int]:
    hunks: list[Hunk] = []
    while index < len(body) and not body[index].startswith("***"):
        line = body[index]
        context: str | None = None
        if line.strip() == "@@" or line.startswith("@@ "):
            context = line[3:] if line.startswith("@@ ") else None
            index += 1
        elif hunks:
            msg = f"update of {path}: expected an '@@' line to start the next hunk, got {line!r}"
            raise PatchError("INVALID_ARGUMENT", msg, path)
        old: list[str] = []
        new: list[str] = []
        end_of_file = False
        while index < len(body):
            line = body[index]
            if line == END_OF_FILE:
                end_of_file = True
                index += 1
                break
            if line.startswith(("@@", "***")):
                break
            marker, rest = (line[:1], line[1:]) if line else (" ", "")
            if marker == " ":
                old.append(rest)
                new.append(rest)
            elif marker == "-":
                old.append(rest)
            elif marker == "+":
                new.append(rest)
            else:
                msg = f"update of {path}: hunk line {line!r} must start with ' ', '-' or '+'"
                raise PatchError("INVALID_ARGUMENT", msg, path)
            index += 1
        if not old and not new:
            raise PatchError("INVALID_ARGUMENT", f"update of {path} has an empty hunk", path)
        hunks.append(Hunk(context, tuple(old), tuple(new), end_of_file))
    return tuple(hunks), index


_NORMALISERS: Final[tuple[Callable[[str], str], ...]] = (lambda s: s, str.rstrip, str.strip)


def _seek(lines: Sequence[str], wanted: Sequence[str], start: int, at_end: bool) -> int | None:
    if not wanted:
        return len(lines) if at_end else start
    for norm in _NORMALISERS:
        target = [norm(w) for w in wanted]
        first = len(lines) - len(wanted) if at_end else start
        for i in range(max(first, start), len(lines) - len(wanted) + 1):
            if all(norm(lines[i + k]) == target[k] for k in range(len(wanted))):
                return i
    return None


def apply_hunks(lines: list[str], hunks: Sequence[Hunk], path: str) -> list[str]:
    """The file's lines after the hunks; PatchError (MATCH_NOT_FOUND) where a hunk does not match."""
    result: list[str] = []
    cursor = 0
    for hunk in hunks:
        if hunk.context is not None:
            found = _seek(lines, [hunk.context], cursor, at_end=False)
            if found is None:
                msg = f"{path}: the hunk context {hunk.context!r} was not found; nothing was changed"
                raise PatchError("MATCH_NOT_FOUND", msg, path)
            result.extend(lines[cursor : found + 1])
            cursor = found + 1
        old = list(hunk.old)
        found = _seek(lines, old, cursor, hunk.end_of_file)
        if found is None and old and old[-1] == "":
            old.pop()  # a trailing empty context line stands for the end of the file
            found = _seek(lines, old, cursor, hunk.end_of_file)
        if found is None:
            shown = "\n".join(hunk.old)
            msg = f"{path}: these lines were not found (after line {cursor}):\n{shown}\nnothing was changed"
            raise PatchError("MATCH_NOT_FOUND", msg, path)
        new = list(hunk.new)
        if len(old) < len(hunk.old) and new and new[-1] == "":
            new.pop()
        result.extend(lines[cursor:found])
        result.extend(new)
        cursor = found + len(old)
    result.extend(lines[cursor:])
    return result
