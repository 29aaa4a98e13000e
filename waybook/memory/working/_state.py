"""The memory projection: the files of a memory journal at a seq, and each path's revision history.

Pure like every projection: the same records always give the same files. Write order (`written`, the seq
of a file's latest content write) decides eviction: an overwrite refreshes it, a rename keeps it, a view
never touches it.
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping, MutableSet
from typing import Final, Literal

import attrs

from waybook.journal import byte_length, front_matter
from waybook.journal._roles.memory import MEMORY_ROLES, Limits, header_limits
from waybook.journal._roles.memory_paths import (
    ancestors,
    enter_directories,
    is_under,
    leave_directories,
)
from waybook.memory.working._shared import SharedMap, SharedSet, fork_map, fork_set
from waybook.model import (
    GENESIS_DIGEST,
    Header,
    MemoryAdoption,
    MemoryDelete,
    MemoryRename,
    MemoryWrite,
    Record,
)
from waybook.projections import check_next

Event = Literal["created", "superseded", "tombstoned", "recreated", "renamed"]


@attrs.frozen
class Revision:
    """One change to one path: what happened, at which seq, by which record, from which tool call."""

    seq: int
    record_id: str
    event: Event
    digest: str | None
    prior: str | None
    command: str
    call_id: str | None
    at: str
    other_path: str | None = None
    """For a rename, the path on the other side of the move."""


@attrs.frozen
class MemoryFile:
    path: str
    text: str
    digest: str
    size: int
    written: int
    revision: str
    read_only: bool = False


@attrs.define
class MemoryState:
    seq: int = 0
    digest: str = GENESIS_DIGEST
    journal_id: str | None = None
    scope: str | None = None
    role: str | None = None
    """The role the journal's header declares (`working_memory`, `canonical_memory`, ...)."""
    limits: Limits | None = None
    """The limits a memory journal's header declares (the journal refuses records that pass them)."""
    open_adoption: str | None = None
    """The adoption whose writes are still to come at this seq (a head inside one operation)."""
    adoption_left: int = 0
    files: MutableMapping[str, MemoryFile] = attrs.Factory(dict)
    history: MutableMapping[str, list[Revision]] = attrs.Factory(dict)
    total_bytes: int = 0
    directories: MutableMapping[str, int] = attrs.Factory(dict)
    """How many files are below each directory (derived from `files`, kept so lookups are O(1))."""
    kept: MutableSet[str] = attrs.Factory(set)
    """Every directory that exists, the root aside: a directory exists once a file was written or moved
    below it (or a directory was moved to it) until it is itself deleted or moved, so it outlives its last
    file, as a directory on disk does."""
    requests: MutableMapping[str, tuple[int, int]] = attrs.Factory(dict)
    """First and last seq of the records each request (or tool-call) id wrote: makes requests idempotent."""

    @staticmethod
    def shared() -> MemoryState:
        """An empty state whose containers fork in O(1) (waybook.memory.working._shared): `copy()` of it
        and of every state folded from it costs nothing, and each record folded onto a copy costs what it
        changes. The canonical pin's view is one (an advance folds only the records since the pin)."""
        return MemoryState(
            files=SharedMap(),
            history=SharedMap(),
            directories=SharedMap(),
            kept=SharedSet(),
            requests=SharedMap(),
        )

    def copy(self) -> MemoryState:
        """An independent copy (files are immutable values; the containers are new, or forked in O(1)
        where they are shared ones)."""
        if isinstance(self.history, SharedMap):
            history: MutableMapping[str, list[Revision]] = self.history.fork()
        else:
            history = {path: list(revisions) for path, revisions in self.history.items()}
        return MemoryState(
            seq=self.seq,
            digest=self.digest,
            journal_id=self.journal_id,
            scope=self.scope,
            role=self.role,
            limits=self.limits,
            open_adoption=self.open_adoption,
            adoption_left=self.adoption_left,
            files=fork_map(self.files),
            history=history,
            total_bytes=self.total_bytes,
            directories=fork_map(self.directories),
            kept=fork_set(self.kept),
            requests=fork_map(self.requests),
        )

    def is_file(self, path: str) -> bool:
        return path in self.files

    def is_directory(self, path: str) -> bool:
        return path == "/memories" or path in self.kept

    def directories_under(self, directory: str) -> list[str]:
        """The directories below `directory` (not itself), sorted: empty ones included."""
        return sorted(d for d in self.kept if is_under(d, directory) and d != directory)

    def put(self, file: MemoryFile) -> None:
        old = self.files.get(file.path)
        if old is not None:
            self.total_bytes -= old.size
        else:
            if file.path in self.kept:  # an empty directory is replaced (the journal rules allow it)
                _discard_all(self.kept, [file.path, *self.directories_under(file.path)])
            enter_directories(self.directories, self.kept, file.path)
        self.files[file.path] = file
        self.total_bytes += file.size

    def remove(self, path: str) -> MemoryFile | None:
        old = self.files.pop(path, None)
        if old is not None:
            self.total_bytes -= old.size
            leave_directories(self.directories, path)
        return old

    def drop_directory(self, directory: str) -> None:
        """The directory and every directory below it stop existing (their files are already gone)."""
        _discard_all(self.kept, [directory, *self.directories_under(directory)])

    def move_directory(self, old: str, new: str) -> None:
        """The directory and the directories below it move to `new` (their files move on their own)."""
        moving = [old, *self.directories_under(old)]
        _discard_all(self.kept, moving)
        _add_all(self.kept, [new + d[len(old) :] for d in moving])
        _add_all(self.kept, ancestors(new))

    def check_invariants(self) -> None:
        """Assert the derived indexes match the files; stress tests call this after every step."""
        assert self.total_bytes == sum(f.size for f in self.files.values())
        expected: dict[str, int] = {}
        for path in self.files:
            for directory in ancestors(path):
                expected[directory] = expected.get(directory, 0) + 1
        assert self.directories == expected
        assert set(expected) <= self.kept, "every directory above a file exists"
        assert all(set(ancestors(d)) <= self.kept for d in self.kept), "a directory's parents exist"
        assert not any(self.is_file(d) for d in self.kept), "no path is both a file and a directory"
        assert all(f.path == p for p, f in self.files.items())
        assert not any(self.is_file(d) for d in self.directories), "no path is both a file and a directory"

    def files_under(self, directory: str) -> list[MemoryFile]:
        return sorted((f for p, f in self.files.items() if is_under(p, directory)), key=lambda f: f.path)

    def revisions(self, path: str) -> tuple[Revision, ...]:
        return tuple(self.history.get(path, ()))


