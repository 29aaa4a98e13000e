"""What a write checked, and what the writers that beat it touched: when a lost race may be rebased.

A port write is decided on one state and appended conditionally on that state's head. When another
writer appended first, the records it appended are read: if none of them touched a note (or directory)
the write names or changes, the write is decided again on the new state and retried (the other writer
changed only other notes, or wrote reflection bookkeeping, which touches no note); if one did, the
write is a CONFLICT. Pure: values in, values out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from waybook.journal._roles.memory_paths import is_under
from waybook.memory.working._checks import Write
from waybook.memory.working._commands import ApplyPatch, Command, Rename
from waybook.memory.working._patch import PatchError, parse_patch
from waybook.memory.working._results import Failure
from waybook.memory.working._state import MemoryState
from waybook.model import AnyBody, MemoryDelete, MemoryRename, MemoryWrite

REBASES: Final = 64
"""How many times a write that lost only to writers of other notes is decided again and retried."""


def paths_of(body: AnyBody) -> set[str]:
    """The note paths and directories a record touches (none for reflection bookkeeping)."""
    if isinstance(body, MemoryWrite):
        return {body.path}
    if isinstance(body, MemoryDelete):
        return {*body.paths, *body.directories}
    if isinstance(body, MemoryRename):
        return {p for move in (*body.moves, *body.directories) for p in move}
    return set()


def command_paths(command: Command) -> tuple[str, ...]:
    """The paths a command names: what it read to decide, whatever its write then touches."""
    if isinstance(command, Rename):
        return (command.old_path, command.new_path)
    if isinstance(command, ApplyPatch):
        try:
            operations = parse_patch(command.patch)
        except PatchError:
            return ()
        return tuple(p for op in operations for p in (op.path, getattr(op, "move_to", None)) if p)
    return (command.path,)  # every other command names one note or directory


def footprint(decision: Write) -> tuple[str, ...]:
    """The paths a planned write changes, evictions aside (an eviction is decided again on a rebase)."""
    touched: set[str] = set()
    for body in decision.bodies:
        if isinstance(body, MemoryDelete) and body.reason == "evict":
            continue
        touched |= paths_of(body)
    return tuple(sorted(touched))


def overlapping(touched: Iterable[str], named: Iterable[str]) -> str | None:
    """The first path of `named` that a touched path equals or lies above or below, or None."""
    others = set(touched)
    if not others:
        return None
    for path in sorted(set(named)):
        for other in others:
            if other == path or is_under(other, path) or is_under(path, other):
                return path
    return None


def expecting(state: MemoryState, expected: Mapping[str, str | None]) -> Failure | None:
    """CONFLICT unless every path holds the content digest the caller checked (None: no note there)."""
    for path in sorted(expected):
        held = state.files.get(path)
        found = held.digest if held is not None else None
        if found != expected[path]:
            want = str(expected[path])[:12]
            msg = f"{path} is not at digest {want} (found {str(found)[:12]}); nothing changed"
            return Failure("CONFLICT", msg, path, {"expected": expected[path], "actual": found})
    return None
