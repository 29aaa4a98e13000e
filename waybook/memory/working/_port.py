"""`Memory`: the agent-facing memory tool port over a working-memory journal (one journal per scope).

`execute(command)` takes one of the six commands (a typed command or the tool's JSON object) and returns
a `Result` value: `ok` with a typed value and, for writes, a receipt; or a `Failure` with a code. Caller
mistakes are never raised. Each write is one compare-and-append of the records the decision planned; a
writer that lost a race gets CONFLICT and nothing is half-applied.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import attrs

from waybook.journal import (
    DESCRIPTION_ADVICE,
    SessionJournal,
    byte_length,
    content_digest,
    lacks_description,
    new_id,
    utc_now,
    with_read_only,
)
from waybook.journal._roles.memory_paths import ROOT
from waybook.memory._copy import exact, items_of, sequence_of
from waybook.memory._errors import require_role
from waybook.memory.working._checks import HOST_DELETE, HOST_WRITE, Write
from waybook.memory.working._commands import NAMES, Command, CommandError, Create, check_call_id, parse
from waybook.memory.working._decide import DEFAULT_LIMITS, Limits, decide_command
from waybook.memory.working._patching import decide_changes
from waybook.memory.working._races import REBASES, command_paths, expecting, footprint, overlapping, paths_of
from waybook.memory.working._results import Deleted, Edited, Failure, Kind, Receipt, Result, Value, failed
from waybook.memory.working._state import MemoryProjection, MemoryState, Revision
from waybook.model import (
    GENESIS,
    ConflictError,
    CorruptJournalError,
    DecodeError,
    Head,
    Header,
    IntegrityError,
    JournalError,
    MemoryDelete,
    MemoryRuleError,
    MemoryWrite,
    NewRecord,
    StaleWriterError,
    StorageError,
    TornTailError,
)
from waybook.projections import LiveProjection, replay


class ScopeMismatchError(JournalError, ValueError):
    """A Memory port was given a journal that belongs to another scope (a host programming error).

    A JournalError like every error of waybook's journals; still a ValueError, as it was."""


