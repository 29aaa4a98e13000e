"""What Anthropic's reference memory tool answers, as pure functions over waybook memory state.

The reference is the SDK's `BetaLocalFilesystemMemoryTool`: a directory on disk. These functions give the
same texts from a `MemoryState` (no SDK import, no I/O), so `waybook.integrations.anthropic_memory` only
has to commit the writes through the Memory port. Where the reference would run a Python expression on a
malformed model value (`None`, a float line number, a three-element `view_range`), the same expression
runs here, and the error it raises becomes the text the SDK's tool runner shows for it: `repr(error)`, at
most 4,096 characters. The deliberate differences are listed in docs/memory.md."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

from waybook.journal import logical_lines
from waybook.journal._roles.memory_paths import ROOT, PathError, ancestors, normalize
from waybook.memory.working import MemoryState

LINE_NUMBER_WIDTH: Final = 6
MAX_LINES: Final = 999_999
DIRECTORY_SIZE: Final = 4096
"""The size the reference prints for a directory is its filesystem's (one 4 KiB block on ext4); waybook
has no directory inodes and prints that block size for every directory."""
ERROR_TEXT_LIMIT: Final = 4096
"""The SDK's runner shows at most this many characters of an exception's `repr`."""
NOT_A_DIRECTORY: Final = repr(NotADirectoryError(20, "Not a directory"))
INVALID_MOVE: Final = repr(OSError(22, "Invalid argument"))


class Refusal(Exception):  # noqa: N818 (a refusal the model reads, not an exceptional condition)
    """The tool refuses; `text` is exactly what the model reads."""

    def __init__(self, text: str) -> None:
        self.text = text
        super().__init__(text)


@contextmanager
def model_value() -> Iterator[None]:
    """Run the reference's own expressions on a model-supplied value: what they raise becomes its text."""
    try:
        yield
    except (AttributeError, TypeError, ValueError, LookupError) as error:
        raise Refusal(repr(error)[:ERROR_TEXT_LIMIT]) from None


def waybook_refusal(message: str) -> Refusal:
    """A refusal only waybook makes (stricter paths, extensions, limits, read-only files, races)."""
    return Refusal(f"Error: {message}")


# --- paths -----------------------------------------------------------------------------------------


def locate(path: Any) -> str:
    """The canonical memory path the reference would touch for `path`, or the reference's refusal.

    The reference resolves the path under its directory: `.`, empty segments and `..` that stay inside are
    accepted. Waybook accepts only canonical paths (docs/memory.md), so those are refused with `Error: ...`.
    """
    with model_value():
        inside = path.startswith(ROOT)
    if not inside:
        raise Refusal(f"Path must start with /memories, got: {path}")
    if "\x00" in path:
        raise Refusal(repr(ValueError("embedded null byte")))
    depth = 0
    for segment in path[len(ROOT) :].split("/"):
        if segment == "..":
            depth -= 1
            if depth < 0:
                raise Refusal(f"Path {path} would escape /memories directory")
        elif segment not in ("", "."):
            depth += 1
    try:
        return normalize(path)
    except PathError as problem:
        raise waybook_refusal(str(problem)) from None


def file_above(path: str, state: MemoryState) -> str | None:
    """The file standing where a directory above `path` should be (the reference gets ENOTDIR there)."""
    return next((above for above in ancestors(path) if state.is_file(above)), None)


def exists(path: str, state: MemoryState) -> bool:
    return state.is_file(path) or state.is_directory(path)


# --- view ------------------------------------------------------------------------------------------


