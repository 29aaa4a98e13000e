"""Pure decisions of `apply_patch` and `update_description`, and whole-file changes made elsewhere.

`apply_patch` is all-or-nothing: every operation is checked against the state as the patch leaves it,
and the whole patch becomes one batch (evictions, deletes, moves, then writes), appended once. The
journal's memory rules check that batch again, so a raw append of the same records obeys the same rules.
"""

from __future__ import annotations

import attrs

from waybook.journal import (
    byte_length,
    content_digest,
    links_of,
    logical_lines,
    with_description,
)
from waybook.journal._roles.memory import Limits
from waybook.journal._roles.memory_paths import ancestors
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
from waybook.memory.working._commands import ApplyPatch, UpdateDescription
from waybook.memory.working._patch import AddFile, DeleteFile, PatchError, apply_hunks, parse_patch
from waybook.memory.working._results import Edited, Failure, Patched, Value
from waybook.memory.working._state import MemoryState
from waybook.model import MemoryDelete, MemoryRename, MemoryWrite

MAX_DESCRIPTION_BYTES = 1_024


def decide_patching(
    command: ApplyPatch | UpdateDescription, state: MemoryState, limits: Limits, call_id: str | None
) -> Value | Write | Failure:
    """`apply_patch` and `update_description` (the port's dispatch over every command: `decide_command`)."""
    try:
        if isinstance(command, ApplyPatch):
            return _apply_patch(command, state, limits, call_id)
        return _update_description(command, state, limits, call_id)
    except RefusedError as refused:
        return refused.failure


def decide_changes(
    state: MemoryState,
    limits: Limits,
    *,
    writes: dict[str, str],
    deletes: tuple[str, ...],
    moves: tuple[tuple[str, str], ...],
    call_id: str | None,
    command: str,
    host: bool = False,
) -> Write | Failure:
    """Whole-file changes made elsewhere (a git commit), checked like a patch and planned as one batch.
    `host`: the host's own write (seed blocks), which may make notes read-only."""
    try:
        checked_deletes = tuple(existing_file(p, state) for p in deletes)
        checked_moves = tuple((existing_file(a, state), file_path(b, state)) for a, b in moves)
        for path in (*checked_deletes, *(a for a, _ in checked_moves)):
            writable(path, state)
        checked_writes: dict[str, str] = {}
        moved_to = {b for _, b in checked_moves}
        for raw, text in writes.items():
            path = file_path(raw, state) if raw not in moved_to else raw
            checked_text(text, "text")
            if path not in moved_to:
                writable(path, state)
            checked_writes[path] = text
        leaving = set(checked_deletes) | {a for a, _ in checked_moves}
        _no_new_conflicts(checked_writes, state, leaving)
        change = _Change(checked_writes, checked_deletes, checked_moves)
        bodies, evicted = _plan(state, limits, change, call_id, command, host=host)
    except RefusedError as refused:
        return refused.failure
    added = tuple(p for p in checked_writes if p not in state.files and p not in moved_to)
    updated = tuple(p for p in checked_writes if p in state.files)
    value = Patched(added, updated, checked_deletes, checked_moves, evicted)
    return Write(bodies, value)


def _update_description(
    command: UpdateDescription, state: MemoryState, limits: Limits, call_id: str | None
) -> Write:
    path = existing_file(command.path, state)
    description = command.description.strip()
    checked_text(description, "description")
    if not description or "\n" in description or "\r" in description:
        msg = "description must be one non-empty line of text"
        raise RefusedError("INVALID_ARGUMENT", msg, path)
    if byte_length(description) > MAX_DESCRIPTION_BYTES:
        msg = f"description is {byte_length(description)} bytes; the limit is {MAX_DESCRIPTION_BYTES}"
        raise RefusedError("INVALID_ARGUMENT", msg, path, limit=MAX_DESCRIPTION_BYTES)
    writable(path, state)
    old = state.files[path]
    text = with_description(old.text, description)
    bodies, evicted = _plan(state, limits, _Change({path: text}), call_id, "update_description")
    return Write(bodies, Edited(path, byte_length(text), evicted), content_digest(text))


