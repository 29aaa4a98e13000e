"""Pure decisions of the Memory port: a command and the current state in, a value or a planned write out.

Nothing here touches a journal. Every check runs before a write is planned, so a refused command never
changes anything, and a planned write is applied as one atomic batch.
"""

from __future__ import annotations

from typing import Final

from waybook.journal import (
    byte_length,
    content_digest,
    links_of,
    logical_lines,
)
from waybook.journal._roles.memory import Limits as Limits
from waybook.journal._roles.memory_paths import (
    MAX_PATH_BYTES,
    ROOT,
    ancestors,
)
from waybook.memory.working._checks import (
    MemoryBody,
    RefusedError,
    Write,
    checked_path,
    checked_text,
    evictions,
    existing_file,
    file_path,
    fitting_file,
    not_making_read_only,
    writable,
)
from waybook.memory.working._commands import (
    ApplyPatch,
    Command,
    Create,
    Delete,
    Insert,
    Rename,
    StrReplace,
    UpdateDescription,
    View,
)
from waybook.memory.working._patching import decide_patching
from waybook.memory.working._results import (
    Created,
    Deleted,
    DirectoryView,
    Edited,
    Entry,
    Failure,
    FileView,
    LineSpan,
    Renamed,
    Value,
)
from waybook.memory.working._state import MemoryState
from waybook.model import MemoryDelete, MemoryRename, MemoryWrite

DEFAULT_LIMITS: Final = Limits()


def decide_command(
    command: Command, state: MemoryState, limits: Limits, call_id: str | None
) -> Value | Write | Failure:
    """Every memory command the port takes: the six file commands, `apply_patch` and `update_description`."""
    if isinstance(command, ApplyPatch | UpdateDescription):
        return decide_patching(command, state, limits, call_id)
    return decide(command, state, limits, call_id)


def decide(
    command: Command, state: MemoryState, limits: Limits, call_id: str | None
) -> Value | Write | Failure:
    """The six file commands (view, create, str_replace, insert, delete, rename)."""
    try:
        if isinstance(command, View):
            return _view(command, state)
        if isinstance(command, Create):
            return _create(command, state, limits, call_id)
        if isinstance(command, StrReplace):
            return _str_replace(command, state, limits, call_id)
        if isinstance(command, Insert):
            return _insert(command, state, limits, call_id)
        if isinstance(command, Delete):
            return _delete(command, state, call_id)
        if isinstance(command, Rename):
            return _rename(command, state, call_id)
    except RefusedError as refused:
        return refused.failure
    name = type(command).__name__
    return Failure("INVALID_COMMAND", f"{name} is not one of the six file commands; use decide_command")


# --- limits and eviction --------------------------------------------------------------------------


def _make_room(path: str, size: int, state: MemoryState, limits: Limits) -> tuple[str, ...]:
    """The files to evict, earliest written first, so `path` can hold `size` bytes; or RefusedError."""
    fitting_file(path, size, limits)
    current = state.files.get(path)
    total = state.total_bytes - (current.size if current else 0) + size
    count = len(state.files) + (0 if current else 1)
    if total <= limits.max_total_bytes and count <= limits.max_files:
        return ()
    others = (f for p, f in state.files.items() if p != path)
    return evictions(others, total, count, limits, what=f"{path} ({size} bytes)", path=path, size=size)


def _write_plan(
    command_name: str, path: str, text: str, state: MemoryState, limits: Limits, call_id: str | None
) -> tuple[tuple[MemoryBody, ...], tuple[str, ...], str, tuple[str, ...]]:
    not_making_read_only(path, text)
    size = byte_length(text)
    evicted = _make_room(path, size, state, limits)
    old = state.files.get(path)
    digest = content_digest(text)
    write = MemoryWrite(
        path=path,
        text=text,
        digest=digest,
        prior=old.digest if old else None,
        command=command_name,
        call_id=call_id,
    )
    bodies: tuple[MemoryBody, ...] = (write,)
    if evicted:
        bodies = (MemoryDelete(paths=evicted, reason="evict", call_id=call_id), write)
    dropped = tuple(sorted(links_of(old.text) - links_of(text))) if old else ()
    return bodies, evicted, digest, dropped


# --- commands -------------------------------------------------------------------------------------


def _view(command: View, state: MemoryState) -> Value:
    path = checked_path(command.path)
    if state.is_file(path):
        text = state.files[path].text
        lines = logical_lines(text)
        total = len(lines)
        if command.view_range is None:
            return FileView(path, text, LineSpan(1 if total else 0, total, total), byte_length(text))
        start, end = command.view_range
        end = total if end == -1 else end
        if start < 1 or start > total or end < start or end > total:
            msg = f"view_range {list(command.view_range)} is outside lines 1..{total} of {path}"
            raise RefusedError("INVALID_RANGE", msg, path, total=total)
        shown = "\n".join(lines[start - 1 : end])
        return FileView(path, shown, LineSpan(start, end, total), byte_length(text))
    if state.is_directory(path):
        if command.view_range is not None:
            raise RefusedError("INVALID_ARGUMENT", "view_range applies to files, not directories", path)
        entries: dict[str, Entry] = {}
        for file_path in state.files:
            if not file_path.startswith(path + "/"):
                continue
            name = file_path[len(path) + 1 :].split("/", 1)[0]
            child = f"{path}/{name}"
            entries[name] = Entry(name, child, "file" if child == file_path else "directory")
        for directory in state.directories_under(path):  # empty directories too
            name = directory[len(path) + 1 :].split("/", 1)[0]
            entries.setdefault(name, Entry(name, f"{path}/{name}", "directory"))
        return DirectoryView(path, tuple(entries[name] for name in sorted(entries)))
    raise RefusedError("NOT_FOUND", f"{path} does not exist", path)