def format_size(size: int) -> str:
    """Sizes as the reference prints them: 0B, 512B, 1.5K, 4K, 2M."""
    if size == 0:
        return "0B"
    units = ("B", "K", "M", "G")
    index = min((size.bit_length() - 1) // 10, len(units) - 1)
    value = size / (1024**index)
    return f"{int(value)}{units[index]}" if value == int(value) else f"{value:.1f}{units[index]}"


def listing(shown: str, directory: str, state: MemoryState) -> str:
    """Two levels below `directory`, depth first, each level sorted by name, as the reference lists."""
    tree: dict[str, Any] = {}
    base = len(directory) + 1
    for file in state.files_under(directory):
        node = tree
        *folders, name = file.path[base:].split("/")
        for folder in folders:
            node = node.setdefault(folder, {})
        node[name] = file.size
    for below in state.directories_under(directory):  # directories outlive their files, as on disk
        node = tree
        for folder in below[base:].split("/"):
            node = node.setdefault(folder, {})
    rows: list[str] = []

    def collect(node: dict[str, Any], relative: str, depth: int) -> None:
        for name in sorted(node):
            child = f"{relative}/{name}" if relative else name
            if isinstance(node[name], dict):
                rows.append(f"{format_size(DIRECTORY_SIZE)}\t{shown}/{child}/")
                if depth < 2:
                    collect(node[name], child, depth + 1)
            else:
                rows.append(f"{format_size(node[name])}\t{shown}/{child}")

    collect(tree, "", 1)
    header = f"Here're the files and directories up to 2 levels deep in {shown}, excluding hidden items:"
    return "\n".join([header, f"{format_size(DIRECTORY_SIZE)}\t{shown}", *rows])


def numbered(lines: list[str], first: int) -> str:
    return "\n".join(f"{str(i + first).rjust(LINE_NUMBER_WIDTH)}\t{line}" for i, line in enumerate(lines))


def file_view(shown: str, content: str, view_range: Any) -> str:
    lines = content.split("\n")
    if len(lines) > MAX_LINES:
        raise Refusal(f"File {shown} exceeds maximum line limit of 999,999 lines.")
    display, first = lines, 1
    with model_value():
        if view_range and len(view_range) == 2:
            start = max(1, view_range[0]) - 1
            end = len(lines) if view_range[1] == -1 else view_range[1]
            display = lines[start:end]
            first = start + 1
        body = numbered(display, first)
    return f"Here's the content of {shown} with line numbers:\n" + body


# --- edits -----------------------------------------------------------------------------------------


def replaced(shown: str, content: str, old: Any, new: Any) -> tuple[str, str]:
    """(the new content, the reference's success text) of `str_replace`, or its refusal."""
    with model_value():
        count = content.count(old)
    if count == 0:
        raise Refusal(f"No replacement was performed, old_str `{old}` did not appear verbatim in {shown}.")
    if count > 1:
        lines, start = [], 0
        while (position := content.find(old, start)) != -1:
            lines.append(content[:position].count("\n") + 1)
            start = position + 1
        raise Refusal(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: "
            f"{', '.join(map(str, lines))}. Please ensure it is unique"
        )
    changed = content[: content.find(old)].count("\n")
    with model_value():
        text = content.replace(old, new)
        text.encode("utf-8")
    new_lines = text.split("\n")
    first, last = max(0, changed - 2), min(len(new_lines), changed + 3)
    snippet = numbered(new_lines[first:last], first + 1)
    heading = "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
    return text, heading + snippet


def inserted(content: str, line: Any, insert_text: Any) -> tuple[str, str]:
    """(the new content, the inserted line) of `insert`: lines split at `\\n` only, `\\r` kept."""
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    with model_value():
        if line < 0 or line > len(lines):
            raise Refusal(
                f"Invalid `insert_line` parameter: {line}. It should be within the range [0, {len(lines)}]."
            )
        added = insert_text.rstrip("\n")
        lines.insert(line, added)
        text = "\n".join(lines)
        if not text.endswith("\n"):
            text += "\n"
        text.encode("utf-8")
    return text, added


def port_insert(content: str, line: int, added: str) -> str:
    """The text the Memory port's `insert` writes (docs/memory.md): logical lines, then a line break."""
    lines = logical_lines(content)
    return "\n".join([*lines[:line], *(logical_lines(added) or [""]), *lines[line:]]) + "\n"