class Memory:
    """The Memory port for one scope. Not thread-safe: one port per writer; several may share a journal."""

    def __init__(
        self,
        journal: SessionJournal,
        *,
        scope: str,
        limits: Limits = DEFAULT_LIMITS,
        clock: Callable[[], str] = utc_now,
        ids: Callable[[], str] = new_id,
        require_description: bool = False,
    ) -> None:
        """`require_description=True`: every note needs a non-empty front-matter description. A new
        journal's header says so (the journal then refuses such writes from any writer); on a journal
        whose header does not, this port still refuses its own."""
        self._journal = journal
        self._require_description = require_description
        self._scope = scope
        self._clock = clock
        self._ids = ids
        self._live = LiveProjection(MemoryProjection(), journal)
        if self._live.state.seq == 0:
            header = Header(
                journal=f"memory-{ids()}",
                creator="waybook.memory",
                metadata={
                    "kind": "working-memory",
                    "scope": scope,
                    "limits": limits.as_json(),
                    **({"require_description": True} if require_description else {}),
                },
                role="working_memory",
            )
            with contextlib.suppress(ConflictError):  # another port created it first; read its header below
                journal.append([NewRecord(id=ids(), at=clock(), body=header)], expected=GENESIS)
            self._live.refresh()
        require_role(journal.name, self._live.state.role, "working_memory")
        if self._live.state.scope != scope:
            msg = f"{journal.name} holds memory of scope {self._live.state.scope!r}, not {scope!r}"
            raise ScopeMismatchError(msg)
        self._limits = _within(limits, self._live.state.limits)

    @property
    def scope(self) -> str:
        return self._scope

    @property
    def limits(self) -> Limits:
        """The limits this port enforces: the `limits` given, lowered to the journal header's where the
        header declares smaller ones (a writer never passes what the journal itself would refuse)."""
        return self._limits

    def execute(self, command: Mapping[str, Any] | Command, *, call_id: str | None = None) -> Result:
        """Run one command. Never raises for a caller's mistake or a storage problem: see `Result`."""
        try:
            name, parsed = parse(command)
            check_call_id(call_id)
        except CommandError as problem:
            given = command.get("command") if isinstance(command, Mapping) else NAMES.get(type(command))
            return failed(str(given or "unknown"), problem.code, str(problem), **(problem.details or {}))

        def decide(state: MemoryState) -> Value | Write | Failure:
            return decide_command(parsed, state, self._limits, call_id)

        return self._write(name, decide, command_paths(parsed), call_id)

    # --- the programmatic store API (for hosts, not for the model) ------------------------------

    def state(self) -> MemoryState:
        """The current files and histories (refreshed from the journal)."""
        return self._refresh_state()

    def history(self, path: str) -> tuple[Revision, ...]:
        return self._refresh_state().revisions(path)

    def as_of(self, seq: int) -> MemoryState:
        """Memory as it was at `seq` (time travel by folding the prefix)."""
        return replay(MemoryProjection(), self._journal, at=seq)

    def supersede(self, path: str, text: str, *, expected_digest: str, call_id: str | None = None) -> Result:
        """Compare-and-supersede: replace `path` only if its content digest is still `expected_digest`.

        The digest is checked on the state the write is decided on, and the append is conditional on
        that state's head: a write to this note that lands in between is a CONFLICT, never overwritten."""
        path, text, expected_digest = exact(path), exact(text), exact(expected_digest)  # copied once
        if not (isinstance(path, str) and isinstance(text, str) and isinstance(expected_digest, str)):
            msg = "supersede takes a path, a text and the expected digest (strings)"
            return failed("create", "INVALID_ARGUMENT", msg)
        command = Create(path, text)
        try:
            check_call_id(call_id)
        except CommandError as problem:
            return failed("create", problem.code, str(problem))

        def decide(state: MemoryState) -> Value | Write | Failure:
            return expecting(state, {path: expected_digest}) or decide_command(
                command, state, self._limits, call_id
            )

        return self._write("create", decide, (path,), call_id)

    def create(self, path: str, text: str, *, exclusive: bool = False, call_id: str | None = None) -> Result:
        """Create (or, unless `exclusive`, overwrite) the note at `path`. With `exclusive=True` a note that
        exists is ALREADY_EXISTS, checked on the state the write is appended to."""
        return self.execute(Create(path, text, exclusive=exclusive), call_id=call_id)

    def write_changes(
        self,
        *,
        writes: Mapping[str, str],
        deletes: tuple[str, ...] = (),
        moves: tuple[tuple[str, str], ...] = (),
        call_id: str,
        command: str,
        expected: Mapping[str, str | None] | None = None,
        host: bool = False,
    ) -> Result:
        """Whole-file changes made outside the tool (for example a git commit on an exported memory
        repository), with the port's rules, limits and codes, as one atomic batch under `call_id`.

        `expected` maps paths to the content digest the caller checked (None: no note there); the write
        is refused with CONFLICT unless each still holds, on the very state the batch is appended to.
        `host=True` is the host's own write (seed blocks): it may make notes read-only."""
        copied = _changes(writes, deletes, moves, expected)  # each read once; the copies are checked
        if isinstance(copied, Result):
            return copied
        wanted, gone, moved, checked = copied

        def decide(state: MemoryState) -> Value | Write | Failure:
            return expecting(state, checked) or decide_changes(
                state,
                self._limits,
                writes=wanted,
                deletes=gone,
                moves=moved,
                call_id=call_id,
                command=command,
                host=host,
            )

        named = (*wanted, *gone, *(p for move in moved for p in move), *checked)
        return self._write(command, decide, named, call_id)

    # --- host power: read-only notes ---------------------------------------------------------------

    def set_read_only(self, path: str, read_only: bool, *, call_id: str | None = None) -> Result:
        """Make a note read-only (front matter `read_only: true`) or writable again. Host power: the
        agent's commands never set or clear it, and a read-only note refuses them."""

        path = exact(path)
        if not isinstance(path, str) or not isinstance(read_only, bool):
            return failed("set_read_only", "INVALID_ARGUMENT", "set_read_only takes a path and True or False")

        def decide(state: MemoryState) -> Value | Write | Failure:
            file = state.files.get(path)
            if file is None:
                return Failure("NOT_FOUND", f"{path} is not a note", path)
            if file.read_only == read_only:
                return Failure(
                    "INVALID_ARGUMENT", f"{path} is already {'read-only' if read_only else 'writable'}", path
                )
            text = with_read_only(file.text, read_only)
            body = MemoryWrite(
                path=path,
                text=text,
                digest=content_digest(text),
                prior=file.digest,
                command=HOST_WRITE,
                call_id=call_id,
            )
            return Write((body,), Edited(path, byte_length(text), ()), body.digest)

        return self._write("set_read_only", decide, (path,), call_id)

    def remove(self, path: str, *, call_id: str | None = None) -> Result:
        """Delete a note or a directory, read-only notes included: host power (`clear_all_memory`). The
        history stays in the journal."""
        path = exact(path)
        if not isinstance(path, str):
            return failed("remove", "INVALID_ARGUMENT", f"remove takes a path, not {type(path).__name__}")

        def decide(state: MemoryState) -> Value | Write | Failure:
            if path == ROOT:
                files = list(state.files.values())
                gone: tuple[str, ...] = tuple(
                    sorted({top_of(p) for p in [*state.files, *state.kept]} & state.kept)
                )
            elif state.is_file(path):
                files, gone = [state.files[path]], ()
            elif state.is_directory(path):
                files, gone = state.files_under(path), (path,)
            else:
                return Failure("NOT_FOUND", f"{path} does not exist", path)
            if not files and not gone:
                return Failure("NOT_FOUND", "memory holds nothing to remove", path)
            body = MemoryDelete(
                paths=tuple(f.path for f in files), reason=HOST_DELETE, call_id=call_id, directories=gone
            )
            kind: Kind = "file" if state.is_file(path) else "directory"
            return Write((body,), Deleted(path, kind, len(files), sum(f.size for f in files)))

        return self._write("remove", decide, (path,), call_id)

    # --- internals ----------------------------------------------------------------------------

    def _refresh_state(self) -> MemoryState:
        self._live.refresh()
        return self._live.state

    def _write(
        self,
        name: str,
        decide: Callable[[MemoryState], Value | Write | Failure],
        named: tuple[str, ...],
        call_id: str | None,
    ) -> Result:
        """Decide on the current state and append conditionally on its head. A lost race whose records
        touched only other notes (or no note: reflection bookkeeping) is decided again on the new state
        and retried, at most REBASES times, after a short random pause that grows with the losses (a
        writer in a tight loop beside this one would otherwise win every race); one that touched a
        note this write names or changes is a CONFLICT. A retry of a request already written (same
        `call_id`, same command) gets its receipt."""
        state = self._storage_guard(name, lambda: self._refresh_state())
        if isinstance(state, Result):
            return state
        if call_id is not None and call_id in state.requests:
            return self._replayed(name, decide, call_id, state)
        for _attempt in range(REBASES):
            decision = decide(state)
            if isinstance(decision, Failure):
                return Result(False, name, error=attrs.evolve(decision, command=name))
            if not isinstance(decision, Write):
                return Result(True, name, value=decision)
            if self._require_description:
                undescribed = _undescribed(decision, state)
                if undescribed is not None:
                    return Result(False, name, error=attrs.evolve(undescribed, command=name))
            head = Head(state.seq, state.digest)  # the state the decision was made on
            batch = [NewRecord(id=self._ids(), at=self._clock(), body=body) for body in decision.bodies]
            try:
                appended = self._journal.append(batch, expected=head)
            except StaleWriterError:
                lost = self._storage_guard(name, partial(self._catch_up, head))
                if isinstance(lost, Result):
                    return lost
                state, touched = lost
                clash = overlapping(touched, (*named, *footprint(decision)))
                if clash:
                    msg = (
                        f"another writer changed {clash} after this write read it; nothing was changed. "
                        "Read it again and retry"
                    )
                    return failed(name, "CONFLICT", msg, path=clash)
                _back_off(_attempt)
                continue
            except Exception as exc:  # the guard types every journal failure; anything else propagates
                guarded: Result = self._storage_guard(name, partial(_raise, exc))
                return guarded
            self._live.refresh()
            receipt = self._receipt(state, decision, appended, call_id)
            return Result(True, name, value=decision.value, receipt=receipt)
        msg = f"lost the compare-and-append race {REBASES} times to writers of other notes; retry"
        return failed(name, "CONFLICT", msg)

    def _catch_up(self, head: Head) -> tuple[MemoryState, set[str]]:
        """The state after the records that beat us, and the note paths (and directories) they touched."""
        touched: set[str] = set()
        for record in self._journal.read(after=head.seq):
            touched.update(paths_of(record.body))
            self._live.state = self._live.projection.apply(self._live.state, record)
        return self._live.state, touched

    def _receipt(self, state: MemoryState, decision: Write, appended: Any, call_id: str | None) -> Receipt:
        last = appended.records[-1]
        return Receipt(
            journal=state.journal_id or self._journal.name,
            seq=last.seq,
            digest=last.digest,
            content_digest=decision.content_digest,
            call_id=call_id,
            dropped_links=decision.dropped_links,
        )

    def _replayed(
        self,
        name: str,
        decide: Callable[[MemoryState], Value | Write | Failure],
        call_id: str,
        state: MemoryState,
    ) -> Result:
        """The same request sent again (a lost reply): decided again on the state before its records, the
        same command gives the same records, and the original receipt is returned; another command under a
        used id is INVALID_ARGUMENT."""
        first, last = state.requests[call_id]
        before = self._storage_guard(name, lambda: replay(MemoryProjection(), self._journal, at=first - 1))
        if isinstance(before, Result):
            return before
        decision = decide(before)
        records = list(self._journal.read(after=first - 1, limit=last - first + 1))
        if isinstance(decision, Write) and [r.body for r in records] == list(decision.bodies):
            receipt = Receipt(
                journal=state.journal_id or self._journal.name,
                seq=records[-1].seq,
                digest=records[-1].digest,
                content_digest=decision.content_digest,
                call_id=call_id,
                dropped_links=decision.dropped_links,
            )
            return Result(True, name, value=decision.value, receipt=receipt)
        msg = (
            f"call id {call_id!r} was already used in this journal for another write (seq {first}); every "
            "new call needs a new id, and a retry resends the same command"
        )
        return failed(name, "INVALID_ARGUMENT", msg, reused_request=call_id)

    def _storage_guard(self, name: str, action: Callable[[], Any]) -> Any:
        """Run a journal action; turn journal failures into the port's error results."""
        try:
            return action()
        except MemoryRuleError as exc:  # the journal's memory rules: the same codes as the port's own
            return failed(name, exc.code, str(exc), path=exc.path, **(exc.details or {}))
        except ConflictError as exc:
            return failed(
                name, "CONFLICT", f"another writer changed memory first; read again and retry ({exc})"
            )
        except (TornTailError, CorruptJournalError, DecodeError, IntegrityError) as exc:
            return failed(
                name, "UNSAFE_STORAGE", f"the memory journal is damaged; nothing was changed ({exc})"
            )
        except (StorageError, OSError) as exc:
            return failed(name, "STORAGE_ERROR", f"the memory journal could not be written ({exc})")
        except JournalError as exc:
            return failed(name, "STORAGE_ERROR", f"the memory journal refused the write ({exc})")