def _apply_patch(command: ApplyPatch, state: MemoryState, limits: Limits, call_id: str | None) -> Write:
    checked_text(command.patch, "patch")
    try:
        ops = parse_patch(command.patch)
    except PatchError as problem:
        raise RefusedError(problem.code, str(problem), problem.path) from None
    touched: set[str] = set()
    writes: dict[str, str] = {}
    deletes: list[str] = []
    moves: list[tuple[str, str]] = []
    added: list[str] = []
    updated: list[str] = []
    for op in ops:
        source = checked_path(op.path)
        if source in touched:
            msg = f"{source} appears in more than one operation of the patch; give each file once"
            raise RefusedError("INVALID_ARGUMENT", msg, source)
        touched.add(source)
        if isinstance(op, AddFile):
            path = file_path(source, state)
            if state.is_file(path):
                msg = f"{path} already exists; update it with '*** Update File:' instead"
                raise RefusedError("ALREADY_EXISTS", msg, path)
            checked_text(op.text, "added text")
            writes[path] = op.text
            added.append(path)
        elif isinstance(op, DeleteFile):
            path = existing_file(source, state)
            writable(path, state)
            deletes.append(path)
        else:
            path = existing_file(source, state)
            writable(path, state)
            try:
                lines = apply_hunks(logical_lines(state.files[path].text), op.hunks, path)
            except PatchError as problem:
                raise RefusedError(problem.code, str(problem), problem.path) from None
            text = "".join(f"{line}\n" for line in lines)
            checked_text(text, "patched text")
            target = path
            if op.move_to is not None:
                target = file_path(op.move_to, state)
                if target in touched or state.is_file(target):
                    msg = f"{target} already exists; '*** Move to:' never replaces a file"
                    raise RefusedError("ALREADY_EXISTS", msg, target)
                touched.add(target)
                moves.append((path, target))
            writes[target] = text
            updated.append(path)
    _no_new_conflicts(writes, state, set(deletes) | {old for old, _ in moves})
    change = _Change(writes, tuple(deletes), tuple(moves))
    bodies, evicted = _plan(state, limits, change, call_id, "apply_patch")
    value = Patched(tuple(added), tuple(updated), tuple(deletes), tuple(moves), evicted)
    dropped = sorted(
        set().union(*(links_of(state.files[p].text) for p in deletes), *_dropped(state, writes, moves))
    )
    return Write(bodies, value, None, tuple(dropped))


def _dropped(
    state: MemoryState, writes: dict[str, str], moves: list[tuple[str, str]]
) -> list[frozenset[str]]:
    moved_from = {new: old for old, new in moves}
    found = []
    for path, text in writes.items():
        old = state.files.get(moved_from.get(path, path))
        if old is not None:
            found.append(links_of(old.text) - links_of(text))
    return found


def _no_new_conflicts(writes: dict[str, str], state: MemoryState, leaving: set[str]) -> None:
    """Two files of one patch never make a file and a directory of one path."""
    new_files = set(writes)
    for path in writes:
        for above in ancestors(path):
            if above in new_files or (state.is_file(above) and above not in leaving):
                msg = f"{above} is a file, so {path} cannot be created under it"
                raise RefusedError("PATH_CONFLICT", msg, path)


@attrs.frozen
class _Change:
    """A whole change, checked: the files written (path to text), deleted, and moved (old, new)."""

    writes: dict[str, str]
    deletes: tuple[str, ...] = ()
    moves: tuple[tuple[str, str], ...] = ()


def _plan(
    state: MemoryState,
    limits: Limits,
    change: _Change,
    call_id: str | None,
    command: str,
    *,
    host: bool = False,
) -> tuple[tuple[MemoryBody, ...], tuple[str, ...]]:
    """One batch for the whole change, evicting the earliest-written untouched files where needed."""
    writes, deletes, moves = change.writes, change.deletes, change.moves
    if not host:
        for path, text in writes.items():
            not_making_read_only(path, text)
    moved_from = {new: old for old, new in moves}
    leaving = set(deletes) | set(moved_from.values())
    sizes = {path: byte_length(text) for path, text in writes.items()}
    for path, size in sizes.items():
        fitting_file(path, size, limits)
    staying = {p: f for p, f in state.files.items() if p not in leaving and p not in writes}
    total = sum(f.size for f in staying.values()) + sum(sizes.values())
    count = len(staying) + len(writes)
    evicted = evictions(staying.values(), total, count, limits, what="the change", path=None, size=total)
    bodies: list[MemoryBody] = []
    if evicted:
        bodies.append(MemoryDelete(paths=tuple(evicted), reason="evict", call_id=call_id))
    if deletes:
        bodies.append(MemoryDelete(paths=deletes, reason="delete", call_id=call_id))
    if moves:
        bodies.append(MemoryRename(moves=moves, call_id=call_id))

    def growth(path: str) -> int:
        old = state.files.get(moved_from.get(path, path))
        return sizes[path] - (old.size if old else 0)

    # Shrinking writes first: the journal checks the limits after every record, and this order keeps
    # every intermediate total between the state before (within limits) and the final one.
    ordered = [p for p in writes if growth(p) <= 0] + [p for p in writes if growth(p) > 0]
    for path in ordered:
        text = writes[path]
        digest = content_digest(text)
        old = state.files.get(moved_from.get(path, path))
        if old is not None and old.digest == digest:
            continue  # an update that changes nothing writes nothing
        prior = old.digest if old else None
        bodies.append(
            MemoryWrite(path=path, text=text, digest=digest, prior=prior, command=command, call_id=call_id)
        )
    if not bodies:
        raise RefusedError("INVALID_ARGUMENT", "the change leaves every file as it is; nothing to write")
    return tuple(bodies), tuple(evicted)