def _discard_all(members: MutableSet[str], items: Iterable[str]) -> None:
    for item in list(items):
        members.discard(item)


def _add_all(members: MutableSet[str], items: Iterable[str]) -> None:
    for item in items:
        members.add(item)


class MemoryProjection:
    """Folds a memory journal into its files and histories."""

    tag: Final = "waybook.projection.memory/1"

    def __init__(self, *, shared: bool = False) -> None:
        self.shared = shared
        """Fold into a state of O(1)-forking containers (MemoryState.shared): the same fold, the same
        files and histories, for a state that is copied and advanced often."""

    def initial(self) -> MemoryState:
        return MemoryState.shared() if self.shared else MemoryState()

    def apply(self, state: MemoryState, record: Record) -> MemoryState:
        check_next(state, record)
        body = record.body
        if isinstance(body, Header):
            state.journal_id = body.journal
            state.role = body.role
            if body.role in MEMORY_ROLES:
                state.limits = header_limits(body)
            scope = body.metadata.get("scope")
            state.scope = scope if isinstance(scope, str) else None
        elif isinstance(body, MemoryWrite):
            current = state.files.get(body.path)
            past = state.history.get(body.path)
            event: Event = "superseded" if current else ("recreated" if past else "created")
            read_only = front_matter(body.text).read_only
            size = byte_length(body.text)
            state.put(MemoryFile(body.path, body.text, body.digest, size, record.seq, record.id, read_only))
            self._log(state, body.path, record, event, body.digest, body.prior, body.command, body.call_id)
        elif isinstance(body, MemoryDelete):
            for path in body.paths:
                gone = state.remove(path)
                prior = gone.digest if gone else None
                self._log(state, path, record, "tombstoned", None, prior, body.reason, body.call_id)
            for directory in body.directories:
                state.drop_directory(directory)
        elif isinstance(body, MemoryRename):
            moved = {old: state.remove(old) for old, _ in body.moves}
            for old_directory, new_directory in body.directories:
                state.move_directory(old_directory, new_directory)
            for old, new in body.moves:
                file = moved.get(old)
                if file is None:
                    continue
                state.put(attrs.evolve(file, path=new))
                state.history[new] = [*state.history.get(old, [])]  # the file's past moves with it
                self._log(state, old, record, "renamed", None, file.digest, "rename", body.call_id, other=new)
                self._log(state, new, record, "renamed", file.digest, None, "rename", body.call_id, other=old)
        if isinstance(body, MemoryAdoption):
            state.open_adoption, state.adoption_left = body.operation, body.writes
        elif state.open_adoption is not None:
            state.adoption_left -= 1
            if state.adoption_left <= 0:
                state.open_adoption, state.adoption_left = None, 0
        call_id = getattr(body, "call_id", None)
        if isinstance(call_id, str):
            first, _ = state.requests.get(call_id, (record.seq, record.seq))
            state.requests[call_id] = (first, record.seq)
        state.seq = record.seq
        state.digest = record.digest
        return state

    @staticmethod
    def _log(
        state: MemoryState,
        path: str,
        record: Record,
        event: Event,
        digest: str | None,
        prior: str | None,
        command: str,
        call_id: str | None,
        *,
        other: str | None = None,
    ) -> None:
        revision = Revision(record.seq, record.id, event, digest, prior, command, call_id, record.at, other)
        history = state.history
        revisions = history.get(path)
        if revisions is None:
            history[path] = [revision]
        elif isinstance(history, SharedMap) and not history.fresh(path):
            history[path] = [*revisions, revision]  # the list is shared with a fork: copy it once
        else:
            revisions.append(revision)