def _changes(
    writes: Any, deletes: Any, moves: Any, expected: Any
) -> tuple[dict[str, str], tuple[str, ...], tuple[tuple[str, str], ...], dict[str, str | None]] | Result:
    """`write_changes`' arguments, each read once and copied (exact strings), in the shapes it takes;
    a Result (INVALID_ARGUMENT) when one is not of that shape."""
    wanted, checked = items_of(writes), items_of(expected if expected is not None else {})
    gone, listed = sequence_of(deletes), sequence_of(moves)
    moved = (
        None
        if listed is None
        else tuple(sequence_of(m) if isinstance(m, tuple | list) else None for m in listed)
    )
    if (
        wanted is None
        or checked is None
        or gone is None
        or moved is None
        or any(m is None or len(m) != 2 for m in moved)
    ):
        msg = "write_changes takes writes and expected as mappings, deletes as paths and moves as path pairs"
        return failed("write_changes", "INVALID_ARGUMENT", msg)
    pairs = tuple((m[0], m[1]) for m in moved if m is not None)
    return dict(wanted), gone, pairs, dict(checked)


def _undescribed(decision: Write, state: MemoryState) -> Failure | None:
    """The port's own check of the description profile (`require_description=True`), for a journal whose
    header predates it: the journal refuses the same writes where its header says so."""
    for body in decision.bodies:
        if isinstance(body, MemoryWrite) and lacks_description(body.text):
            what = "a new note" if body.path not in state.files else "an edit that would leave it without one"
            msg = (
                f"{body.path}: {what}, and this memory requires a front-matter description; "
                f"{DESCRIPTION_ADVICE}"
            )
            return Failure("INVALID_ARGUMENT", msg, body.path, {"description_required": True})
    return None


def top_of(path: str) -> str:
    """The top-level entry of /memories that `path` is in."""
    return ROOT + "/" + path[len(ROOT) + 1 :].split("/", 1)[0]


def _raise(exc: BaseException) -> Any:
    raise exc


def _within(port: Limits, journal: Limits | None) -> Limits:
    """The port's limits, lowered to the journal's where the journal's header declares smaller ones."""
    if journal is None:
        return port
    return Limits(
        max_file_bytes=min(port.max_file_bytes, journal.max_file_bytes),
        max_total_bytes=min(port.max_total_bytes, journal.max_total_bytes),
        max_files=min(port.max_files, journal.max_files),
    )


def _back_off(losses: int) -> None:
    """Pause a random while before retrying after `losses` + 1 lost races: up to 0.1 ms doubled with each
    loss past the second, capped at 20 ms. Without it a writer whose decide-and-append is slower than a
    tight-looping neighbour's gap between appends loses in lockstep (256 times in a row, measured)."""
    if losses >= 2:
        time.sleep(random.uniform(0, min(0.0001 * 2 ** (losses - 2), 0.02)))