def _create(command: Create, state: MemoryState, limits: Limits, call_id: str | None) -> Write:
    path = file_path(command.path, state)
    checked_text(command.text, "text")
    if command.exclusive and state.is_file(path):
        msg = f"{path} already exists; an exclusive create never replaces a note"
        raise RefusedError("ALREADY_EXISTS", msg, path)
    writable(path, state)
    bodies, evicted, digest, dropped = _write_plan("create", path, command.text, state, limits, call_id)
    value = Created(path, path in state.files, evicted, byte_length(command.text))
    return Write(bodies, value, digest, dropped)


def _str_replace(command: StrReplace, state: MemoryState, limits: Limits, call_id: str | None) -> Write:
    path = existing_file(command.path, state)
    if command.old_text == "":
        raise RefusedError("INVALID_ARGUMENT", "old_text is empty; give the exact text to replace", path)
    checked_text(command.old_text, "old_text")
    checked_text(command.new_text, "new_text")
    writable(path, state)
    text = state.files[path].text
    found = text.count(command.old_text)
    if found == 0:
        raise RefusedError(
            "MATCH_NOT_FOUND", f"old_text does not appear in {path}; nothing was replaced", path
        )
    if found > 1:
        lines = _match_lines(text, command.old_text)
        msg = f"old_text appears {found} times in {path} (lines {lines}); give text that appears once"
        raise RefusedError("MATCH_NOT_UNIQUE", msg, path, matches=found, lines=lines)
    new = text.replace(command.old_text, command.new_text, 1)
    bodies, evicted, digest, dropped = _write_plan("str_replace", path, new, state, limits, call_id)
    return Write(bodies, Edited(path, byte_length(new), evicted), digest, dropped)


def _insert(command: Insert, state: MemoryState, limits: Limits, call_id: str | None) -> Write:
    path = existing_file(command.path, state)
    checked_text(command.text, "text")
    writable(path, state)
    lines = logical_lines(state.files[path].text)
    if not 0 <= command.insert_line <= len(lines):
        msg = f"insert_line {command.insert_line} is outside slots 0..{len(lines)} of {path}"
        raise RefusedError("INVALID_RANGE", msg, path, total=len(lines))
    added = logical_lines(command.text) or [""]
    new = "\n".join([*lines[: command.insert_line], *added, *lines[command.insert_line :]]) + "\n"
    bodies, evicted, digest, dropped = _write_plan("insert", path, new, state, limits, call_id)
    return Write(bodies, Edited(path, byte_length(new), evicted), digest, dropped)


def _delete(command: Delete, state: MemoryState, call_id: str | None) -> Write:
    path = checked_path(command.path)
    if path == ROOT:
        raise RefusedError("ROOT_PROTECTED", f"{ROOT} itself cannot be deleted", path)
    if state.is_file(path):
        kind, files = "file", [state.files[path]]
    elif state.is_directory(path):
        kind, files = "directory", state.files_under(path)
    else:
        raise RefusedError("NOT_FOUND", f"{path} does not exist", path)
    for file in files:
        writable(file.path, state)
    dropped = tuple(sorted(set().union(*(links_of(f.text) for f in files))))
    gone = (path,) if kind == "directory" else ()
    body = MemoryDelete(
        paths=tuple(f.path for f in files), reason="delete", call_id=call_id, directories=gone
    )
    value = Deleted(path, kind, len(files), sum(f.size for f in files))  # type: ignore[arg-type]
    return Write((body,), value, None, dropped)


def _rename(command: Rename, state: MemoryState, call_id: str | None) -> Write:
    old, new = checked_path(command.old_path), checked_path(command.new_path)
    if ROOT in (old, new):
        raise RefusedError("ROOT_PROTECTED", f"{ROOT} cannot be renamed, and nothing can become it", old)
    if state.is_file(new) or state.is_directory(new):
        raise RefusedError(
            "ALREADY_EXISTS", f"{new} already exists; rename never replaces a destination", new
        )
    if state.is_file(old):
        kind, moves = "file", [(old, file_path(new, state))]
    elif state.is_directory(old):
        if new.startswith(old + "/"):
            raise RefusedError("INVALID_ARGUMENT", f"{old} cannot move inside itself ({new})", old)
        kind = "directory"
        moves = [(f.path, new + f.path[len(old) :]) for f in state.files_under(old)]
        for above in [new, *ancestors(new)]:
            if state.is_file(above):
                raise RefusedError("PATH_CONFLICT", f"{above} is a file, so {new} cannot be a directory", new)
        for _, target in moves:
            if len(target.encode()) > MAX_PATH_BYTES:
                msg = f"moving {old} to {new} would make {target[:60]}… longer than {MAX_PATH_BYTES} bytes"
                raise RefusedError(
                    "INVALID_PATH", msg, target[:MAX_PATH_BYTES], moved_path_bytes=len(target.encode())
                )
            checked_path(target)
    else:
        raise RefusedError("NOT_FOUND", f"{old} does not exist", old)
    for source, _ in moves:
        writable(source, state)
    value = Renamed(old, new, kind, len(moves))  # type: ignore[arg-type]
    folders = ((old, new),) if kind == "directory" else ()
    return Write((MemoryRename(moves=tuple(moves), call_id=call_id, directories=folders),), value)


def _match_lines(text: str, needle: str) -> list[int]:
    lines, start = [], 0
    while (index := text.find(needle, start)) >= 0:
        lines.append(len(logical_lines(text[: index + 1])))
        start = index + len(needle)
    return lines
